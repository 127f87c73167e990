/**
 * What the outbox asks of an endpoint at attempt time (its current URL, whether it is enabled, the
 * secrets to sign with) and what it reports after each attempt. The failing streak: the first
 * failure after a success records `failingSinceMs`; a success clears it; a failure once the streak
 * has lasted `autoDisableAfterMs` disables the endpoint (`disabled.reason` "failing": the notice the
 * dashboard shows), audits it (actor "gateway") and tells the business (webhook-context.ts `notice`).
 * Only changes of that state are written: a steady endpoint costs one read per attempt.
 */
import type { WebhookEndpointState } from "../../adapters/ports.ts";
import { describeError } from "../log.ts";
import { writeEndpoint, type WebhookContext } from "./webhook-context.ts";
import { liveSecrets } from "./webhook-store.ts";

export async function resolveEndpoint(c: WebhookContext, id: string): Promise<WebhookEndpointState | null> {
  const doc = await c.coll.get(id);
  if (!doc) return null;
  return { url: doc.url, enabled: doc.enabled, secrets: liveSecrets(doc, c.now()).map((s) => s.secret) };
}

export async function attemptedEndpoint(c: WebhookContext, id: string, ok: boolean, atMs: number, error: string | null): Promise<void> {
  const doc = await c.coll.get(id);
  if (!doc) return;
  if (ok) {
    if (doc.failingSinceMs !== null) await c.coll.updateOne({ _id: id, rev: doc.rev }, { $set: { failingSinceMs: null }, $inc: { rev: 1 } });
    return;
  }
  if (doc.failingSinceMs === null) {
    await c.coll.updateOne({ _id: id, rev: doc.rev }, { $set: { failingSinceMs: atMs }, $inc: { rev: 1 } });
    return;
  }
  if (!doc.enabled || atMs - doc.failingSinceMs < c.autoDisableAfterMs) return;
  const disabled = { reason: "failing", at: atMs, failingSinceMs: doc.failingSinceMs, lastError: error };
  const written = await writeEndpoint(c, doc, { enabled: false, disabled }, { actor: "gateway", requestId: null }, "webhook_endpoint.auto_disable", {
    enabled: { from: true, to: false },
    failingSince: new Date(doc.failingSinceMs).toISOString(),
    lastError: error,
  });
  if (!written) return; // another process recorded an outcome first; the next failure decides again
  const notice = { businessId: doc.businessId, endpointId: id, url: doc.url, failingSinceMs: doc.failingSinceMs, disabledAtMs: atMs, lastError: error };
  await c.notice(notice).catch((e: unknown) => c.log.warn("webhook_endpoint_notice_failed", { businessId: doc.businessId, endpointId: id, error: describeError(e) }));
}
