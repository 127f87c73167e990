/**
 * What both process entry points (boot/main.ts, boot/worker.ts) do around their work: load the
 * config or exit 1 listing every problem, report a startup failure without a stack, and stop
 * cleanly on SIGTERM/SIGINT (exit 0, or 1 when the shutdown itself fails). The npm scripts `exec`
 * the program, so no shell sits between npm and it: a shell that a Ctrl-C kills would make npm
 * report the interrupt (130) although the program drained and exited 0.
 */
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { describeError } from "../core/log.ts";
import { BootError } from "../core/route-table.ts";
import { isStorageOpenError } from "./open-sqlite.ts";

/** The validated config, or exit 1 with every problem on stderr (`program` prefixes the message). */
export function loadConfigOrExit(program: string): Config {
  try {
    return loadConfig();
  } catch (e) {
    process.stderr.write(`${program}: ${(e as Error).message}\n`);
    process.exit(1);
  }
}

/**
 * Runs `stop` once on the first SIGTERM or SIGINT, then exits 0 (1 when stopping fails). Later
 * signals are absorbed while it stops: a Ctrl-C reaches the program twice (the terminal signals the
 * whole process group, and npm forwards what it receives), and the second must not kill the drain.
 */
export function stopOnSignals(program: string, stop: (signal: string) => Promise<unknown>): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stop(signal).then(
      () => process.exit(0),
      (e) => {
        process.stderr.write(`${program}: shutdown failed: ${describeError(e).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}

/** A startup that failed: the boot checks' problems as they are, anything else by name and message; exit 1. */
export function exitOnStartupFailure(program: string): (e: unknown) => never {
  return (e) => {
    if (e instanceof BootError || isStorageOpenError(e)) process.stderr.write(`${program}: ${e.message}\n`);
    else process.stderr.write(`${program}: startup failed: ${describeError(e).name}: ${describeError(e).message}\n`);
    process.exit(1);
  };
}
