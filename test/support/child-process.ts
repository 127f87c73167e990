/**
 * Child processes of tests. Engine processes spawned by test helpers (mongo-server.ts,
 * redis-server.ts): every tracked child is SIGKILLed when this process exits or is interrupted, and
 * `killAndWait` stops one for good. Our own TypeScript programs: `spawnTs`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/**
 * Spawns `node --import tsx <entry> ...args` in the repository root, stdout and stderr piped: the
 * program in one process, as `npm start` and `npm run worker` run it, so a signal reaches the
 * program itself. Not the tsx CLI: it runs the program in a second process and relays signals,
 * SIGKILLing a child that does not acknowledge one within 30 ms (a busy event loop on a loaded
 * machine) and exiting 143, so a graceful stop would depend on the machine's load.
 */
export function spawnTs(entry: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = process.env) {
  return spawn(process.execPath, ["--import", "tsx", entry, ...args], { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
}

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
