/**
 * The Lua scripts behind every coordination decision: one script per operation, so each is atomic
 * across every process sharing the server, with windows and expiries on the server's clock (`TIME`).
 */
import type { Redis } from "ioredis";

/** The connection with the scripts defined as commands. */
export type ScriptedRedis = Redis & {
  ghTakePermit(key: string, limit: number, windowMs: number): Promise<unknown>;
  ghAcquireLease(key: string, owner: string, ttlMs: number): Promise<unknown>;
  ghReleaseLease(key: string, owner: string): Promise<unknown>;
  ghAdjustInFlight(key: string, delta: number, ttlMs: number): Promise<unknown>;
};

/** Defines the scripts as commands of `redis`. */
export function defineScripts(redis: Redis): ScriptedRedis {
  redis.defineCommand("ghTakePermit", { numberOfKeys: 1, lua: LUA_TAKE_PERMIT });
  redis.defineCommand("ghAcquireLease", { numberOfKeys: 1, lua: LUA_ACQUIRE_LEASE });
  redis.defineCommand("ghReleaseLease", { numberOfKeys: 1, lua: LUA_RELEASE_LEASE });
  redis.defineCommand("ghAdjustInFlight", { numberOfKeys: 1, lua: LUA_ADJUST_IN_FLIGHT });
  return redis as ScriptedRedis;
}

// --- Internal helpers ---

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
