/** A clock tests move by hand (for policies, circuits and stores that take an injected clock). */
export interface ManualClock {
  now(): number;
  advance(ms: number): void;
}

/** Starts on a whole second by default, so a circuit's 1 s buckets line up with the test's arithmetic. */
export function manualClock(start = 1_700_000_000_000): ManualClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}
