/**
 * A real Redis server for adapter tests (STYLE.md: adapter contracts run against real servers).
 *
 * - `REDIS_URL` set: that server is used as is; `stop()` is a no-op, `kill()` / `restart()` / `pause()` throw
 *   (an outage cannot be simulated on a server we do not own). Tests should use a unique key prefix.
 * - Otherwise a private `redis-server` is spawned on a free 127.0.0.1 port, without persistence.
 *   `kill()` SIGKILLs it (an outage), `restart()` starts it again on the SAME port (empty data set),
 *   `pause()` / `resume()` SIGSTOP / SIGCONT it (a hung server).
 * - No `redis-server` binary: throws when `CI === "true"` (CI must fail loudly), otherwise resolves
 *   `{ skip: reason }` so the caller can report a visible skip.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import { suite } from "uvu";
import { killAndWait, trackChild } from "./child-process.ts";
import { freePort } from "./ports.ts";

export interface RedisServerHandle {
  url: string;
  port: number;
  /** True when the server was spawned by this helper (kill/restart are supported). */
  owned: boolean;
  /** Stops the server for good (no-op for an external `REDIS_URL`). */
  stop(): Promise<void>;
  /** SIGKILLs the server to simulate an outage. */
  kill(): Promise<void>;
  /** Starts the server again on the same port after `kill()`. */
  restart(): Promise<void>;
  /** SIGSTOPs the server: connections stay open but nothing answers (a hung server). */
  pause(): Promise<void>;
  /** SIGCONTs a paused server. */
  resume(): Promise<void>;
}

export interface RedisServerSkip {
  skip: string;
}

export async function startRedisServer(): Promise<RedisServerHandle | RedisServerSkip> {
  const external = process.env.REDIS_URL;
  if (external) return _externalHandle(external);

  const bin = _findRedisServer();
  if (!bin) {
    const reason = "redis-server not found on PATH or at /usr/bin/redis-server (install it: apt-get install redis-server)";
    if (process.env.CI === "true") throw new Error(`[redis-server] ${reason}; CI=true so this is a failure, not a skip`);
    return { skip: reason };
  }

  const port = await freePort();
  let child: ChildProcess | null = await _spawnRedis(bin, port);

  const killChild = async (): Promise<void> => {
    const c = child;
    child = null;
    if (c) await killAndWait(c);
  };

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    owned: true,
    stop: killChild,
    kill: killChild,
    async restart() {
      if (child) await killChild();
      child = await _spawnRedis(bin, port);
    },
    async pause() {
      child?.kill("SIGSTOP");
    },
    async resume() {
      child?.kill("SIGCONT");
    },
  };
}

export function isRedisSkip(x: RedisServerHandle | RedisServerSkip): x is RedisServerSkip {
  return "skip" in x;
}

/**
 * Makes a missing redis-server visible: prints `SKIPPED redis <what>: <reason>` and runs an uvu
 * suite whose only test is skipped (the summary shows `Skipped: 1`, no test runs).
 */
export function reportRedisSkip(what: string, reason: string): void {
  process.stdout.write(`SKIPPED redis ${what}: ${reason}\n`);
  const s = suite(`redis ${what}`);
  s.skip(`redis ${what} (${reason})`, () => {});
  s.run();
}

// --- Internal helpers ---

const READY_TIMEOUT_MS = 10_000;

function _externalHandle(url: string): RedisServerHandle {
  const parsed = new URL(url);
  const unsupported = async (): Promise<void> => {
    throw new Error("[redis-server] kill()/restart()/pause()/resume() are not supported with an external REDIS_URL");
  };
  return {
    url,
    port: Number(parsed.port || 6379),
    owned: false,
    stop: async () => {},
    kill: unsupported,
    restart: unsupported,
    pause: unsupported,
    resume: unsupported,
  };
}

function _findRedisServer(): string | null {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  for (const candidate of [...dirs.map((d) => join(d, "redis-server")), "/usr/bin/redis-server"]) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

async function _spawnRedis(bin: string, port: number): Promise<ChildProcess> {
  const args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no"];
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child);

  let output = "";
  const ready = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      output += d.toString();
      if (output.includes("Ready to accept connections")) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("error", reject);
    child.once("exit", (code, signal) =>
      reject(new Error(`[redis-server] exited before ready (code ${code}, signal ${signal}):\n${output.slice(-2000)}`)),
    );
  });
  // Belt and braces: some builds log differently; a PING answering PONG also counts as ready.
  const polling = { active: true };
  const pinged = _pollPing(port, polling);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`[redis-server] not ready after ${READY_TIMEOUT_MS} ms:\n${output.slice(-2000)}`)),
      READY_TIMEOUT_MS,
    );
  });
  try {
    await Promise.race([ready, pinged, timeout]);
  } catch (e) {
    await killAndWait(child);
    throw e;
  } finally {
    clearTimeout(timer);
    polling.active = false;
  }
  // Stop buffering output once ready (keep draining the pipes so the child never blocks on them).
  child.stdout?.removeAllListeners("data").resume();
  child.stderr?.removeAllListeners("data").resume();
  return child;
}

async function _pollPing(port: number, polling: { active: boolean }): Promise<void> {
  while (polling.active) {
    if (await _pingOnce(port)) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  // Cancelled: never resolve (the race has already been decided).
  await new Promise(() => {});
}

function _pingOnce(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect({ port, host: "127.0.0.1" });
    let buf = "";
    const done = (ok: boolean): void => {
      sock.destroy();
      resolve(ok);
    };
    sock.setTimeout(200, () => done(false));
    sock.once("error", () => done(false));
    sock.once("connect", () => sock.write("PING\r\n"));
    sock.on("data", (d) => {
      buf += d.toString();
      if (buf.includes("\r\n")) done(buf.startsWith("+PONG"));
    });
  });
}
