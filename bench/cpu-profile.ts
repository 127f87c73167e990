/**
 * A CPU profile of this process over a stretch of a scenario (the measured requests only, not the
 * seeding or start-up), through the inspector: for the scenarios whose gateway runs in the bench's
 * own process. Read the file with bench/profile-top.ts, profile-share.ts or profile-callers.ts.
 */
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector/promises";

export interface RunningProfile {
  /** Stops sampling and writes the profile to the file. */
  stop(): Promise<void>;
}

/** Starts sampling when `file` is given (null otherwise); `intervalUs` is V8's sampling interval. */
export async function startCpuProfile(file: string | undefined, intervalUs?: number): Promise<RunningProfile | null> {
  if (!file) return null;
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  if (intervalUs !== undefined) await session.post("Profiler.setSamplingInterval", { interval: intervalUs });
  await session.post("Profiler.start");
  return {
    async stop() {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
