/**
 * In-process coordination (ARCHITECTURE.md §5, embedded default): fixed-window permits, leases with
 * expiry and in-flight gauges with a ttl, all in three Maps of this process, and publish/subscribe
 * between the subscribers of this process (delivered on a microtask, never inside `publish`). Correct for exactly one
 * process; scale-out uses the Redis adapter (same contract, test/contracts/coordination.contract.ts).
 *
 * Hot path (quota stage on every request): one Map lookup, in-place mutation of a reused entry, one
 * small result object, answered synchronously through `takePermitNow` (no promise). Expired entries are swept lazily when a map grows past a threshold (amortised
 * O(1)) and by an unref'd interval timer, so idle keys never accumulate.
 */
import {
  DependencyUnavailableError,
  type CoordinationStore,
  type PermitResult,
  type Subscription,
  type SubscriptionHandlers,
} from "../ports.ts";

export interface MemoryCoordinationOptions {
  /** Epoch milliseconds; injectable for tests. Defaults to `Date.now`. */
  clock?: () => number;
}

export function createMemoryCoordination(options: MemoryCoordinationOptions = {}): CoordinationStore {
  const s: _MemoryState = {
    clock: options.clock ?? Date.now,
    permits: new Map(),
    leases: new Map(),
    gauges: new Map(),
    channels: new Map(),
    sweepAt: { permits: SWEEP_MIN_SIZE, leases: SWEEP_MIN_SIZE, gauges: SWEEP_MIN_SIZE },
    closed: false,
    timer: null,
  };
  s.timer = setInterval(() => _sweepAll(s), SWEEP_INTERVAL_MS);
  s.timer.unref();

  return {
    kind: "memory",

    takePermit(key: string, limit: number, windowMs: number): Promise<PermitResult> {
      try {
        return Promise.resolve(_takePermitNow(s, key, limit, windowMs));
      } catch (e) {
        return Promise.reject(e);
      }
    },
    /** takePermit, synchronously (the in-process fast path of the port): throws where takePermit rejects. */
    takePermitNow: (key, limit, windowMs) => _takePermitNow(s, key, limit, windowMs),
    acquireLease: (key, owner, ttlMs) => _acquireLease(s, key, owner, ttlMs),
    releaseLease: (key, owner) => _releaseLease(s, key, owner),
    adjustInFlight: (key, delta, ttlMs) => _adjustInFlight(s, key, delta, ttlMs),
    publish: (channel, message) => _publish(s, channel, message),
    subscribe: (channel, handlers) => _subscribe(s, channel, handlers),

    ping(): Promise<void> {
      return s.closed ? _closedError() : RESOLVED_VOID;
    },

    close(): Promise<void> {
      s.closed = true;
      if (s.timer) clearInterval(s.timer);
      s.timer = null;
      s.permits.clear();
      s.leases.clear();
      s.gauges.clear();
      s.channels.clear();
      return RESOLVED_VOID;
    },
  };
}

// --- Internal helpers ---

/** The store's state: three maps of expiring entries, the channels, and the sweep thresholds. */
interface _MemoryState {
  readonly clock: () => number;
  readonly permits: Map<string, _PermitEntry>;
  readonly leases: Map<string, _LeaseEntry>;
  readonly gauges: Map<string, _GaugeEntry>;
  readonly channels: Map<string, Set<SubscriptionHandlers>>;
  /** Per map, the size past which an insert sweeps it. */
  readonly sweepAt: { permits: number; leases: number; gauges: number };
  closed: boolean;
  timer: NodeJS.Timeout | null;
}

function _takePermitNow(s: _MemoryState, key: string, limit: number, windowMs: number): PermitResult {
  if (s.closed) throw _closed();
  if (!(Number.isInteger(limit) && limit >= 0)) throw _range("limit", limit, "an integer ≥ 0");
  if (!(Number.isInteger(windowMs) && windowMs > 0)) throw _range("windowMs", windowMs);
  const now = s.clock();
  const windowStart = now - (now % windowMs);
  const windowEnd = windowStart + windowMs;
  let e = s.permits.get(key);
  if (e === undefined) {
    e = { windowStart, expiresAt: windowEnd, count: 0 };
    s.permits.set(key, e);
    if (s.permits.size > s.sweepAt.permits) s.sweepAt.permits = _sweepAndResize(s.permits, now);
  } else if (e.windowStart !== windowStart) {
    e.windowStart = windowStart;
    e.expiresAt = windowEnd;
    e.count = 0;
  }
  if (e.count >= limit) return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(windowEnd - now)) };
  e.count++;
  return { allowed: true, remaining: limit - e.count, retryAfterMs: 0 };
}

function _acquireLease(s: _MemoryState, key: string, owner: string, ttlMs: number): Promise<boolean> {
  if (s.closed) return _closedError();
  if (!(Number.isInteger(ttlMs) && ttlMs > 0)) return _rangeError("ttlMs", ttlMs);
  const now = s.clock();
  const e = s.leases.get(key);
  if (e === undefined) {
    s.leases.set(key, { owner, expiresAt: now + ttlMs });
    if (s.leases.size > s.sweepAt.leases) s.sweepAt.leases = _sweepAndResize(s.leases, now);
    return RESOLVED_TRUE;
  }
  if (e.expiresAt > now && e.owner !== owner) return RESOLVED_FALSE;
  e.owner = owner;
  e.expiresAt = now + ttlMs;
  return RESOLVED_TRUE;
}

