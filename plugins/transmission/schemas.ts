/**
 * Input of the Pass-through transmission: the IRN path parameter and the body, which must be
 * exactly `{}` (spec §4.2: otherwise 400 GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import { irnMatchesTemplate, parseIrn } from "../../adapters/regulator/irn.ts";

export const TransmitParams = v.object({ irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

/** Body must be exactly the empty JSON object. */
export function checkEmptyBody(body: unknown): void {
  if (typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw gwError("GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY", { detail: "The Pass-through transmit body must be exactly {}." });
}

/** Well-formed (400 GW_INVOICE_IRN_INVALID) and following the represented business's template (403). */
export function checkTransmitIrn(irn: string, template: string | null): void {
  if (!parseIrn(irn))
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The IRN is malformed; expected {InvoiceNo}-{ServiceID}-{YYYYMMDD}.",
      violations: [{ location: "path", field: "irn", code: "FORMAT", detail: "IRN malformed" }],
    });
  if (!irnMatchesTemplate(irn, template))
    throw gwError("GW_INVOICE_IRN_FORBIDDEN", { detail: "The IRN is not bound to this represented business (service id / IRN template)." });
}
