/**
 * What the webhook endpoint service's parts share: the collection, the audit log, the clock, the
 * configured overlap and auto-disable time, the change announcement and the disable notice, plus
 * the compare-and-set write every change goes through.
 */
import type { Collection } from "../../adapters/ports.ts";
import type { Logger } from "../log.ts";
import { appendAudit, type AuditDoc } from "./store.ts";
import type { WebhookEndpointDoc } from "./webhook-store.ts";
import type { WebhookActor } from "./webhook-types.ts";

/** An endpoint the gateway disabled after it failed for too long: what the notice says. */
export interface WebhookDisableNotice {
  businessId: string;
  endpointId: string;
  url: string;
  failingSinceMs: number;
  disabledAtMs: number;
  lastError: string | null;
}

export interface WebhookContext {
  coll: Collection<WebhookEndpointDoc>;
  audit: Collection<AuditDoc>;
  now: () => number;
  log: Logger;
  overlapMs: number;
  autoDisableAfterMs: number;
  /** Updates this process's snapshot of the business's endpoints and tells the other processes. */
  changed(businessId: string): Promise<void>;
  /** Tells the business an endpoint was disabled for failing (e-mail, else a log line). */
  notice(n: WebhookDisableNotice): Promise<void>;
}

/** A compare-and-set on `rev` with the audit entry; null when another writer changed the endpoint first. */
export async function writeEndpoint(
  c: WebhookContext,
  doc: WebhookEndpointDoc,
  set: Record<string, unknown>,
  by: WebhookActor,
  action: string,
  changes: Record<string, unknown>,
): Promise<WebhookEndpointDoc | null> {
  const at = c.now();
  const updated = await c.coll.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, { $set: { ...set, updatedAt: new Date(at).toISOString() }, $inc: { rev: 1 } });
  if (!updated) return null;
  await appendAudit(c.audit, { actor: by.actor, requestId: by.requestId, action, target: { type: "webhook_endpoint", id: doc._id }, changes }, at);
  await c.changed(doc.businessId);
  return updated;
}
