/**
 * Input shapes of the signing plugin: path parameters and the few body fields the gateway itself
 * reads (spec §9: it validates only what it needs). The IRN and invoice checks are the invoice kit's
 * (plugins/invoice/checks.ts).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import { REGULATOR_RESOURCES } from "../../adapters/regulator/port.ts";

export { checkIrn } from "../invoice/checks.ts";

export const IrnParams = v.object({ irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)) });

export const ResourceParams = v.object({
  name: v.pipe(v.string(), v.regex(/^[a-z][a-z-]{0,63}$/, "a resource name (lower-case letters and -)")),
});

/**
 * A resource list the regulator serves; any other name is no route at the regulator either (its
 * router answers an un-enveloped 404, a contract failure if sent), so it is answered here: 404.
 */
export function checkResourceName(name: string): void {
  if (!REGULATOR_RESOURCES.has(name))
    throw gwError("GW_ROUTE_NOT_FOUND", { detail: `No regulator resource list is named so; known: ${[...REGULATOR_RESOURCES].join(", ")}.` });
}

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

