/**
 * The shared side of the thresholds, on the coordination store (keys `<prefix><dependency>|<operation>|…`,
 * see ./engine.ts): a key's batch added to the shared counters with its shared view read back, and
 * the shared cooldown lease that decides which process sends a notification.
 */
import { randomUUID } from "node:crypto";
import { BUCKET_MS, GEN_TTL_MS, RESET, STREAK_TTL_MS, type AlertEngineState, type Batch, type Tracker, type View } from "./state.ts";

/** A tracker's shared key prefix. */
export function baseKey(s: AlertEngineState, k: Tracker): string {
  return (k.base ??= `${s.prefix}${k.dependency}|${k.operation}`);
}

/** True when this process takes the shared cooldown (or the store cannot say: then it sends). */
export async function sharedCooldown(s: AlertEngineState, key: string): Promise<boolean> {
  try {
    return await s.coordination.acquireLease(key, randomUUID(), s.t.cooldownMs);
  } catch {
    return true;
  }
}

/** Adds the batch to the shared counters and reads the shared view (one batch of counter updates). */
export async function sharedView(s: AlertEngineState, k: Tracker, b: Batch, now: number): Promise<View> {
  const base = baseKey(s, k);
  const minute = Math.floor(now / BUCKET_MS);
  const windowTtl = s.t.windowMs + BUCKET_MS;
  const add = (key: string, delta: number, ttl: number) => s.coordination.adjustInFlight(key, delta, ttl);
  const streak = async (key: string, reset: boolean, trailing: number, total: number) => {
    if (!reset) return add(key, total, STREAK_TTL_MS);
    await add(key, RESET, STREAK_TTL_MS);
    return add(key, trailing, STREAK_TTL_MS);
  };
  const windowReads: Promise<number>[] = [];
  for (let i = 0; i < s.buckets; i++) {
    const m = minute - i;
    windowReads.push(add(`${base}|g${k.gen}|m${m}|c`, i === 0 ? b.calls : 0, windowTtl));
    windowReads.push(add(`${base}|g${k.gen}|m${m}|f`, i === 0 ? b.failures : 0, windowTtl));
  }
  const [cf, cs, gen, ...window] = await Promise.all([
    streak(`${base}|cf`, b.sawSuccess, b.trailingFailures, b.failures),
    streak(`${base}|cs`, b.sawFailure, b.trailingSuccesses, b.successes),
    add(`${base}|gen`, 0, GEN_TTL_MS),
    ...windowReads,
  ]);
  let calls = 0;
  let failures = 0;
  for (let i = 0; i < window.length; i += 2) {
    calls += window[i]!;
    failures += window[i + 1]!;
  }
  if (gen !== k.gen) {
    // Another process recovered this key: a new generation (its window starts empty).
    k.gen = gen;
    k.incident = false;
    k.cooldownUntil = 0;
  }
  return { consecutiveFailures: cf, consecutiveSuccesses: cs, windowCalls: calls, windowFailures: failures };
}
