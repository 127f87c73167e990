/**
 * Enqueue: one document per message and endpoint, unique on (businessId, idempotencyKey, endpointId),
 * so a duplicate enqueue answers the stored message's webhookId with created=false. The body is
 * serialised once here; a message without an endpoint is stored `no_endpoint`, one with an unusable
 * endpoint dead at once. A directory endpoint (with an id) is stored by id, never with its secret.
 */
import { randomBytes } from "node:crypto";
import { isDuplicateKeyError, type WebhookEndpoint, type WebhookMessage } from "../../ports.ts";
import type { OutboxFields, OutboxState } from "./state.ts";
import type { WebhookStatus } from "./types.ts";

export async function enqueueWebhook(s: OutboxState, message: WebhookMessage, endpoint: WebhookEndpoint | null): Promise<{ webhookId: string; created: boolean }> {
  _validateMessage(message);
  const base = _fields(message, endpoint, s.clock());
  const status = base.status;
  for (let tries = 0; tries < 3; tries++) {
    const webhookId = _newWebhookId();
    try {
      await s.coll.insert({ _id: webhookId, ...base });
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      const existing =
        (await s.coll.findOne({ businessId: message.businessId, idempotencyKey: message.idempotencyKey, endpointId: base.endpointId })) ??
        // A store created before endpoints had ids keeps its unique index on (businessId, idempotencyKey)
        // (docs/webhooks.md "Upgrading"): the event's message to another endpoint answers.
        (await s.coll.findOne({ businessId: message.businessId, idempotencyKey: message.idempotencyKey }));
      if (existing) return { webhookId: existing._id, created: false };
      continue; // an _id clash, or the holder of the key vanished: a fresh id
    }
    const fields = { webhookId, eventType: message.eventType, businessId: message.businessId, status };
    s.log.event("webhook_enqueued", fields);
    if (status === "dead") s.log.warn("webhook_dead_lettered", { ...fields, attempts: 0, lastStatusCode: null, lastError: "invalid_endpoint" });
    return { webhookId, created: true };
  }
  throw new Error("could not store the webhook message (repeated key clashes)");
}

// --- Internal helpers ---

/** The stored fields of a new message (its status follows from the endpoint). */
function _fields(message: WebhookMessage, endpoint: WebhookEndpoint | null, now: number): OutboxFields {
  const body = JSON.stringify(message.payload);
  const usable = endpoint === null || _usableEndpoint(endpoint);
  const status: WebhookStatus = endpoint === null ? "no_endpoint" : usable ? "pending" : "dead";
  const endpointId = endpoint && typeof endpoint.id === "string" ? endpoint.id : "";
  return {
    businessId: message.businessId,
    eventType: message.eventType,
    idempotencyKey: message.idempotencyKey,
    status,
    endpointId,
    endpointUrl: endpoint && typeof endpoint.url === "string" ? endpoint.url : null,
    secret: endpoint && usable && endpointId === "" ? (endpoint.secret ?? null) : null,
    body,
    attempts: 0,
    createdAt: now,
    nextAttemptAt: status === "pending" ? now : null,
    lastAttemptAt: null,
    lastStatusCode: null,
    lastError: status === "dead" ? "invalid_endpoint" : null,
    deliveredAt: null,
    deadAt: status === "dead" ? now : null,
    attemptLog: [],
    rank: status === "dead" ? 0 : 1,
    manual: message.manual === true,
    resendKey: null,
  };
}

function _newWebhookId(): string {
  return `msg_${randomBytes(12).toString("hex")}`;
}

function _validateMessage(m: WebhookMessage): void {
  for (const f of ["businessId", "eventType", "idempotencyKey"] as const) {
    if (typeof m?.[f] !== "string" || m[f] === "") throw new TypeError(`webhook message ${f} must be a non-empty string`);
  }
  if (typeof m.payload !== "object" || m.payload === null || Array.isArray(m.payload)) {
    throw new TypeError("webhook message payload must be a JSON object");
  }
}

function _usableEndpoint(e: WebhookEndpoint): boolean {
  if (typeof e !== "object" || e === null || typeof e.url !== "string") return false;
  // A directory endpoint's secrets are read at attempt time; a bare one must bring its own.
  const byId = typeof e.id === "string" && e.id !== "";
  if (!byId && (typeof e.secret !== "string" || e.secret === "")) return false;
  try {
    const u = new URL(e.url);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
}
