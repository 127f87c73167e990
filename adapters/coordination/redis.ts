/**
 * Redis coordination (ARCHITECTURE.md §5–§6, scale-out): every decision is one Lua script, so it is
 * atomic across all gateway processes sharing the server, and windows use the SERVER's clock (`TIME`),
 * so processes with skewed clocks still agree.
 *
 * Fails closed (spec §8): while Redis is unreachable or slow, every call rejects quickly with
 * `DependencyUnavailableError("redis", …, "transport" | "timeout" | "server_error" | "invalid_response")`
 * and never answers "allowed". ioredis is set up for that:
 *   - `enableOfflineQueue: false`: while disconnected, commands fail at once instead of queueing;
 *   - `maxRetriesPerRequest: 0`, `autoResendUnfulfilledCommands: false`: a command in flight when the
 *     connection drops is rejected and never replayed later (the caller already saw it fail);
 *   - `commandTimeout`: a slow or hung server rejects the call after `commandTimeoutMs`;
 *   - `socketTimeout`: a connection that stops answering is torn down and re-established;
 *   - `retryStrategy`: reconnects in the background with capped exponential backoff, so the store
 *     works again when Redis comes back, without restarting the process.
 *
 * Keys: `<keyPrefix>permit:<key>` (hash {w: window start, c: count}), `<keyPrefix>lease:<key>`
 * (string owner), `<keyPrefix>inflight:<key>` (integer). Every key carries a TTL.
 *
 * Publish/subscribe: PUBLISH on the command connection to `<keyPrefix>ch:<channel>`; subscribers share
 * one second connection (a subscribed Redis connection runs no other command), opened on the first
 * `subscribe`. Redis pub/sub is at most once: while that connection is down messages are lost, so
 * after it reconnects it subscribes again to every channel and then calls each subscriber's `gap`. Requires Redis ≥ 5
 * (TIME before writes in a script needs effects replication, the default since 5.0).
 *
 * The parts, under ./redis/: scripts (the Lua scripts), subscriptions (the subscriber connection),
 * connection (settings, deadlines, error translation).
 */
import { Redis } from "ioredis";
import { DependencyUnavailableError, type CoordinationStore, type PermitResult } from "../ports.ts";
import { assertInt, describeUrl, failClosedOptions, invalidReply, isTimeout, quitConnection, unavailable, withDeadline } from "./redis/connection.ts";
import { defineScripts, type ScriptedRedis } from "./redis/scripts.ts";
import { createSubscriptions, type RedisSubscriptions } from "./redis/subscriptions.ts";

export interface RedisCoordinationOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  url: string;
  /** Prepended to every key. Default `"gh:"`. */
  keyPrefix?: string;
  /** Per-command deadline; a call rejects with failureClass "timeout" after it. Default 500. */
  commandTimeoutMs?: number;
  /**
   * Accepted for option parity with the memory store; NOT used for decisions: windows and expiries
   * use the Redis server's clock so that every process agrees.
   */
  clock?: () => number;
}

export async function createRedisCoordination(options: RedisCoordinationOptions): Promise<CoordinationStore> {
  const prefix = options.keyPrefix ?? "gh:";
  const commandTimeoutMs = options.commandTimeoutMs ?? 500;
  if (!(Number.isInteger(commandTimeoutMs) && commandTimeoutMs > 0)) {
    throw new RangeError(`redis coordination: commandTimeoutMs must be a positive integer, got ${commandTimeoutMs}`);
  }
  const where = describeUrl(options.url);
  const connectTimeoutMs = Math.max(1000, commandTimeoutMs * 4);
  const redis = await _connect(options.url, where, commandTimeoutMs, connectTimeoutMs);
  const s: _RedisState = {
    redis,
    subscriptions: createSubscriptions(options.url, `${prefix}ch:`, { connectTimeoutMs, commandTimeoutMs, where }),
    permitPrefix: `${prefix}permit:`,
    leasePrefix: `${prefix}lease:`,
    inFlightPrefix: `${prefix}inflight:`,
    closed: false,
  };

  return {
    kind: "redis",
    takePermit: (key, limit, windowMs) => _takePermit(s, key, limit, windowMs),
    acquireLease: (key, owner, ttlMs) => _acquireLease(s, key, owner, ttlMs),
    releaseLease: (key, owner) => _releaseLease(s, key, owner),
    adjustInFlight: (key, delta, ttlMs) => _adjustInFlight(s, key, delta, ttlMs),
    async publish(channel: string, message: string): Promise<void> {
      try {
        await redis.publish(s.subscriptions.prefix + channel, message);
      } catch (e) {
        throw unavailable(e, "publish");
      }
    },
    subscribe: (channel, handlers) => s.subscriptions.subscribe(channel, handlers),
    async ping(): Promise<void> {
      let reply: unknown;
      try {
        reply = await redis.ping();
      } catch (e) {
        throw unavailable(e, "ping");
      }
      if (reply !== "PONG") throw invalidReply("ping", reply);
    },
    async close(): Promise<void> {
      if (s.closed) return;
      s.closed = true;
      await Promise.all([quitConnection(redis), s.subscriptions.close()]);
    },
  };
}

