/**
 * An invoice's QR code, when the represented business gave the regulator's QR material (its
 * public key and certificate, spec §2.1 "optional QR material"): the regulator's QR payload is the
 * IRN with the signing time (`<IRN>.<unix seconds>`) and the certificate, as JSON, encrypted with
 * the public key (RSA, PKCS#1 v1.5) and base64-encoded; the image is an SVG drawn on the server by
 * `qrcode` (no script, no image service). The encryption is node:crypto's, never ours.
 *
 * Only a signed invoice (signed, transmitting, transmitted) has a QR code. Material that cannot be
 * used (a key node cannot read, a certificate too long for the key) gives a reason, not an error.
 */
import { constants, createPublicKey, publicEncrypt, type KeyObject } from "node:crypto";
import QRCode from "qrcode";
import { raw, type SafeHtml } from "../../../core/ui/index.ts";
import type { CryptoMaterial } from "../../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";

export type InvoiceQr = { kind: "image"; svg: SafeHtml; cryptoVersion: number } | { kind: "none"; why: string };

const SIGNED: ReadonlySet<string> = new Set(["signed", "transmitting", "transmitted"]);

/** The QR code of a signed invoice from the represented business's material, or why there is none. */
export async function invoiceQr(doc: Pick<InvoiceDoc, "irn" | "status" | "statusHistory" | "direction">, crypto: CryptoMaterial | null): Promise<InvoiceQr> {
  if (doc.direction !== "outbound") return { kind: "none", why: "An inbound invoice's QR code is the issuer's." };
  if (!SIGNED.has(doc.status)) return { kind: "none", why: "The QR code appears once the regulator has signed the invoice." };
  if (!crypto) return { kind: "none", why: "The represented business has no QR material; add it with POST /sub-businesses/{id}/reg-crypto-material." };
  const payload = qrPayload(doc, crypto);
  if (typeof payload !== "string") return { kind: "none", why: payload.why };
  const svg = await QRCode.toString(payload, { type: "svg", errorCorrectionLevel: "M", margin: 2, width: 280 });
  // The library's own markup (paths of the code's modules); nothing of the input appears as text in it.
  return { kind: "image", svg: raw(svg.replace("<svg ", '<svg role="img" aria-label="The invoice\'s QR code" class="qr" ')), cryptoVersion: crypto.version };
}

/** The text the QR code holds: base64 of the encrypted `{ irn: "<IRN>.<signed at, unix s>", certificate }`. */
export function qrPayload(doc: Pick<InvoiceDoc, "irn" | "statusHistory">, crypto: Pick<CryptoMaterial, "publicKey" | "certificate">): string | { why: string } {
  const key = _publicKey(crypto.publicKey);
  if (!key) return { why: "The QR material's public key cannot be read (expected base64 of a PEM or DER public key)." };
  const signedAt = doc.statusHistory.find((h) => h.status === "signed")?.at;
  const seconds = Math.floor((signedAt ? Date.parse(signedAt) : Date.now()) / 1000);
  const data = JSON.stringify({ irn: `${doc.irn}.${seconds}`, certificate: crypto.certificate });
  try {
    return publicEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(data, "utf8")).toString("base64");
  } catch {
    return { why: "The QR material's key cannot encrypt this invoice's QR data (a key too small for the certificate)." };
  }
}

// --- Internal helpers ---

/** base64 text → a public key: the decoded text is a PEM, or the bytes are a DER SubjectPublicKeyInfo. */
function _publicKey(base64: string): KeyObject | null {
  try {
    const bytes = Buffer.from(base64.replace(/\s+/g, ""), "base64");
    const text = bytes.toString("utf8");
    const key = text.includes("-----BEGIN") ? createPublicKey(text) : createPublicKey({ key: bytes, format: "der", type: "spki" });
    return key.asymmetricKeyType === "rsa" ? key : null;
  } catch {
    return null;
  }
}
