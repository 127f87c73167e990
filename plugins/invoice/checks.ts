/**
 * The invoice and IRN checks of spec §4.2 rule 4, shared by Pass-through signing, transmission and
 * the Stored intake: an IRN is well formed ({InvoiceNo}-{ServiceID}-{YYYYMMDD}) and bound to the
 * represented business (it follows that business's IRN template, which carries its service id), and
 * an invoice document names the represented business and its supplier TIN. The gateway checks only
 * the fields it needs (spec §9); the regulator validates the rest.
 */
import { irnFromTemplate, irnMatchesTemplate, parseIrn, type ParsedIrn } from "../../adapters/regulator/irn.ts";
import { gwError, type Violation } from "../../core/errors/gateway-error.ts";
import type { RepresentedBusiness } from "./represented-businesses.ts";

export type { ParsedIrn };

/** The IRN a represented business's template gives (plain or example-text form), or null when it has none usable. */
export function irnOfTemplate(irnTemplate: string | null, invoiceNumber: string, yyyymmdd: string): string | null {
  return irnFromTemplate(irnTemplate, invoiceNumber, yyyymmdd);
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
  _checkBinding(parsed.irn, irnTemplate);
  return parsed;
}

/** The path IRN of a transmission (always present): well-formed (400) and bound to the represented business (403). */
export function checkTransmitIrn(irn: string, irnTemplate: string | null): void {
  if (!parseIrn(irn))
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The IRN is malformed; expected {InvoiceNo}-{ServiceID}-{YYYYMMDD}.",
      violations: [{ location: "path", field: "irn", code: "FORMAT", detail: "IRN malformed" }],
    });
  _checkBinding(irn, irnTemplate);
}

/**
 * §4.2 rule 4 on a regulator invoice document (business_id, supplier TIN, IRN format and binding,
 * invoice reference); returns the parsed IRN.
 */
export function checkInvoice(sub: RepresentedBusiness, doc: Record<string, unknown>): ParsedIrn {
  const tin = _supplierTin(doc);
  const problems: Violation[] = [];
  if (typeof doc.business_id !== "string") problems.push({ location: "body", pointer: "/business_id", code: "REQUIRED", detail: "required (string)" });
  if (typeof tin !== "string")
    problems.push({ location: "body", pointer: "/accounting_supplier_party/tin", code: "REQUIRED", detail: "required (string)" });
  if (problems.length > 0) throw gwError("GW_REQUEST_VALIDATION_FAILED", { detail: "The invoice lacks fields the gateway checks; see errors.", violations: problems });
  checkBusinessId(sub, doc.business_id, true);
  if (tin !== sub.identity.tin)
    throw gwError("GW_INVOICE_SUPPLIER_TIN_MISMATCH", {
      detail: "The supplier TIN differs from the represented business's stored TIN.",
      violations: [{ location: "body", pointer: "/accounting_supplier_party/tin", code: "MISMATCH", detail: "differs from the stored TIN" }],
    });
  const irn = checkIrn(doc.irn, sub.identity.irnTemplate, "body");
  checkReference(irn, doc.invoice_reference, "body");
  return irn;
}

/** `business_id` must be the represented business's current externalBusinessId (422 GW_INVOICE_BUSINESS_MISMATCH). */
export function checkBusinessId(sub: Pick<RepresentedBusiness, "externalBusinessId">, businessId: unknown, withViolation: boolean): void {
  if (businessId === sub.externalBusinessId) return;
  throw gwError("GW_INVOICE_BUSINESS_MISMATCH", {
    detail: "business_id differs from the current externalBusinessId of the represented business.",
    ...(withViolation ? { violations: [{ location: "body", pointer: "/business_id", code: "MISMATCH", detail: "differs from the current externalBusinessId" }] } : {}),
  });
}

/** A body `invoice_reference`, when sent, must be the IRN's invoice number (spec §4.2 rule 4). */
export function checkReference(irn: ParsedIrn, reference: unknown, where: "body"): void {
  if (reference === undefined) return;
  if (reference !== irn.invoiceNumber)
    throw gwError("GW_INVOICE_REFERENCE_MISMATCH", {
      detail: "The invoice reference differs from the invoice number in the IRN.",
      violations: [{ location: where, pointer: "/invoice_reference", code: "MISMATCH", detail: "differs from the IRN's invoice number" }],
    });
}

/** An IRN in a body, when sent, must be the IRN of the path (422 GW_INVOICE_REFERENCE_MISMATCH). */
export function checkBodyIrn(body: Record<string, unknown> | undefined, pathIrn: string): void {
  if (!body || body.irn === undefined || body.irn === pathIrn) return;
  throw gwError("GW_INVOICE_REFERENCE_MISMATCH", {
    detail: "The IRN in the body differs from the IRN in the path.",
    violations: [{ location: "body", pointer: "/irn", code: "MISMATCH", detail: "differs from the path IRN" }],
  });
}

// --- Internal helpers ---

function _checkBinding(irn: string, irnTemplate: string | null): void {
  if (!irnMatchesTemplate(irn, irnTemplate))
    throw gwError("GW_INVOICE_IRN_FORBIDDEN", { detail: "The IRN is not bound to this represented business (service id / IRN template)." });
}

function _supplierTin(doc: Record<string, unknown>): unknown {
  const supplier = doc.accounting_supplier_party;
  return typeof supplier === "object" && supplier !== null ? (supplier as Record<string, unknown>).tin : undefined;
}
