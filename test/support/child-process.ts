/**
 * Engine processes spawned by test helpers (mongo-server.ts, redis-server.ts): every tracked child
 * is SIGKILLed when this process exits or is interrupted, and `killAndWait` stops one for good.
 */
import type { ChildProcess } from "node:child_process";

/** Kills `child` with the test process (exit, SIGINT, SIGTERM, SIGHUP) unless it exited first. */
export function trackChild(child: ChildProcess): void {
  _installExitHook();
  _live.add(child);
  child.once("exit", () => _live.delete(child));
}

/** SIGKILLs `child` and resolves once its exit is seen (at once when it already exited). */
export function killAndWait(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    // An unref'd child would not hold the event loop open until its exit is seen.
    child.ref();
    child.once("exit", () => resolve());
    child.kill("SIGKILL");
  });
}

// --- Internal helpers ---

const _live = new Set<ChildProcess>();
let _exitHookInstalled = false;

function _installExitHook(): void {
  if (_exitHookInstalled) return;
  _exitHookInstalled = true;
  const killAll = (): void => {
    for (const c of _live) {
      try {
        c.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
    _live.clear();
  };
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.once(sig, () => {
      killAll();
      process.exit(128 + (sig === "SIGINT" ? 2 : sig === "SIGTERM" ? 15 : 1));
    });
  }
}
