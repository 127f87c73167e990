/** The delivery worker: a pass, then a pause of `pollMs`, while started; stopping waits for the pass in progress. */
import { describeError } from "../../../core/log.ts";
import { deliveryPass } from "./delivery.ts";
import type { OutboxState } from "./state.ts";
import type { WebhookDeliveryWorker } from "./types.ts";

export function createDeliveryWorker(s: OutboxState): WebhookDeliveryWorker {
  return {
    name: "webhook-delivery",
    start(): void {
      if (s.running) return;
      s.running = true;
      s.timer = setTimeout(() => _tick(s), 0);
      s.timer.unref();
    },
    async stop(): Promise<void> {
      s.running = false;
      if (s.timer) clearTimeout(s.timer);
      s.timer = null;
      while (s.current) await s.current;
      const a = s.agent;
      s.agent = null;
      if (a) await a.close();
    },
  };
}

// --- Internal helpers ---

function _tick(s: OutboxState): void {
  s.timer = null;
  if (!s.running) return;
  s.current = deliveryPass(s, () => s.running)
    .then(
      () => undefined,
      (e: unknown) => s.log.warn("webhook_delivery_pass_failed", { error: describeError(e) }),
    )
    .finally(() => {
      s.current = null;
      if (s.running) {
        s.timer = setTimeout(() => _tick(s), s.pollMs);
        s.timer.unref();
      }
    });
}
