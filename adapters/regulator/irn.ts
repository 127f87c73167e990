/**
 * The regulator's IRN format (spec §2.3): `{InvoiceNo}-{ServiceID}-{YYYYMMDD}`, and its binding to a
 * business through the business's IRN template (which carries its service id). Pure functions, shared
 * by the signing and transmission plugins; each maps a failure to its own GW_* answer.
 */

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

/** Does the IRN follow the business's template (`{{invoice_id}}-94ND90NR-{{YYYYMMDD}}`)? */
export function irnMatchesTemplate(irn: string, template: string | null): boolean {
  if (!template) return false;
  const parts = template.split(/(\{\{invoice_id\}\}|\{\{YYYYMMDD\}\})/);
  const source = parts
    .map((p) => (p === "{{invoice_id}}" ? "[A-Za-z0-9]+" : p === "{{YYYYMMDD}}" ? "\\d{8}" : p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("");
  return new RegExp(`^${source}$`).test(irn);
}
