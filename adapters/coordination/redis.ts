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
 */
import { Redis } from "ioredis";
import {
  DependencyUnavailableError,
  type CoordinationStore,
  type PermitResult,
  type Subscription,
  type SubscriptionHandlers,
} from "../ports.ts";

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
  const where = _describeUrl(options.url);
  const connectTimeoutMs = Math.max(1000, commandTimeoutMs * 4);

  const redis = new Redis(options.url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: connectTimeoutMs,
    socketTimeout: Math.max(2000, commandTimeoutMs * 4),
    // ioredis arms this timer on every disconnect(), even of a dead socket; 2 s (default) would keep
    // a process alive that long after a failed start or close.
    disconnectTimeout: DISCONNECT_TIMEOUT_MS,
    retryStrategy: (attempt: number) => Math.min(RECONNECT_BASE_MS * 2 ** Math.min(attempt - 1, 10), RECONNECT_MAX_MS),
  }) as _ScriptedRedis;
  let lastError = "";
  // Without a listener ioredis prints "Unhandled error event" for every failed reconnect.
  redis.on("error", (e: Error) => {
    lastError = e.message;
  });
  redis.defineCommand("ghTakePermit", { numberOfKeys: 1, lua: LUA_TAKE_PERMIT });
  redis.defineCommand("ghAcquireLease", { numberOfKeys: 1, lua: LUA_ACQUIRE_LEASE });
  redis.defineCommand("ghReleaseLease", { numberOfKeys: 1, lua: LUA_RELEASE_LEASE });
  redis.defineCommand("ghAdjustInFlight", { numberOfKeys: 1, lua: LUA_ADJUST_IN_FLIGHT });

  try {
    await _withDeadline(redis.connect(), connectTimeoutMs + commandTimeoutMs, "connect");
  } catch (e) {
    redis.disconnect(); // stop the background reconnect loop
    const err = e as Error;
    const timedOut = _isTimeout(err);
    // ioredis rejects connect() with "Connection is closed."; the socket's own error says why.
    const why = (timedOut ? err.message : lastError || err.message) || "unknown error";
    throw new DependencyUnavailableError("redis", `redis coordination: cannot connect to ${where}: ${why}`, timedOut ? "timeout" : "transport");
  }

  const subscriptions = _createSubscriptions(options.url, `${prefix}ch:`, {
    connectTimeoutMs,
    commandTimeoutMs,
    where,
  });

  const permitPrefix = `${prefix}permit:`;
  const leasePrefix = `${prefix}lease:`;
  const inFlightPrefix = `${prefix}inflight:`;
  let closed = false;

  return {
    kind: "redis",

    async takePermit(key: string, limit: number, windowMs: number): Promise<PermitResult> {
      _assertInt("limit", limit, 0);
      _assertInt("windowMs", windowMs, 1);
      let reply: unknown;
      try {
        reply = await redis.ghTakePermit(permitPrefix + key, limit, windowMs);
      } catch (e) {
        throw _unavailable(e, "takePermit");
      }
      if (!Array.isArray(reply) || reply.length !== 3 || !reply.every((n) => typeof n === "number")) {
        throw _invalid("takePermit", reply);
      }
      const [allowed, remaining, retryAfterMs] = reply as [number, number, number];
      return allowed === 1
        ? { allowed: true, remaining, retryAfterMs: 0 }
        : { allowed: false, remaining: 0, retryAfterMs: Math.max(1, retryAfterMs) };
    },

    async acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean> {
      _assertInt("ttlMs", ttlMs, 1);
      let reply: unknown;
      try {
        reply = await redis.ghAcquireLease(leasePrefix + key, owner, ttlMs);
      } catch (e) {
        throw _unavailable(e, "acquireLease");
      }
      if (reply !== 0 && reply !== 1) throw _invalid("acquireLease", reply);
      return reply === 1;
    },

    async releaseLease(key: string, owner: string): Promise<boolean> {
      let reply: unknown;
      try {
        reply = await redis.ghReleaseLease(leasePrefix + key, owner);
      } catch (e) {
        throw _unavailable(e, "releaseLease");
      }
      if (reply !== 0 && reply !== 1) throw _invalid("releaseLease", reply);
      return reply === 1;
    },

    async adjustInFlight(key: string, delta: number, ttlMs: number): Promise<number> {
      _assertInt("delta", delta, Number.MIN_SAFE_INTEGER);
      _assertInt("ttlMs", ttlMs, 1);
      let reply: unknown;
      try {
        reply = await redis.ghAdjustInFlight(inFlightPrefix + key, delta, ttlMs);
      } catch (e) {
        throw _unavailable(e, "adjustInFlight");
      }
      if (typeof reply !== "number") throw _invalid("adjustInFlight", reply);
      return reply;
    },

    async publish(channel: string, message: string): Promise<void> {
      try {
        await redis.publish(subscriptions.prefix + channel, message);
      } catch (e) {
        throw _unavailable(e, "publish");
      }
    },

    subscribe: (channel, handlers) => subscriptions.subscribe(channel, handlers),

    async ping(): Promise<void> {
      let reply: unknown;
      try {
        reply = await redis.ping();
      } catch (e) {
        throw _unavailable(e, "ping");
      }
      if (reply !== "PONG") throw _invalid("ping", reply);
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await Promise.all([_quit(redis), subscriptions.close()]);
    },
  };
}

