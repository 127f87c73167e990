/**
 * What the regulator enforces on an invoice document (validate and sign), per the documented schema:
 * `docs/Invoice_Schema.md` (Mandatory/Optional per field), the annotated request examples of
 * `docs/FIRS-MBS_E-Invoicing_Documentation.md` and `docs/E_Invoice_Collection.md` (party `tin` and
 * `email` "now mandatory", `telephone` "must start with +", party `id` / `party_name` / address
 * "optional if … is set", `payment_status` PENDING | PAID | CANCELED), and the sandbox notes of
 * `docs/FIRS_Sandbox_Testing_Results.md` (`tax_currency_code` is mandatory) — all in
 * github.com/mukhtar-github/taxpoynt-platform. The invoice type and currency codes are the recorded
 * resource lists (./resources.ts).
 *
 * `createInvoiceChecker` builds the checker once (sets of codes, no per-call allocation beyond the
 * problem list); a call returns the problems found, in document order (empty = valid). Cross-checks
 * against the business (IRN, supplier TIN, parties) are the server's.
 */

/** One problem: a dotted field path (`invoice_line[0].price.price_amount`) and what is wrong. */
export interface InvoiceProblem {
  path: string;
  message: string;
}

export interface InvoiceCheckerOptions {
  invoiceTypeCodes: ReadonlySet<string>;
  currencyCodes: ReadonlySet<string>;
}

export type InvoiceChecker = (doc: Record<string, unknown>) => InvoiceProblem[];

/** The payment statuses of an invoice (UpdateInvoice: "PENDING, PAID, CANCELED"). */
export const PAYMENT_STATUSES: ReadonlySet<string> = new Set(["PENDING", "PAID", "CANCELED"]);

export function createInvoiceChecker(options: InvoiceCheckerOptions): InvoiceChecker {
  const { invoiceTypeCodes, currencyCodes } = options;
  return function checkInvoice(doc) {
    const p: InvoiceProblem[] = [];
    _string(doc, "business_id", "business_id", p, true);
    _string(doc, "irn", "irn", p, true);
    _date(doc, "issue_date", "issue_date", p, true);
    _date(doc, "due_date", "due_date", p, false);
    _time(doc, "issue_time", p);
    _code(doc, "invoice_type_code", invoiceTypeCodes, p, true);
    _code(doc, "payment_status", PAYMENT_STATUSES, p, false);
    _date(doc, "tax_point_date", "tax_point_date", p, false);
    _code(doc, "document_currency_code", currencyCodes, p, true);
    _code(doc, "tax_currency_code", currencyCodes, p, true);
    _date(doc, "actual_delivery_date", "actual_delivery_date", p, false);

    const supplier = _object(doc, "accounting_supplier_party", "accounting_supplier_party", p, true);
    if (supplier) _party(supplier, "accounting_supplier_party", p);
    const customer = _object(doc, "accounting_customer_party", "accounting_customer_party", p, false);
    if (customer) _party(customer, "accounting_customer_party", p);

    const total = _object(doc, "legal_monetary_total", "legal_monetary_total", p, true);
    if (total) {
      for (const k of TOTAL_FIELDS) _number(total, k, `legal_monetary_total.${k}`, p, "any", true);
    }

    const lines = doc.invoice_line;
    if (lines === undefined || lines === null) p.push({ path: "invoice_line", message: "is required" });
    else if (!Array.isArray(lines)) p.push({ path: "invoice_line", message: "must be an array" });
    else if (lines.length === 0) p.push({ path: "invoice_line", message: "must have at least one line" });
    else lines.forEach((line: unknown, i) => _line(line, `invoice_line[${i}]`, p));
    return p;
  };
}

/** The problems as the regulator's free-text `error.details` (at most `max` of them). */
export function detailsText(problems: readonly InvoiceProblem[], max = 10): string {
  return problems
    .slice(0, max)
    .map((x) => `${x.path} ${x.message}`)
    .join("; ");
}

/** UUIDs the way the regulator's Go backend reports them ("invalid UUID length: 13"), or null when valid. */
export function uuidProblem(value: string): string | null {
  if (value.length !== 36) return `invalid UUID length: ${value.length}`;
  return UUID.test(value) ? null : "invalid UUID format";
}

