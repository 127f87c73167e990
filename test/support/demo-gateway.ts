/**
 * `npm start` as a reader runs it: boot/main.ts on config/demo.json (the embedded SQLite store, the
 * regulator simulator, the workers in the same process), from the repository root, on free ports
 * (`PORT`, `REGULATOR_SIM_PORT`) and with its data in a temporary folder (`DATA_DIR`).
 */
import { join } from "node:path";
import { spawnTs, trackChild } from "./child-process.ts";
import { freePort } from "./ports.ts";
import { tempDir } from "./temp.ts";

export interface DemoGateway {
  port: number;
  simulatorPort: number;
  url: string;
  /** Everything the process printed so far. */
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export async function startDemoGateway(env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<DemoGateway> {
  const port = await freePort();
  const simulatorPort = await freePort();
  const dataDir = join(tempDir("demo-gateway"), "data");
  // The caller's env may name a config (a copy of the demo's); the runner's own settings never leak in.
  const inherited: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ["SQLITE_FILE", "GATEHOUSE_CONFIG", "STORAGE_DRIVER", "COORDINATION_DRIVER"]) delete inherited[name];
  const childEnv: NodeJS.ProcessEnv = { ...inherited, LOG_LEVEL: "warn", ...env, PORT: String(port), REGULATOR_SIM_PORT: String(simulatorPort), DATA_DIR: dataDir };
  const child = spawnTs("boot/main.ts", [], childEnv);
  trackChild(child);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const deadline = Date.now() + timeoutMs;
  while (!out.includes("Gatehouse listening on") && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!out.includes("Gatehouse listening on")) {
    child.kill("SIGKILL");
    throw new Error(`npm start did not listen:\n${out}`);
  }
  return {
    port,
    simulatorPort,
    url: `http://127.0.0.1:${port}`,
    output: () => out,
    stop: () => {
      if (child.exitCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
