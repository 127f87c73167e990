/**
 * The bench's child processes: every server the bench measures runs in its own process, started as
 * a user would start it (`node --import tsx <entry>`), so its CPU time and RSS are its own and
 * the load generator (autocannon, in the runner) never shares its event loop.
 *
 * - `spawnListening`: starts a process and resolves once one of its output streams prints the line
 *   that names its URL; a process that exits or stays silent for 30 s fails the start.
 * - `stopProcess`: SIGTERM (servers drain; a `--cpu-prof` profile is written on a clean exit),
 *   SIGKILL after 20 s.
 * - `processCpuMs`, `processRss`: user + system CPU time of every thread, and VmRSS / VmHWM, from
 *   /proc (Linux).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { WebSocket, type MessageEvent } from "undici";

export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Environment overrides of the gateway config that must not leak from the bench's shell into a child. */
const CONFIG_ENV = ["PORT", "HOST", "REGULATOR_SIM_PORT", "DATA_DIR", "MONGODB_URI", "REDIS_URL", "LOG_LEVEL", "LOG_FORMAT", "GATEHOUSE_CONFIG"];

export interface SpawnOptions {
  /** Which stream prints the ready line (default stdout). */
  readyOn?: "stdout" | "stderr";
  /** stdout of the child: "pipe" (read, then dropped after the ready line) or a file descriptor it writes to. */
  stdout?: "pipe" | number;
  /** Node flags before `--import tsx` (e.g. `--cpu-prof`). */
  nodeArgs?: readonly string[];
  /** Run through the tsx loader (TypeScript sources; default) or not (compiled JavaScript). */
  tsx?: boolean;
  env?: Record<string, string | undefined>;
}

export interface Listening {
  child: ChildProcess;
  url: string;
  /** What the process printed (stdout and stderr) up to its ready line. */
  output: string;
}

/** Spawns `node [nodeArgs] [--import tsx] <args>` and resolves once `ready` matches its output (group 1 = URL). */
export function spawnListening(what: string, args: readonly string[], ready: RegExp, options: SpawnOptions = {}): Promise<Listening> {
  const env: Record<string, string | undefined> = { ...process.env, ...options.env };
  for (const k of CONFIG_ENV) if (!options.env || !(k in options.env)) delete env[k];
  const readyOn = options.readyOn ?? "stdout";
  const loader = options.tsx === false ? [] : ["--import", "tsx"];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...loader, ...args], {
    cwd: ROOT,
    env,
    stdio: ["ignore", options.stdout ?? "pipe", "pipe"],
  });
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`bench: the ${what} did not start:\n${out.slice(-2000)}`)), 30_000);
    const fail = (e: Error) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      reject(e);
    };
    const stream = readyOn === "stdout" ? child.stdout : child.stderr;
    if (!stream) throw new Error(`bench: the ${what}'s ${readyOn} is not a pipe`);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      stream.off("data", onData);
      stream.resume(); // later output: read and dropped
      child.off("exit", onExit);
      resolve({ child, url: m[1]!, output: out });
    };
    const onExit = (code: number | null) => fail(new Error(`bench: the ${what} exited (${code}) before listening:\n${out.slice(-2000)}`));
    stream.on("data", onData);
    const other = readyOn === "stdout" ? child.stderr : child.stdout;
    other?.on("data", (d: Buffer) => (out += d.toString()));
    child.once("exit", onExit);
  });
}

/** SIGTERM (the process drains and exits, writing its CPU profile), SIGKILL after 20 s. */
export function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.once("exit", () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill("SIGTERM");
  });
}

/** User + system CPU time of a process (all its threads) in ms, from /proc (clock ticks of 10 ms). */
export function processCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime, stime (fields 14 and 15 of stat)
}

/**
 * User + system CPU time of each thread of a process in ms, keyed by thread id, with its name
 * (`comm`: Node's main thread is named after the process, worker threads and libuv's pool have names
 * of their own). The main thread's id is the process id.
 */
export function threadCpuMs(pid: number): Map<number, { name: string; ms: number }> {
  const out = new Map<number, { name: string; ms: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(Number(tid), { name, ms: (Number(fields[11]) + Number(fields[12])) * 10 });
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return out;
}

/**
 * CPU ms per thread between two `threadCpuMs` readings, busiest first: "main", and every other
 * thread as `<name>/<tid>` (Node names its worker threads and V8's helper threads all "node").
 */
export function threadCpuSplit(pid: number, before: Map<number, { name: string; ms: number }>, after: Map<number, { name: string; ms: number }>): Map<string, number> {
  const split = new Map<string, number>();
  for (const [tid, t] of after) {
    split.set(tid === pid ? "main" : `${t.name}/${tid}`, t.ms - (before.get(tid)?.ms ?? 0));
  }
  return new Map([...split].sort((a, b) => b[1] - a[1]));
}

/**
 * A full garbage collection in a process started with `--inspect=127.0.0.1:0`, through the DevTools
 * protocol (`HeapProfiler.collectGarbage`) on the inspector address it printed (`output` of
 * spawnListening). Resolves once the collection is done.
 */
export async function collectGarbage(output: string): Promise<void> {
  const url = /Debugger listening on (ws:\/\/\S+)/.exec(output)?.[1];
  if (!url) throw new Error("bench: the process has no inspector address (start it with --inspect=127.0.0.1:0)");
  const ws = new WebSocket(url);
  try {
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener("open", () => resolve(), { once: true });
      ws.addEventListener("error", () => reject(new Error("bench: the inspector did not accept the connection")), { once: true });
    });
    // Twice: the first collection's finalizers can free more for the second.
    for (const id of [1, 2]) {
      await new Promise<void>((resolve, reject) => {
        const onMessage = (e: MessageEvent): void => {
          if ((JSON.parse(String(e.data)) as { id?: number }).id !== id) return;
          ws.removeEventListener("message", onMessage);
          resolve();
        };
        ws.addEventListener("message", onMessage);
        ws.addEventListener("close", () => reject(new Error("bench: the inspector closed the connection")), { once: true });
        ws.send(JSON.stringify({ id, method: "HeapProfiler.collectGarbage" }));
      });
    }
  } finally {
    ws.close();
  }
}

/** VmRSS and its peak VmHWM in MiB. */
export function processRss(pid: number): { rssMiB: number; peakMiB: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
  return { rssMiB: kb("VmRSS") / 1024, peakMiB: kb("VmHWM") / 1024 };
}
