/**
 * Standard Webhooks signatures (DECISIONS.md "Webhooks (both services)", docs/webhooks.md).
 *
 * A delivery carries three headers:
 *   webhook-id         the message id (the same on every retry; receivers dedupe by it)
 *   webhook-timestamp  integer seconds since the epoch of this attempt
 *   webhook-signature  "v1,<base64 HMAC-SHA256 of `${id}.${timestamp}.${body}`>"; a receiver may get
 *                      several space-separated signatures (secret rotation) and accepts any match.
 * The HMAC key is the per-business secret: a "whsec_" prefix means the rest is the base64 of the key
 * bytes (Standard Webhooks); any other string is used as its UTF-8 bytes.
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const WEBHOOK_ID_HEADER = "webhook-id";
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";

/** Headers as Node's IncomingHttpHeaders, a Fetch `Headers`, or a plain record (names case-insensitive). */
export type WebhookHeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyWebhookOptions {
  /** Largest accepted distance between the timestamp and `now`, either direction. Default 300 s. */
  toleranceSeconds?: number;
  /** Epoch milliseconds to check the timestamp against. Default Date.now(). */
  now?: number;
}

/** The `webhook-signature` value for one attempt: "v1,<base64>". */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string | Uint8Array): string {
  return `v1,${_hmac(secret, id, timestampSeconds, body).toString("base64")}`;
}

/** The three Standard Webhooks headers of one delivery attempt. */
export function webhookHeaders(
  secret: string,
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestampSeconds),
    [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, id, timestampSeconds, body),
  };
}

/**
 * True when the headers carry a `v1` signature of exactly `body` under `secret`, and the timestamp is
 * within `toleranceSeconds` of `now`. Missing or malformed headers are false, never a throw.
 */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaderSource,
  body: string | Uint8Array,
  options: VerifyWebhookOptions = {},
): boolean {
  const id = _header(headers, WEBHOOK_ID_HEADER);
  const ts = _header(headers, WEBHOOK_TIMESTAMP_HEADER);
  const sigs = _header(headers, WEBHOOK_SIGNATURE_HEADER);
  if (!id || !ts || !sigs || !/^\d{1,12}$/.test(ts)) return false;
  const timestamp = Number(ts);
  const tolerance = options.toleranceSeconds ?? 300;
  const nowSeconds = Math.floor((options.now ?? Date.now()) / 1000);
  if (!Number.isFinite(tolerance) || Math.abs(nowSeconds - timestamp) > tolerance) return false;

  const expected = _hmac(secret, id, timestamp, body);
  let ok = false;
  for (const candidate of sigs.split(" ")) {
    const comma = candidate.indexOf(",");
    if (comma < 0 || candidate.slice(0, comma) !== "v1") continue;
    const given = Buffer.from(candidate.slice(comma + 1), "base64");
    // Compare every candidate (no early exit) so timing does not reveal which one matched.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}

// --- Internal helpers ---

function _key(secret: string): Buffer {
  return secret.startsWith("whsec_") ? Buffer.from(secret.slice("whsec_".length), "base64") : Buffer.from(secret, "utf8");
}

function _hmac(secret: string, id: string, timestampSeconds: number, body: string | Uint8Array): Buffer {
  const mac = createHmac("sha256", _key(secret));
  mac.update(`${id}.${timestampSeconds}.`, "utf8");
  if (typeof body === "string") mac.update(body, "utf8");
  else mac.update(body);
  return mac.digest();
}

function _header(headers: WebhookHeaderSource, name: string): string | undefined {
  let value: string | string[] | null | undefined;
  if (typeof (headers as Headers).get === "function" && typeof (headers as Headers).has === "function") {
    value = (headers as Headers).get(name);
  } else {
    const record = headers as Record<string, string | string[] | undefined>;
    value = record[name];
    if (value === undefined) {
      for (const [k, v] of Object.entries(record)) {
        if (k.toLowerCase() === name) {
          value = v;
          break;
        }
      }
    }
  }
  if (Array.isArray(value)) value = value.join(" ");
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
