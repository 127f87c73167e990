/** The retry schedule: the default delays, their validation, and the jitter applied to each. */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * 30 s, 1 min, 2, 4, 8, 16, 32 min, then hourly: 29 retries (30 attempts), 23 h 3 min 30 s in total.
 */
export const DEFAULT_WEBHOOK_SCHEDULE: readonly number[] = Object.freeze(_defaultSchedule());

/** A copy of `schedule`; throws TypeError unless every delay is a number ≥ 1 ms. */
export function validSchedule(schedule: readonly number[]): number[] {
  if (!Array.isArray(schedule)) throw new TypeError("schedule must be an array of delays in milliseconds");
  for (const d of schedule) {
    if (typeof d !== "number" || !Number.isFinite(d) || d < 1) throw new TypeError("every schedule delay must be a number ≥ 1 ms");
  }
  return [...schedule];
}

/** Shortened by a random share of up to `jitter`; never below 1 ms (a pass never retries what it just tried). */
export function jittered(delay: number, jitter: number): number {
  return Math.max(1, Math.round(delay * (1 - jitter * Math.random())));
}

// --- Internal helpers ---

function _defaultSchedule(): number[] {
  const out: number[] = [];
  let total = 0;
  for (let delay = 30_000; ; delay *= 2) {
    const step = Math.min(delay, HOUR);
    if (total + step > DAY) return out;
    out.push(step);
    total += step;
  }
}
