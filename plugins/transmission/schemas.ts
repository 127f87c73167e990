/**
 * Input of the Pass-through transmission: the IRN path parameter and the body, which must be
 * exactly `{}` (spec §4.2: otherwise 400 GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";

export const TransmitParams = v.object({ irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

const IRN = /^([A-Za-z0-9]{1,64})-([A-Za-z0-9]{8})-(\d{4})(\d{2})(\d{2})$/;

/** Body must be exactly the empty JSON object. */
export function checkEmptyBody(body: unknown): void {
  if (typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw gwError("GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY", { detail: "The Pass-through transmit body must be exactly {}." });
}

/** Well-formed (400 GW_INVOICE_IRN_INVALID) and following the represented business's template (403). */
export function checkTransmitIrn(irn: string, template: string | null): void {
  const m = IRN.exec(irn);
  const valid =
    m !== null &&
    (() => {
      const [y, mo, d] = [Number(m[3]), Number(m[4]), Number(m[5])];
      const date = new Date(Date.UTC(y, mo - 1, d));
      return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
    })();
  if (!valid)
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The IRN is malformed; expected {InvoiceNo}-{ServiceID}-{YYYYMMDD}.",
      violations: [{ location: "path", field: "irn", code: "FORMAT", detail: "IRN malformed" }],
    });
  const source = (template ?? "")
    .split(/(\{\{invoice_id\}\}|\{\{YYYYMMDD\}\})/)
    .map((p) => (p === "{{invoice_id}}" ? "[A-Za-z0-9]+" : p === "{{YYYYMMDD}}" ? "\\d{8}" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  if (!template || !new RegExp(`^${source}$`).test(irn))
    throw gwError("GW_INVOICE_IRN_FORBIDDEN", { detail: "The IRN is not bound to this represented business (service id / IRN template)." });
}