// --- Internal helpers ---

/**
 * The subscriber connection and the handlers of each channel. Resubscribing is ours, not ioredis's
 * (`autoResubscribe: false`), so that `gap` is called only once the channels are subscribed again:
 * a message published after `gap` is never missed because of the outage that caused it.
 */
function _createSubscriptions(
  url: string,
  prefix: string,
  o: { connectTimeoutMs: number; commandTimeoutMs: number; where: string },
) {
  const channels = new Map<string, Set<SubscriptionHandlers>>();
  let connection: Promise<Redis> | null = null;
  let closed = false;

  const open = async (): Promise<Redis> => {
    const sub = new Redis(url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      autoResubscribe: false,
      autoResendUnfulfilledCommands: false,
      commandTimeout: o.commandTimeoutMs,
      connectTimeout: o.connectTimeoutMs,
      disconnectTimeout: DISCONNECT_TIMEOUT_MS,
      retryStrategy: (attempt: number) => Math.min(RECONNECT_BASE_MS * 2 ** Math.min(attempt - 1, 10), RECONNECT_MAX_MS),
    });
    let lastError = "";
    let readyBefore = false;
    sub.on("error", (e: Error) => {
      lastError = e.message;
    });
    sub.on("message", (full: string, message: string) => {
      const set = channels.get(full.slice(prefix.length));
      if (!set) return;
      for (const h of set) {
        try {
          h.message(message);
        } catch {
          // a subscriber's failure is its own
        }
      }
    });
    sub.on("ready", () => {
      if (!readyBefore) {
        readyBefore = true;
        return;
      }
      const names = [...channels.keys()].map((c) => prefix + c);
      const resubscribed = names.length > 0 ? sub.subscribe(...names) : Promise.resolve(0);
      resubscribed.then(
        () => {
          for (const set of channels.values()) for (const h of set) _safeGap(h);
        },
        () => sub.disconnect(true), // try again from a fresh connection
      );
    });
    try {
      await _withDeadline(sub.connect(), o.connectTimeoutMs + o.commandTimeoutMs, "connect");
    } catch (e) {
      sub.disconnect();
      const why = (_isTimeout(e) ? (e as Error).message : lastError || (e as Error).message) || "unknown error";
      throw new DependencyUnavailableError("redis", `redis subscribe: cannot connect to ${o.where}: ${why}`, "transport");
    }
    return sub;
  };

  return {
    prefix,

    async subscribe(channel: string, handlers: SubscriptionHandlers): Promise<Subscription> {
      if (closed) throw new DependencyUnavailableError("redis", "redis coordination store is closed", "transport");
      connection ??= open().catch((e) => {
        connection = null;
        throw e;
      });
      const sub = await connection;
      const own: SubscriptionHandlers = { message: (m) => handlers.message(m), gap: () => handlers.gap?.() };
      let set = channels.get(channel);
      if (!set) {
        set = new Set();
        channels.set(channel, set);
      }
      set.add(own);
      try {
        await sub.subscribe(prefix + channel);
      } catch (e) {
        set.delete(own);
        throw _unavailable(e, "subscribe");
      }
      let done = false;
      return {
        async close(): Promise<void> {
          if (done) return;
          done = true;
          set.delete(own);
          if (set.size > 0 || channels.get(channel) !== set) return;
          channels.delete(channel);
          await sub.unsubscribe(prefix + channel).catch(() => undefined);
        },
      };
    },

    async close(): Promise<void> {
      closed = true;
      channels.clear();
      const sub = await connection?.catch(() => null);
      if (sub) await _quit(sub);
    },
  };
}

