/**
 * Undoing a claim whose work never started, when the store may be why it failed. A write the store
 * did not acknowledge may still land later (a hung server applies its queue when it resumes), so the
 * undo — an idempotent delete scoped to the claim's owner — runs now and again after each of
 * `delaysMs` in the background, whatever the earlier runs answered; `onFailure` runs when the last
 * one failed. A claim left behind would block the caller's same-key retry until it is stale. The
 * timers are unref'd: an undo never keeps a stopping process alive.
 */

/** About 15 s: longer than a typical store failover or hang. */
export const UNDO_REPEAT_MS: readonly number[] = [250, 1_000, 2_000, 4_000, 8_000];

export async function repeatUndo(undo: () => Promise<boolean>, delaysMs: readonly number[], onFailure: () => void): Promise<void> {
  let done = await undo();
  void (async () => {
    for (const wait of delaysMs) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      done = await undo();
    }
    if (!done) onFailure();
  })();
}
