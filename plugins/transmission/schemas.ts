/**
 * Input of the Pass-through transmission: the IRN path parameter and the body, which must be
 * exactly `{}` (spec §4.2: otherwise 400 GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";

export { checkTransmitIrn } from "../invoice/checks.ts";

export const TransmitParams = v.object({ irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

/** Body must be exactly the empty JSON object. */
export function checkEmptyBody(body: unknown): void {
  if (typeof body === "object" && body !== null && !Array.isArray(body) && Object.keys(body).length === 0) return;
  throw gwError("GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY", { detail: "The Pass-through transmit body must be exactly {}." });
}
