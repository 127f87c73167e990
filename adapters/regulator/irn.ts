/**
 * The regulator's IRN format (spec §2.3): `{InvoiceNo}-{ServiceID}-{YYYYMMDD}`, and its binding to a
 * business through the business's IRN template, which carries the business's service ID (the real
 * entity answer has no `service_id` field: the template is the only place it lives). Pure functions,
 * shared by the regulator client (entity parsing), the signing and transmission plugins; each maps a
 * failure to its own GW_* answer.
 *
 * Templates come in two forms, both accepted:
 *   `{{invoice_id}}-94ND90NR-{{YYYYMMDD}}`                                       (plain)
 *   `{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}`           (the real answer's form:
 *     placeholders carrying example text, FIRS_Sandbox_Testing_Results.md, mukhtar-github/taxpoynt-platform)
 */

/** `{InvoiceNo}-{ServiceID}-{YYYYMMDD}`: letters/digits, 8 letters/digits, a real calendar date. */
const IRN = /^([A-Za-z0-9]{1,64})-([A-Za-z0-9]{8})-(\d{4})(\d{2})(\d{2})$/;

/**
 * A template in the supported format: the invoice-number placeholder, the 8-character service ID, the
 * date placeholder; each placeholder may carry `(…)` example text and inner spaces.
 */
const TEMPLATE = /^\{\{\s*invoice_id\s*(?:\([^{}()]*\))?\s*\}\}-([A-Za-z0-9]{8})-\{\{\s*YYYYMMDD\s*(?:\([^{}()]*\))?\s*\}\}$/;

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

/** The service ID a template carries, or null when the template is not in the supported format. */
export function serviceIdOfTemplate(template: unknown): string | null {
  if (typeof template !== "string") return null;
  return TEMPLATE.exec(template)?.[1] ?? null;
}

/**
 * The IRN the template gives for an invoice number and a `YYYYMMDD` date (either template form:
 * the placeholders' example text is never copied), or null when the template is not supported.
 */
export function irnFromTemplate(template: string | null, invoiceNumber: string, yyyymmdd: string): string | null {
  const serviceId = serviceIdOfTemplate(template);
  return serviceId === null ? null : `${invoiceNumber}-${serviceId}-${yyyymmdd}`;
}

/** Does the (well-formed) IRN follow the business's template, i.e. carry its service ID? */
export function irnMatchesTemplate(irn: string, template: string | null): boolean {
  const serviceId = serviceIdOfTemplate(template);
  return serviceId !== null && parseIrn(irn)?.serviceId === serviceId;
}