function _safeGap(h: SubscriptionHandlers): void {
  try {
    h.gap?.();
  } catch {
    // a subscriber's failure is its own
  }
}

async function _quit(redis: Redis): Promise<void> {
  try {
    await _withDeadline(redis.quit(), QUIT_TIMEOUT_MS, "quit");
  } catch {
    // quit hung or the connection is down: drop the socket (also stops reconnecting)
    redis.disconnect();
  }
}

const RECONNECT_BASE_MS = 50;
const RECONNECT_MAX_MS = 1000;
const QUIT_TIMEOUT_MS = 1000;
const DISCONNECT_TIMEOUT_MS = 300;

type _ScriptedRedis = Redis & {
  ghTakePermit(key: string, limit: number, windowMs: number): Promise<unknown>;
  ghAcquireLease(key: string, owner: string, ttlMs: number): Promise<unknown>;
  ghReleaseLease(key: string, owner: string): Promise<unknown>;
  ghAdjustInFlight(key: string, delta: number, ttlMs: number): Promise<unknown>;
};

/**
 * Fixed window aligned on the server clock: window start = floor(now / windowMs) * windowMs.
 * The hash remembers which window its count belongs to, so a stale hash never leaks a count into
 * the next window. A refused take does not count. Returns {allowed 0|1, remaining, retryAfterMs}.
 */
const LUA_TAKE_PERMIT = `
local limit = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local windowStart = now - (now % windowMs)
local untilEnd = windowStart + windowMs - now
local state = redis.call('HMGET', KEYS[1], 'w', 'c')
local count = 0
if tonumber(state[1]) == windowStart then count = tonumber(state[2]) or 0 end
if count >= limit then return {0, 0, untilEnd} end
count = count + 1
redis.call('HSET', KEYS[1], 'w', string.format('%d', windowStart), 'c', count)
if count == 1 then redis.call('PEXPIRE', KEYS[1], untilEnd) end
return {1, limit - count, 0}
`;

/** SET NX PX; re-entrant: the same owner refreshes the ttl. Returns 1 when ARGV[1] holds the lease. */
const LUA_ACQUIRE_LEASE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** Compare-and-delete: only the holder releases. */
const LUA_RELEASE_LEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** INCRBY + PEXPIRE; never below zero (zero deletes the key). */
const LUA_ADJUST_IN_FLIGHT = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if v <= 0 then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return v
`;

function _assertInt(name: string, value: number, min: number): void {
  if (!(Number.isInteger(value) && value >= min)) {
    throw new RangeError(`coordination: ${name} must be an integer ≥ ${min === Number.MIN_SAFE_INTEGER ? "-∞" : min}, got ${value}`);
  }
}

function _isTimeout(e: unknown): boolean {
  const msg = e instanceof Error ? e.message : String(e);
  return /timed out|timeout|ETIMEDOUT/i.test(msg);
}

function _unavailable(e: unknown, op: string): DependencyUnavailableError {
  const err = e instanceof Error ? e : new Error(String(e));
  if (err.name === "ReplyError") {
    return new DependencyUnavailableError("redis", `redis ${op}: server error: ${err.message}`, "server_error");
  }
  return new DependencyUnavailableError("redis", `redis ${op}: ${err.message}`, _isTimeout(err) ? "timeout" : "transport");
}

function _invalid(op: string, reply: unknown): DependencyUnavailableError {
  const shown = JSON.stringify(reply) ?? String(reply);
  return new DependencyUnavailableError("redis", `redis ${op}: unexpected reply ${shown.slice(0, 100)}`, "invalid_response");
}

function _withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** The URL without credentials, for error messages (ARCHITECTURE.md §7.5: no secrets in logs). */
function _describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.hostname}:${u.port || "6379"}${u.pathname && u.pathname !== "/" ? u.pathname : ""}`;
  } catch {
    return "redis (unparseable url)";
  }
}