/** A real calendar date (years 1900–2999). */
export function isRealDate(y: number, m: number, d: number): boolean {
  if (y < 1900 || y > 2999 || m < 1 || m > 12 || d < 1) return false;
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

// --- Internal helpers ---

const TOTAL_FIELDS = ["line_extension_amount", "tax_exclusive_amount", "tax_inclusive_amount", "payable_amount"] as const;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const ADDRESS_FIELDS = ["street_name", "city_name", "postal_zone", "country"] as const;

/**
 * A party: `tin` and `email` mandatory, `telephone` starting with "+"; identified either by `id` (a party
 * created at the regulator) or by `party_name` plus an address (`postal_address` or `postal_address_id`).
 */
function _party(party: Record<string, unknown>, at: string, p: InvoiceProblem[]): void {
  _string(party, "tin", `${at}.tin`, p, true);
  const email = _string(party, "email", `${at}.email`, p, true);
  if (email !== undefined && !EMAIL.test(email)) p.push({ path: `${at}.email`, message: "must be an email address" });
  const phone = _string(party, "telephone", `${at}.telephone`, p, false);
  if (phone !== undefined && !phone.startsWith("+")) p.push({ path: `${at}.telephone`, message: "must start with + (country code)" });
  const hasId = _string(party, "id", `${at}.id`, p, false) !== undefined;
  if (hasId) return;
  _string(party, "party_name", `${at}.party_name`, p, true);
  const addressId = _string(party, "postal_address_id", `${at}.postal_address_id`, p, false);
  const address = _object(party, "postal_address", `${at}.postal_address`, p, addressId === undefined);
  if (address) for (const k of ADDRESS_FIELDS) _string(address, k, `${at}.postal_address.${k}`, p, true);
}

function _line(line: unknown, at: string, p: InvoiceProblem[]): void {
  if (!_isObject(line)) {
    p.push({ path: at, message: "must be an object" });
    return;
  }
  _string(line, "hsn_code", `${at}.hsn_code`, p, true);
  _string(line, "product_category", `${at}.product_category`, p, true);
  _number(line, "invoiced_quantity", `${at}.invoiced_quantity`, p, "positive", true);
  _number(line, "line_extension_amount", `${at}.line_extension_amount`, p, "any", true);
  for (const k of ["discount_rate", "discount_amount", "fee_rate", "fee_amount"]) _number(line, k, `${at}.${k}`, p, "non_negative", false);
  const item = _object(line, "item", `${at}.item`, p, true);
  if (item) {
    _string(item, "name", `${at}.item.name`, p, true);
    _string(item, "description", `${at}.item.description`, p, true);
  }
  const price = _object(line, "price", `${at}.price`, p, true);
  if (price) {
    _number(price, "price_amount", `${at}.price.price_amount`, p, "non_negative", true);
    _number(price, "base_quantity", `${at}.price.base_quantity`, p, "positive", true);
    _string(price, "price_unit", `${at}.price.price_unit`, p, true);
  }
}

function _string(o: Record<string, unknown>, key: string, path: string, p: InvoiceProblem[], required: boolean): string | undefined {
  const val = o[key];
  if (val === undefined || val === null || val === "") {
    if (required) p.push({ path, message: "is required" });
    return undefined;
  }
  if (typeof val !== "string") {
    p.push({ path, message: "must be a string" });
    return undefined;
  }
  return val;
}

function _object(o: Record<string, unknown>, key: string, path: string, p: InvoiceProblem[], required: boolean): Record<string, unknown> | undefined {
  const val = o[key];
  if (val === undefined || val === null) {
    if (required) p.push({ path, message: "is required" });
    return undefined;
  }
  if (!_isObject(val)) {
    p.push({ path, message: "must be an object" });
    return undefined;
  }
  return val;
}

function _number(
  o: Record<string, unknown>,
  key: string,
  path: string,
  p: InvoiceProblem[],
  range: "any" | "positive" | "non_negative",
  required: boolean,
): void {
  const val = o[key];
  if (val === undefined || val === null) {
    if (required) p.push({ path, message: "is required" });
  } else if (typeof val !== "number" || !Number.isFinite(val)) p.push({ path, message: "must be a number" });
  else if (range === "positive" && val <= 0) p.push({ path, message: "must be greater than 0" });
  else if (range === "non_negative" && val < 0) p.push({ path, message: "must not be negative" });
}

function _date(o: Record<string, unknown>, key: string, path: string, p: InvoiceProblem[], required: boolean): void {
  const val = o[key];
  if (val === undefined || val === null) {
    if (required) p.push({ path, message: "is required" });
    return;
  }
  const m = typeof val === "string" ? ISO_DATE.exec(val) : null;
  if (!m || !isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) p.push({ path, message: "must be a date YYYY-MM-DD" });
}

function _time(o: Record<string, unknown>, key: string, p: InvoiceProblem[]): void {
  const val = o[key];
  if (val === undefined || val === null) return;
  if (typeof val !== "string" || !TIME.test(val)) p.push({ path: key, message: "must be a time HH:MM:SS" });
}

function _code(o: Record<string, unknown>, key: string, allowed: ReadonlySet<string>, p: InvoiceProblem[], required: boolean): void {
  const val = o[key];
  if (val === undefined || val === null || val === "") {
    if (required) p.push({ path: key, message: "is required" });
    return;
  }
  if (typeof val !== "string") p.push({ path: key, message: "must be a string" });
  else if (!allowed.has(val)) p.push({ path: key, message: "is not a known code" });
}

function _isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
