/**
 * Gateway processes for multi-process tests: each runs test/support/gateway-process.ts (the
 * production composition plus the test plugins) on a config file and a free port.
 */
import type { ChildProcess } from "node:child_process";
import { spawnTs } from "./child-process.ts";

export interface GatewayProcesses {
  urls: string[];
  /** SIGKILLs process `index` (a crash: no drain) and waits for its exit. */
  kill(index: number): Promise<void>;
  /** SIGTERMs every process (they drain) and waits for all of them to exit. */
  stop(): Promise<void>;
}

export async function startGatewayProcesses(configPath: string, count: number): Promise<GatewayProcesses> {
  const children: ChildProcess[] = [];
  const stop = () =>
    Promise.all(
      children.map(
        (c) =>
          new Promise((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve(null);
            c.on("exit", resolve);
            c.kill("SIGTERM");
          }),
      ),
    ).then(() => {});
  const urls: string[] = [];
  try {
    for (let i = 0; i < count; i++) {
      // One process (spawnTs): a signal reaches the server, so kill() is a real crash.
      const child = spawnTs("test/support/gateway-process.ts", [configPath]);
      children.push(child);
      urls.push(await _listening(child));
    }
  } catch (e) {
    await stop();
    throw e;
  }
  const kill = (index: number) =>
    new Promise<void>((resolve) => {
      const c = children[index];
      if (!c || c.exitCode !== null || c.signalCode !== null) return resolve();
      c.on("exit", () => resolve());
      c.kill("SIGKILL");
    });
  return { urls, stop, kill };
}

// --- Internal helpers ---

function _listening(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`gateway process did not start:\n${out}`)), 30_000);
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.on("data", (d) => (out += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway process exited ${code}:\n${out}`));
    });
  });
}