function _releaseLease(s: _MemoryState, key: string, owner: string): Promise<boolean> {
  if (s.closed) return _closedError();
  const e = s.leases.get(key);
  if (e === undefined) return RESOLVED_FALSE;
  if (e.expiresAt <= s.clock()) {
    s.leases.delete(key);
    return RESOLVED_FALSE;
  }
  if (e.owner !== owner) return RESOLVED_FALSE;
  s.leases.delete(key);
  return RESOLVED_TRUE;
}

function _adjustInFlight(s: _MemoryState, key: string, delta: number, ttlMs: number): Promise<number> {
  if (s.closed) return _closedError();
  if (!Number.isInteger(delta)) return _rangeError("delta", delta, "an integer");
  if (!(Number.isInteger(ttlMs) && ttlMs > 0)) return _rangeError("ttlMs", ttlMs);
  const now = s.clock();
  const e = s.gauges.get(key);
  const current = e !== undefined && e.expiresAt > now ? e.value : 0;
  const next = current + delta;
  // A gauge never goes below zero: a decrement after the entry expired (crashed peer, slow
  // request) must not hand out extra capacity. A zero entry is kept (no churn on the hot path:
  // +1/-1 per request) until a sweep finds it expired.
  if (next <= 0) {
    if (e !== undefined) {
      e.value = 0;
      e.expiresAt = now + ttlMs;
    }
    return RESOLVED_ZERO;
  }
  if (e === undefined) {
    s.gauges.set(key, { value: next, expiresAt: now + ttlMs });
    if (s.gauges.size > s.sweepAt.gauges) s.sweepAt.gauges = _sweepAndResize(s.gauges, now);
  } else {
    e.value = next;
    e.expiresAt = now + ttlMs;
  }
  return Promise.resolve(next);
}

function _publish(s: _MemoryState, channel: string, message: string): Promise<void> {
  if (s.closed) return _closedError();
  const subscribers = s.channels.get(channel);
  if (subscribers !== undefined) {
    for (const handlers of subscribers) {
      queueMicrotask(() => {
        if (!subscribers.has(handlers)) return; // closed before delivery
        try {
          handlers.message(message);
        } catch {
          // a subscriber's failure is its own; the publisher and the others go on
        }
      });
    }
  }
  return RESOLVED_VOID;
}

function _subscribe(s: _MemoryState, channel: string, handlers: SubscriptionHandlers): Promise<Subscription> {
  if (s.closed) return _closedError();
  let subscribers = s.channels.get(channel);
  if (subscribers === undefined) {
    subscribers = new Set();
    s.channels.set(channel, subscribers);
  }
  // A wrapper per call: subscribing the same handlers twice gives two independent subscriptions.
  const own: SubscriptionHandlers = { message: (m) => handlers.message(m) };
  subscribers.add(own);
  const set = subscribers;
  return Promise.resolve({
    close(): Promise<void> {
      set.delete(own);
      if (set.size === 0 && s.channels.get(channel) === set) s.channels.delete(channel);
      return RESOLVED_VOID;
    },
  });
}

function _sweepAll(s: _MemoryState): void {
  const now = s.clock();
  _sweep(s.permits, now);
  _sweep(s.leases, now);
  _sweep(s.gauges, now);
}

interface _Expiring {
  expiresAt: number;
}
interface _PermitEntry extends _Expiring {
  windowStart: number;
  count: number;
}
interface _LeaseEntry extends _Expiring {
  owner: string;
}
interface _GaugeEntry extends _Expiring {
  value: number;
}

/** Below this many entries a map is never swept on insert (the timer still sweeps it). */
const SWEEP_MIN_SIZE = 1024;
const SWEEP_INTERVAL_MS = 30_000;

const RESOLVED_TRUE: Promise<boolean> = Promise.resolve(true);
const RESOLVED_FALSE: Promise<boolean> = Promise.resolve(false);
const RESOLVED_ZERO: Promise<number> = Promise.resolve(0);
const RESOLVED_VOID: Promise<void> = Promise.resolve();

function _sweep(map: Map<string, _Expiring>, now: number): void {
  // Deleting the current entry while iterating a Map is safe.
  for (const [k, e] of map) if (e.expiresAt <= now) map.delete(k);
}

/** Sweeps and returns the next size that triggers a sweep (twice the live size: amortised O(1)). */
function _sweepAndResize(map: Map<string, _Expiring>, now: number): number {
  _sweep(map, now);
  return Math.max(SWEEP_MIN_SIZE, map.size * 2);
}

function _closed(): DependencyUnavailableError {
  return new DependencyUnavailableError("memory", "memory coordination store is closed", "transport");
}

function _closedError(): Promise<never> {
  return Promise.reject(_closed());
}

function _range(name: string, value: number, what = "a positive integer"): RangeError {
  return new RangeError(`coordination: ${name} must be ${what}, got ${value}`);
}

function _rangeError(name: string, value: number, what = "a positive integer"): Promise<never> {
  return Promise.reject(_range(name, value, what));
}
