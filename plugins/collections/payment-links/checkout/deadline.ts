/** A promise raced against a deadline: how long the checkout waits for the processor. */

/** What `within` rejects with when the deadline passes first (the promise itself runs on). */
export const DEADLINE_PASSED = Symbol("deadline passed");

export function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(DEADLINE_PASSED), ms);
    timer.unref();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (e) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
