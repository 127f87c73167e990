/**
 * Connection helpers of the Redis coordination store: the fail-closed ioredis settings, deadlines,
 * and the translation of ioredis failures into DependencyUnavailableError("redis", …).
 */
import type { Redis, RedisOptions } from "ioredis";
import { DependencyUnavailableError } from "../../ports.ts";

/** Settings shared by the command and subscriber connections (see ../redis.ts for why each). */
export function failClosedOptions(commandTimeoutMs: number, connectTimeoutMs: number): RedisOptions {
  return {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: connectTimeoutMs,
    // ioredis arms this timer on every disconnect(), even of a dead socket; 2 s (default) would keep
    // a process alive that long after a failed start or close.
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(RECONNECT_BASE_MS * 2 ** Math.min(attempt - 1, 10), RECONNECT_MAX_MS),
  };
}

/** Closes a connection politely, or drops it when quit hangs or the connection is down. */
export async function quitConnection(redis: Redis): Promise<void> {
  try {
    await withDeadline(redis.quit(), QUIT_TIMEOUT_MS, "quit");
  } catch {
    // quit hung or the connection is down: drop the socket (also stops reconnecting)
    redis.disconnect();
  }
}

export function assertInt(name: string, value: number, min: number): void {
  if (!(Number.isInteger(value) && value >= min)) {
    throw new RangeError(`coordination: ${name} must be an integer ≥ ${min === Number.MIN_SAFE_INTEGER ? "-∞" : min}, got ${value}`);
  }
}

export function isTimeout(e: unknown): boolean {
  const msg = e instanceof Error ? e.message : String(e);
  return /timed out|timeout|ETIMEDOUT/i.test(msg);
}

/** A failed command as the port's outage: "server_error" for a Redis error reply, else "timeout" or "transport". */
export function unavailable(e: unknown, op: string): DependencyUnavailableError {
  const err = e instanceof Error ? e : new Error(String(e));
  if (err.name === "ReplyError") {
    return new DependencyUnavailableError("redis", `redis ${op}: server error: ${err.message}`, "server_error");
  }
  return new DependencyUnavailableError("redis", `redis ${op}: ${err.message}`, isTimeout(err) ? "timeout" : "transport");
}

/** A reply of the wrong shape: "invalid_response". */
export function invalidReply(op: string, reply: unknown): DependencyUnavailableError {
  const shown = JSON.stringify(reply) ?? String(reply);
  return new DependencyUnavailableError("redis", `redis ${op}: unexpected reply ${shown.slice(0, 100)}`, "invalid_response");
}

export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** The URL without credentials, for error messages (ARCHITECTURE.md §7.5: no secrets in logs). */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port || "6379"}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "redis (unparseable url)";
  }
}

// --- Internal helpers ---

const RECONNECT_BASE_MS = 50;
const RECONNECT_MAX_MS = 1000;
const QUIT_TIMEOUT_MS = 1000;
const DISCONNECT_TIMEOUT_MS = 300;
