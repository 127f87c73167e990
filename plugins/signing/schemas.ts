/**
 * Input shapes and pure checks of the signing plugin: the IRN format of spec §2.3 and its binding to
 * a represented business (the IRN template carries the business's service id), path parameters,
 * and the few body fields the gateway itself reads (spec §9: it validates only what it needs).
 */
import * as v from "valibot";
import { gwError } from "../../core/errors/gateway-error.ts";
import { irnMatchesTemplate, parseIrn, type ParsedIrn } from "../../adapters/regulator/irn.ts";
import { REGULATOR_RESOURCES } from "../../adapters/regulator/port.ts";

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

