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
 * Receivers verify with the merchant client's `verifyWebhook` / `parseWebhook` (client/webhooks.ts).
 */
import { createHmac } from "node:crypto";

export const WEBHOOK_ID_HEADER = "webhook-id";
export const WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp";
export const WEBHOOK_SIGNATURE_HEADER = "webhook-signature";

/** The `webhook-signature` value for one attempt: "v1,<base64>". */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string | Uint8Array): string {
  return `v1,${_hmac(secret, id, timestampSeconds, body).toString("base64")}`;
}

/**
 * The three Standard Webhooks headers of one delivery attempt. With several secrets (a rotation's
 * overlap) `webhook-signature` holds one space-separated signature per secret.
 */
export function webhookHeaders(
  secret: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string | Uint8Array,
): Record<"webhook-id" | "webhook-timestamp" | "webhook-signature", string> {
  return {
    [WEBHOOK_ID_HEADER]: id,
    [WEBHOOK_TIMESTAMP_HEADER]: String(timestampSeconds),
    [WEBHOOK_SIGNATURE_HEADER]: (typeof secret === "string" ? [secret] : secret).map((k) => signWebhook(k, id, timestampSeconds, body)).join(" "),
  };
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
