/**
 * Inbound invoices (DECISIONS.md "Stored mode"): the regulator delivers an invoice addressed to a
 * buyer TIN to `POST /regulator/inbound-invoices` on the gateway's own host. A delivery is accepted
 * only when `x-regulator-signature: v1,<base64 HMAC-SHA256 of "timestamp.body">` verifies with the
 * deployment's regulator secret and `x-regulator-timestamp` is within the replay window; the route
 * checks it over the raw bytes before anything parses them (`verify`, the route's `verifyBody`), and
 * each client address gets a small admission limit of its own (config `stored.inbound.admission`). It is stored
 * under every top-level business whose represented business (in the delivery's environment) has that
 * TIN: `direction: inbound`, status `received`, with an `invoice.inbound.received` webhook. A repeated
 * delivery id stores nothing new (the same answer); the same id with other content is refused.
 * An unknown TIN is acknowledged and dropped (logged without taxpayer data).
 */
import { createHmac, randomUUID, timingSafeEqual } from "node:crypto";
import { isDuplicateKeyError, type Collection, type DocumentStore } from "../../adapters/ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { newId } from "../../core/ids.ts";
import { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";
import type { Logger } from "../../core/log.ts";
import { validateInput } from "../../core/validation.ts";
import { businessesWithTin, openRepresentedBusinesses, type SubBusinessDoc } from "../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import type { InvoiceWebhooks } from "./events.ts";
import { InboundDelivery, type InboundDeliveryInput } from "./schemas.ts";
import type { StoredStore } from "./store.ts";

export const INBOUND_PATH = "/regulator/inbound-invoices";
export const SIGNATURE_HEADER = "x-regulator-signature";
export const TIMESTAMP_HEADER = "x-regulator-timestamp";

export interface InboundOptions {
  store: StoredStore;
  documentStore: DocumentStore;
  webhooks: InvoiceWebhooks;
  log: Logger;
  /** The deployment's regulator secret: the HMAC key the regulator signs deliveries with. */
  regulatorSecret: string;
  /** HMAC key for stored delivery ids and fingerprints (deriveStoredSecret). */
  secret: Buffer;
  toleranceSeconds: number;
  /** The route's early limit per client address (config `stored.inbound.admission`). */
  admission: { perClient: number; windowSeconds: number };
  onDue: () => void;
  now?: () => number;
}

export interface InboundDeliveryRequest {
  requestId: string;
  rawBody: Uint8Array;
  body: unknown;
  timestamp: string | null;
  signature: string | null;
}

export type InboundResult = "accepted" | "duplicate";

export interface InboundReceiver {
  /** The route's early limit per client address. */
  readonly admission: { perClient: number; windowSeconds: number };
  /** Authenticates a delivery over its raw bytes (before it is parsed): throws the catalog error. */
  verify(r: Pick<InboundDeliveryRequest, "rawBody" | "timestamp" | "signature">): void;
  /** Stores one delivery `verify` accepted; "duplicate" when every addressee had it already. */
  receive(r: InboundDeliveryRequest): Promise<InboundResult>;
}

export function createInboundReceiver(o: InboundOptions): InboundReceiver {
  const subs = openRepresentedBusinesses(o.documentStore);
  const now = o.now ?? Date.now;
  return {
    admission: o.admission,
    verify: (r) => verifySignature(r, o.regulatorSecret, Math.floor(now() / 1000), o.toleranceSeconds),
    receive: (r) => _receive(o, subs, r),
  };
}

/**
 * The delivery's headers: both present (400 GW_REQUEST_HEADER_INVALID), the timestamp within the
 * replay window (400, RANGE), one of the space-separated `v1,` signatures matching (401
 * GW_API_KEY_INVALID). A signature counts only in canonical base64 (44 characters, padded, no
 * stray bits: exactly what the regulator's encoder writes); comparisons are constant-time.
 */
export function verifySignature(r: Pick<InboundDeliveryRequest, "rawBody" | "timestamp" | "signature">, secret: string, nowSeconds: number, toleranceSeconds: number): void {
  if (r.timestamp === null || !/^\d{1,12}$/.test(r.timestamp))
    throw _header(TIMESTAMP_HEADER, r.timestamp === null ? "REQUIRED" : "FORMAT", "Unix time in seconds");
  if (r.signature === null || r.signature === "") throw _header(SIGNATURE_HEADER, "REQUIRED", "v1,<base64 HMAC-SHA256>");
  if (Math.abs(nowSeconds - Number(r.timestamp)) > toleranceSeconds)
    throw _header(TIMESTAMP_HEADER, "RANGE", `outside the ${toleranceSeconds} s replay window`);
  const expected = _mac(secret, r.timestamp, r.rawBody);
  for (const part of r.signature.split(" ")) {
    if (!part.startsWith("v1,") || !CANONICAL_MAC.test(part)) continue;
    const text = part.slice(3);
    const given = Buffer.from(text, "base64");
    if (given.length === expected.length && given.toString("base64") === text && timingSafeEqual(given, expected)) return;
  }
  throw gwError("GW_API_KEY_INVALID", { detail: "The delivery's x-regulator-signature does not verify with the deployment's regulator secret." });
}

// --- Internal helpers ---

/** A v1 signature in canonical base64: an HMAC-SHA256 is 32 bytes, 43 characters and one `=`. */
const CANONICAL_MAC = /^v1,[A-Za-z0-9+/]{43}=$/;

/** A store that cannot answer throws: the route answers 503 GW_INVOICE_INTAKE_UNAVAILABLE (deliver it again). */
async function _receive(o: InboundOptions, subs: Collection<SubBusinessDoc>, r: InboundDeliveryRequest): Promise<InboundResult> {
  const now = o.now ?? Date.now;
  const delivery = validateInput(InboundDelivery, r.body, "body");
  const fingerprint = keyedHash(o.secret, canonicalJson(delivery));
  const deliveryKey = keyedHash(o.secret, `inbound\u0000${delivery.delivery_id}`);
  const buyers = await businessesWithTin(subs, delivery.environment, delivery.buyer_tin, 100);
  if (buyers.length === 0) {
    o.log.event("stored_inbound_unrouted", { requestId: r.requestId, environment: delivery.environment });
    return "accepted";
  }
  let created = 0;
  for (const sub of buyers) {
    const doc = _inboundInvoice(o, sub, delivery, fingerprint, deliveryKey, new Date(now()).toISOString());
    try {
      await o.store.invoices.insert(doc);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      await _redelivered(o, doc, fingerprint);
      continue;
    }
    created++;
    o.log.event("stored_inbound_received", { requestId: r.requestId, invoiceId: doc._id, businessId: doc.businessId });
    if (doc.events.length > 0) await o.webhooks.enqueue(doc, doc.events).catch(() => o.onDue());
  }
  return created > 0 ? "accepted" : "duplicate";
}

/** The inbound invoice of one addressee: status received, with its webhook when the business has an endpoint. */
function _inboundInvoice(o: InboundOptions, sub: SubBusinessDoc, delivery: InboundDeliveryInput, fingerprint: string, deliveryKey: string, at: string): InvoiceDoc {
  const base = {
    _id: randomUUID(),
    businessId: sub.businessId,
    state: delivery.environment,
    domain: null,
    subBusinessId: sub.gatewaySubBusinessId,
    direction: "inbound",
    irn: delivery.irn,
    status: "received",
    statusHistory: [{ status: "received", at }],
    attempts: 0,
    budgetLeft: 0,
    budget: 0,
    lastError: null,
    operationId: newId(),
    createdAt: at,
    updatedAt: at,
    createdAtMs: Date.parse(at),
    document: delivery.invoice,
    fingerprint,
    inboundKey: `${sub.businessId}|${sub.gatewaySubBusinessId}|${deliveryKey}`,
    feeKobo: 0,
    rev: 0,
    dueAt: null,
    step: "done",
    signAttempt: 0,
    outages: 0,
    billDoubt: false,
    settle: false,
    reverseFor: null,
    events: [],
  } satisfies InvoiceDoc;
  const events = o.webhooks.event(base, "invoice.inbound.received", "received", at);
  return { ...base, events, dueAt: events.length > 0 ? Date.parse(at) : null };
}

/** The delivery stored before for this addressee: the same content is a redelivery, other content a conflict. */
async function _redelivered(o: InboundOptions, doc: InvoiceDoc, fingerprint: string): Promise<void> {
  const stored = await o.store.invoices.findOne({ inboundKey: doc.inboundKey });
  if (stored && stored.fingerprint !== fingerprint)
    throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", { detail: "This delivery id was delivered before with different content." });
  // A redelivery: its webhook (if any is still owed) goes out again, idempotently.
  if (stored && stored.events.length > 0) await o.webhooks.enqueue(stored, stored.events).catch(() => undefined);
}

function _mac(secret: string, timestamp: string, body: Uint8Array): Buffer {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
}

function _header(field: string, code: "REQUIRED" | "FORMAT" | "RANGE", detail: string) {
  return gwError("GW_REQUEST_HEADER_INVALID", {
    detail: `Header ${field} is invalid.`,
    violations: [{ location: "header", field, code, detail }],
  });
}