// --- Internal helpers ---

interface _RedisState {
  readonly redis: ScriptedRedis;
  readonly subscriptions: RedisSubscriptions;
  readonly permitPrefix: string;
  readonly leasePrefix: string;
  readonly inFlightPrefix: string;
  closed: boolean;
}

/** The command connection, with the scripts defined; a failure to connect stops its reconnect loop. */
async function _connect(url: string, where: string, commandTimeoutMs: number, connectTimeoutMs: number): Promise<ScriptedRedis> {
  const conn = new Redis(url, { ...failClosedOptions(commandTimeoutMs, connectTimeoutMs), socketTimeout: Math.max(2000, commandTimeoutMs * 4) });
  let lastError = "";
  // Without a listener ioredis prints "Unhandled error event" for every failed reconnect.
  conn.on("error", (e: Error) => {
    lastError = e.message;
  });
  const redis = defineScripts(conn);
  try {
    await withDeadline(redis.connect(), connectTimeoutMs + commandTimeoutMs, "connect");
  } catch (e) {
    redis.disconnect(); // stop the background reconnect loop
    const err = e as Error;
    const timedOut = isTimeout(err);
    // ioredis rejects connect() with "Connection is closed."; the socket's own error says why.
    const why = (timedOut ? err.message : lastError || err.message) || "unknown error";
    throw new DependencyUnavailableError("redis", `redis coordination: cannot connect to ${where}: ${why}`, timedOut ? "timeout" : "transport");
  }
  return redis;
}

async function _takePermit(s: _RedisState, key: string, limit: number, windowMs: number): Promise<PermitResult> {
  assertInt("limit", limit, 0);
  assertInt("windowMs", windowMs, 1);
  let reply: unknown;
  try {
    reply = await s.redis.ghTakePermit(s.permitPrefix + key, limit, windowMs);
  } catch (e) {
    throw unavailable(e, "takePermit");
  }
  if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((n) => typeof n === "number")) {
    throw invalidReply("takePermit", reply);
  }
  const [allowed, remaining, retryAfterMs] = reply as [number, number, number];
  return allowed === 1
    ? { allowed: true, remaining, retryAfterMs: 0 }
    : { allowed: false, remaining: 0, retryAfterMs: Math.max(1, retryAfterMs) };
}

async function _acquireLease(s: _RedisState, key: string, owner: string, ttlMs: number): Promise<boolean> {
  assertInt("ttlMs", ttlMs, 1);
  let reply: unknown;
  try {
    reply = await s.redis.ghAcquireLease(s.leasePrefix + key, owner, ttlMs);
  } catch (e) {
    throw unavailable(e, "acquireLease");
  }
  if (reply !== 0 && reply !== 1) throw invalidReply("acquireLease", reply);
  return reply === 1;
}

async function _releaseLease(s: _RedisState, key: string, owner: string): Promise<boolean> {
  let reply: unknown;
  try {
    reply = await s.redis.ghReleaseLease(s.leasePrefix + key, owner);
  } catch (e) {
    throw unavailable(e, "releaseLease");
  }
  if (reply !== 0 && reply !== 1) throw invalidReply("releaseLease", reply);
  return reply === 1;
}

async function _adjustInFlight(s: _RedisState, key: string, delta: number, ttlMs: number): Promise<number> {
  assertInt("delta", delta, Number.MIN_SAFE_INTEGER);
  assertInt("ttlMs", ttlMs, 1);
  let reply: unknown;
  try {
    reply = await s.redis.ghAdjustInFlight(s.inFlightPrefix + key, delta, ttlMs);
  } catch (e) {
    throw unavailable(e, "adjustInFlight");
  }
  if (typeof reply !== "number") throw invalidReply("adjustInFlight", reply);
  return reply;
}
