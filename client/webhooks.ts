/**
 * Receiving Gatehouse webhooks, for both services (DECISIONS.md "Webhooks", docs/webhooks.md):
 * Standard Webhooks signatures — `webhook-id`, `webhook-timestamp`, `webhook-signature:
 * v1,<base64 HMAC-SHA256 of "id.timestamp.body">` keyed by the business's secret (`whsec_<base64>`,
 * or a plain string as its UTF-8 bytes) — checked against the raw body, with a timestamp tolerance
 * and a constant-time compare of every candidate signature.
 *
 * Deliveries are at least once: the same message comes again with the same `webhook-id` (a fresh
 * timestamp and signature each attempt). Dedupe by `webhook-id` in your own store — a unique index
 * that the handler's effects commit with — and answer 2xx to a repeat without acting again
 * (docs/client.md "Receiving webhooks").
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { CheckoutEvent } from "../plugins/collections/payment-links/checkout/session.ts";
import type { InFlowSuccessEvent } from "../plugins/collections/virtual-accounts/deposit.ts";
import type { InvoiceEvent } from "../plugins/invoice/stored-invoices.ts";

/** Headers as Node's IncomingHttpHeaders, a Fetch `Headers`, or a plain record (names case-insensitive). */
export type WebhookHeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the timestamp and now, either direction. Default 300 s. */
  toleranceSeconds?: number;
  /** Epoch milliseconds to check the timestamp against. Default Date.now(). */
  now?: number;
}

export type WebhookFailure = "missing_headers" | "bad_timestamp" | "timestamp_out_of_tolerance" | "bad_signature" | "bad_payload";

export class WebhookVerificationError extends Error {
  readonly isWebhookVerificationError = true as const;
  constructor(readonly reason: WebhookFailure) {
    super(`webhook rejected: ${reason.replaceAll("_", " ")}`);
    this.name = "WebhookVerificationError";
  }
}

export interface VerifiedWebhook<P> {
  /** The message id: the same on every retry of a message. Dedupe by it. */
  id: string;
  /** Seconds since the epoch of this delivery attempt. */
  timestamp: number;
  payload: P;
}

/** A collections webhook body: `{ event_type, data }`. */
export type CollectionsWebhookEvent = InFlowSuccessEvent | CheckoutEvent;
/** An invoice webhook body: `{ type, data }` (invoice.accepted, invoice.signed, …, invoice.frozen). */
export type InvoiceWebhookEvent = InvoiceEvent;

/** True when the request carries a valid `v1` signature of exactly `body` within the tolerance. Never throws. */
export function verifyWebhook(secret: string, headers: WebhookHeaderSource, body: string | Uint8Array, options: VerifyWebhookOptions = {}): boolean {
  return _check(secret, headers, body, options) === null;
}

/** Verifies, then parses the body; throws WebhookVerificationError with the reason. */
export function parseWebhook<P = unknown>(
  secret: string,
  headers: WebhookHeaderSource,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): VerifiedWebhook<P> {
  const failure = _check(secret, headers, body, options);
  if (failure) throw new WebhookVerificationError(failure);
  let payload: unknown;
  try {
    payload = JSON.parse(typeof body === "string" ? body : Buffer.from(body).toString("utf8"));
  } catch {
    throw new WebhookVerificationError("bad_payload");
  }
  return { id: _header(headers, "webhook-id")!, timestamp: Number(_header(headers, "webhook-timestamp")), payload: payload as P };
}

/** A verified collections webhook (`event_type` present). */
export function parseCollectionsWebhook(
  secret: string,
  headers: WebhookHeaderSource,
  body: string | Uint8Array,
  options?: VerifyWebhookOptions,
): VerifiedWebhook<CollectionsWebhookEvent> {
  const hook = parseWebhook<CollectionsWebhookEvent>(secret, headers, body, options);
  if (typeof hook.payload?.event_type !== "string" || typeof hook.payload.data !== "object") throw new WebhookVerificationError("bad_payload");
  return hook;
}

/** A verified invoice webhook (`type` present). */
export function parseInvoiceWebhook(
  secret: string,
  headers: WebhookHeaderSource,
  body: string | Uint8Array,
  options?: VerifyWebhookOptions,
): VerifiedWebhook<InvoiceWebhookEvent> {
  const hook = parseWebhook<InvoiceWebhookEvent>(secret, headers, body, options);
  if (typeof hook.payload?.type !== "string" || typeof hook.payload.data !== "object") throw new WebhookVerificationError("bad_payload");
  return hook;
}

// --- Internal helpers ---

function _check(secret: string, headers: WebhookHeaderSource, body: string | Uint8Array, options: VerifyWebhookOptions): WebhookFailure | null {
  const id = _header(headers, "webhook-id");
  const ts = _header(headers, "webhook-timestamp");
  const signatures = _header(headers, "webhook-signature");
  if (!id || !ts || !signatures) return "missing_headers";
  if (!/^\d{1,12}$/.test(ts)) return "bad_timestamp";
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (!Number.isFinite(tolerance) || Math.abs(nowSeconds - Number(ts)) > tolerance) return "timestamp_out_of_tolerance";
  const mac = createHmac("sha256", secret.startsWith("whsec_") ? Buffer.from(secret.slice(6), "base64") : Buffer.from(secret, "utf8"));
  mac.update(`${id}.${ts}.`, "utf8");
  mac.update(typeof body === "string" ? Buffer.from(body, "utf8") : body);
  const expected = mac.digest();
  let ok = false;
  for (const candidate of signatures.split(" ")) {
    const comma = candidate.indexOf(",");
    if (comma < 0 || candidate.slice(0, comma) !== "v1") continue;
    const given = Buffer.from(candidate.slice(comma + 1), "base64");
    // Every candidate is compared (no early exit): timing does not tell which one matched.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok ? null : "bad_signature";
}

function _header(headers: WebhookHeaderSource, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function") value = (headers as Headers).get(name);
  else {
    const record = headers as Record<string, string | string[] | undefined>;
    value = record[name] ?? Object.entries(record).find(([k]) => k.toLowerCase() === name)?.[1];
  }
  if (Array.isArray(value)) value = value.join(" ");
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
