/**
 * A write that records an outcome the gateway already knows (the regulator answered, the money
 * moved), tried again while the store does not answer it: OUTCOME_WRITE_TRIES in all, 100 ms more
 * between each (~300 ms of waiting at most). Lost, such a write leaves a "dispatching" mark that
 * a later reader can only treat as an unknown outcome: a same-key retry answered 502 and an alert
 * for a sign that succeeded. Only for compare-and-sets scoped to the writer's own claim or revision,
 * so a try that landed unanswered makes the next one find nothing to change, never apply twice.
 */

/** Tries of an outcome write, the first included. */
export const OUTCOME_WRITE_TRIES = 3;

/** `once()` until `failed` says its result is not a store failure, OUTCOME_WRITE_TRIES times at most; the last result. */
export async function retryOutcomeWrite<R>(once: () => Promise<R>, failed: (result: R) => boolean): Promise<R> {
  let result = await once();
  for (let i = 1; i < OUTCOME_WRITE_TRIES && failed(result); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100 * i));
    result = await once();
  }
  return result;
}

/** A write that throws when the store fails, retried as above: true once a try was answered, false when every try failed. */
export function writeOutcome(write: () => Promise<unknown>): Promise<boolean> {
  return retryOutcomeWrite(
    () =>
      write().then(
        () => true,
        () => false,
      ),
    (answered) => !answered,
  );
}
