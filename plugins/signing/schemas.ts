/**
 * Input shapes and pure checks of the signing plugin: the IRN format of spec §2.3 and its binding to
 * a represented business (the IRN template carries the business's service id), path parameters,
 * and the few body fields the gateway itself reads (spec §9: it validates only what it needs).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";

/** `{InvoiceNo}-{ServiceID}-{YYYYMMDD}`: letters/digits, 8 letters/digits, a real calendar date. */
const IRN = /^([A-Za-z0-9]{1,64})-([A-Za-z0-9]{8})-(\d{4})(\d{2})(\d{2})$/;

export interface ParsedIrn {
  irn: string;
  invoiceNumber: string;
  serviceId: string;
}

/** The IRN's parts, or null when malformed (including an impossible date). */
export function parseIrn(irn: unknown): ParsedIrn | null {
  if (typeof irn !== "string") return null;
  const m = IRN.exec(irn);
  if (!m) return null;
  const [, invoiceNumber, serviceId, y, mo, d] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (date.getUTCFullYear() !== Number(y) || date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d)) return null;
  return { irn, invoiceNumber: invoiceNumber!, serviceId: serviceId! };
}

/** Does the IRN follow the represented business's template (`{{invoice_id}}-94ND90NR-{{YYYYMMDD}}`)? */
export function irnMatchesTemplate(irn: string, template: string | null): boolean {
  if (!template) return false;
  const parts = template.split(/(\{\{invoice_id\}\}|\{\{YYYYMMDD\}\})/);
  const source = parts
    .map((p) => (p === "{{invoice_id}}" ? "[A-Za-z0-9]+" : p === "{{YYYYMMDD}}" ? "\\d{8}" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`).test(irn);
}

/**
 * The IRN, checked: well-formed (400 GW_INVOICE_IRN_INVALID) and bound to the represented business,
 * i.e. it follows that business's IRN template, which carries its service id (403 GW_INVOICE_IRN_FORBIDDEN).
 */
export function checkIrn(irn: unknown, irnTemplate: string | null, where: "body" | "path"): ParsedIrn {
  const parsed = parseIrn(irn);
  if (!parsed)
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The IRN is missing or malformed; expected {InvoiceNo}-{ServiceID}-{YYYYMMDD}.",
      violations: [
        where === "body"
          ? { location: "body", pointer: "/irn", code: irn === undefined ? "REQUIRED" : "FORMAT", detail: "IRN missing or malformed" }
          : { location: "path", field: "irn", code: "FORMAT", detail: "IRN malformed" },
      ],
    });
  if (!irnMatchesTemplate(parsed.irn, irnTemplate))
    throw gwError("GW_INVOICE_IRN_FORBIDDEN", { detail: "The IRN is not bound to this represented business (service id / IRN template)." });
  return parsed;
}

export const IrnParams = v.object({ irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

export const ResourceParams = v.object({
  name: v.pipe(v.string(), v.regex(/^[a-z][a-z-]{0,63}$/, "a resource name (lower-case letters and -)")),
});

/** Body of the IRN validation: the regulator's three fields (other fields are refused). */
export const IrnValidationBody = v.strictObject({
  invoice_reference: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  business_id: v.pipe(v.string(), v.minLength(1), v.maxLength(255)),
  irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
});
export type IrnValidationInput = v.InferOutput<typeof IrnValidationBody>;

/** Body of the payment-status update: the regulator validates the value itself. */
export const PaymentUpdateBody = v.looseObject({ payment_status: v.pipe(v.string(), v.minLength(1), v.maxLength(32)) });

/** A JSON object (an invoice document): the regulator validates its shape. */
export const InvoiceDocumentBody = v.pipe(
  v.record(v.string(), v.unknown(), "the invoice document must be a JSON object"),
);

/** "50.00" → 5000 (integer kobo). */
export function nairaToKobo(amount: string): number {
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(amount);
  if (!m) throw new RangeError("fee is not an NGN amount");
  return Number(m[1]) * 100 + Number((m[2] ?? "0").padEnd(2, "0"));
}
