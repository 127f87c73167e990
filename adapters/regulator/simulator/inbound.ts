/**
 * The simulator's inbound push: how tests and the demo make "the regulator" deliver an invoice to a
 * gateway's inbound receiver (DECISIONS.md "Stored mode", inbound invoices). A control call
 *
 *   POST /__sim/inbound
 *   { "target": "http://127.0.0.1:3000/regulator/inbound-invoices",
 *     "irn": "<an IRN this simulator signed>" | "invoice": { ...a regulator invoice document },
 *     "buyerTin"?: "<TIN>",          default: the invoice's accounting_customer_party.tin
 *     "environment"?: "TEST"|"LIVE", default TEST
 *     "deliveryId"?: "<id>" }        default: a new random id (send the same one to redeliver)
 *
 * builds the delivery `{ delivery_id, environment, buyer_tin, irn, invoice }`, signs it like the
 * regulator (`x-regulator-timestamp`, `x-regulator-signature: v1,<base64 HMAC-SHA256 of
 * "timestamp.body">` keyed by the deployment's API secret) and POSTs it to `target`. The answer is
 * `{ ok, deliveryId, status, response }` with the gateway's status and JSON answer.
 */
import { createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { readBody } from "./http-io.ts";

export const INBOUND_CONTROL_PATH = "/__sim/inbound";

export interface InboundPushContext {
  /** The deployment's API secret (the HMAC key of deliveries). */
  secret: string;
  /** The document of an invoice this simulator signed, by IRN. */
  signedInvoice(irn: string): Record<string, unknown> | undefined;
}

export interface ControlAnswer {
  status: number;
  body: unknown;
}

export async function handleInboundPush(req: IncomingMessage, method: string, ctx: InboundPushContext): Promise<ControlAnswer> {
  if (method !== "POST") return { status: 405, body: { ok: false, error: "method_not_allowed" } };
  let input: Record<string, unknown>;
  try {
    const read = await readBody(req, PUSH_BODY_LIMIT);
    if (read.kind !== "ok") throw new Error(read.kind);
    const parsed: unknown = JSON.parse(read.text);
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
    input = parsed as Record<string, unknown>;
  } catch {
    return { status: 400, body: { ok: false, error: "invalid_json", problems: ["body must be a JSON object"] } };
  }
  const problems: string[] = [];
  const target = typeof input.target === "string" && /^https?:\/\//.test(input.target) ? input.target : null;
  if (!target) problems.push("target must be the gateway's http(s) URL of /regulator/inbound-invoices");
  let invoice: Record<string, unknown> | undefined;
  if (typeof input.irn === "string") {
    invoice = ctx.signedInvoice(input.irn);
    if (!invoice) problems.push("irn: no invoice with this IRN was signed by this simulator");
  } else if (typeof input.invoice === "object" && input.invoice !== null && !Array.isArray(input.invoice)) {
    invoice = input.invoice as Record<string, unknown>;
  } else problems.push("send irn (an invoice this simulator signed) or invoice (a document)");
  const customer = invoice?.accounting_customer_party as Record<string, unknown> | undefined;
  const buyerTin = typeof input.buyerTin === "string" ? input.buyerTin : typeof customer?.tin === "string" ? customer.tin : null;
  if (invoice && !buyerTin) problems.push("buyerTin is needed (the invoice names no accounting_customer_party.tin)");
  const environment = input.environment ?? "TEST";
  if (environment !== "TEST" && environment !== "LIVE") problems.push("environment must be TEST or LIVE");
  const irn = typeof invoice?.irn === "string" ? invoice.irn : typeof input.irn === "string" ? input.irn : null;
  if (invoice && !irn) problems.push("the invoice has no irn");
  if (problems.length > 0) return { status: 400, body: { ok: false, error: "invalid_push", problems } };

  const deliveryId = typeof input.deliveryId === "string" ? input.deliveryId : `dlv_${randomBytes(12).toString("hex")}`;
  const body = JSON.stringify({ delivery_id: deliveryId, environment, buyer_tin: buyerTin, irn, invoice });
  const timestamp = Math.floor(Date.now() / 1000);
  try {
    const res = await fetch(target!, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-regulator-timestamp": String(timestamp),
        "x-regulator-signature": signDelivery(ctx.secret, timestamp, body),
      },
      body,
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let response: unknown = text;
    try {
      response = JSON.parse(text);
    } catch {
      // not JSON: returned as text
    }
    return { status: 200, body: { ok: res.ok, deliveryId, status: res.status, response } };
  } catch (e) {
    return { status: 502, body: { ok: false, deliveryId, error: "delivery_failed", message: (e as Error).name } };
  }
}

/** `v1,<base64 HMAC-SHA256(secret, "timestamp.body")>`. */
export function signDelivery(secret: string, timestamp: number, body: string): string {
  return `v1,${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("base64")}`;
}

// --- Internal helpers ---

/** The largest push request accepted (a larger one is refused like a body that is not JSON). */
const PUSH_BODY_LIMIT = 2 * 1024 * 1024;
