/**
 * The simulator half of `npx gatehouse demo reset`: after the gateway restored its directory, the
 * regulator simulator's injected faults are cleared (`DELETE /__sim/faults`), so the demo answers as
 * documented again. Signed and transmitted invoices stay: the gateway's records refer to them.
 */
import { consola } from "./output.ts";
import type { Flags } from "./commands.ts";

export async function clearSimulatorFaults(flags: Flags): Promise<void> {
  const url = flags["sim-url"] ?? `http://127.0.0.1:${process.env.REGULATOR_SIM_PORT || 3100}`;
  try {
    const res = await fetch(new URL("/__sim/faults", url), { method: "DELETE", signal: AbortSignal.timeout(5_000) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    consola.success(`demo restored; the simulator at ${url} has no faults`);
  } catch (e) {
    consola.warn(`demo restored; the simulator at ${url} could not be cleared (${(e as Error).message}): pass --sim-url`);
  }
}
