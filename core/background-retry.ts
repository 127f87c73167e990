/**
 * Undoing a claim whose work never started, when the store may be the reason it failed: `attempt`
 * runs now and, while it answers false (the store refused it), again after each of `delaysMs` in the
 * background; `onGiveUp` runs when every try failed. A claim left behind would block the caller's
 * same-key retry until it is stale. The timers are unref'd: a retry never keeps a stopping process
 * alive.
 */

/** About 15 s of retries: longer than a typical store failover or hang. */
export const UNDO_RETRY_MS: readonly number[] = [250, 1_000, 2_000, 4_000, 8_000];

export async function retryInBackground(attempt: () => Promise<boolean>, delaysMs: readonly number[], onGiveUp: () => void): Promise<void> {
  if (await attempt()) return;
  void (async () => {
    for (const wait of delaysMs) {
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      if (await attempt()) return;
    }
    onGiveUp();
  })();
}
