/**
 * Input shapes of Stored mode: the intake document (the regulator's invoice document where
 * `business_id` and `irn` may be left to the gateway; only the fields the gateway reads are checked,
 * the regulator validates the rest), the invoice list query, the invoice id, and the regulator's
 * inbound delivery.
 */
import * as v from "valibot";
import { INVOICE_STATUSES } from "../invoice/stored-invoices.ts";

/** The invoice-number part of an IRN: what `invoice_reference` becomes when the gateway builds the IRN. */
export const INVOICE_REFERENCE = /^[A-Za-z0-9]{1,64}$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/;

export const IntakeBody = v.looseObject(
  {
    business_id: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
    irn: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
    invoice_reference: v.optional(v.pipe(v.string(), v.regex(INVOICE_REFERENCE, "1 to 64 letters and digits"))),
    issue_date: v.optional(v.pipe(v.string(), v.regex(ISO_DATE, "a date YYYY-MM-DD"))),
    accounting_supplier_party: v.looseObject({ tin: v.pipe(v.string(), v.minLength(1), v.maxLength(64)) }),
    invoice_line: v.optional(v.array(v.looseObject({}, "an invoice line must be an object"))),
  },
  "the intake document must be a JSON object",
);
export type IntakeDocument = v.InferOutput<typeof IntakeBody>;

export const InvoiceParams = v.object({
  invoiceId: v.pipe(v.string(), v.uuid("an invoice id (UUID)")),
});

const DATE_OR_TIME = v.pipe(
  v.string(),
  v.check((s) => (ISO_DATE.test(s) || ISO_DATE_TIME.test(s)) && !Number.isNaN(Date.parse(s)), "a date YYYY-MM-DD or an ISO 8601 date-time"),
);

export const ListQuery = v.strictObject({
  limit: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,3}$/, "an integer from 1 to 100"), v.transform(Number), v.minValue(1), v.maxValue(100)),
  ),
  cursor: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(1024))),
  status: v.optional(v.picklist(INVOICE_STATUSES)),
  subBusinessId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(255))),
  direction: v.optional(v.picklist(["outbound", "inbound"])),
  createdFrom: v.optional(DATE_OR_TIME),
  createdTo: v.optional(DATE_OR_TIME),
});
export type ListQueryInput = v.InferOutput<typeof ListQuery>;

/** `createdFrom` → epoch ms (a date means its first millisecond, UTC). */
export function rangeStart(value: string): number {
  return Date.parse(ISO_DATE.test(value) ? `${value}T00:00:00.000Z` : value);
}

/** `createdTo` → epoch ms, inclusive (a date means the whole UTC day). */
export function rangeEnd(value: string): number {
  return ISO_DATE.test(value) ? Date.parse(`${value}T23:59:59.999Z`) : Date.parse(value);
}

/** The operator's list: the merchant list's filters, plus the business. */
export const AdminListQuery = v.strictObject({
  ...ListQuery.entries,
  businessId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
});
export type AdminListQueryInput = v.InferOutput<typeof AdminListQuery>;

/**
 * The operator's resolution of a frozen invoice, after checking at the regulator what happened:
 * a frozen sign was `signed` or `not_signed`; a frozen transmission was `transmitted` or
 * `not_transmitted`.
 */
export const ResolutionBody = v.strictObject({
  outcome: v.picklist(["signed", "not_signed", "transmitted", "not_transmitted"]),
});
export type ResolutionInput = v.InferOutput<typeof ResolutionBody>;

/** Transmit and cancel take exactly `{}`. */
export const EmptyBody = v.strictObject({}, "the body must be {}");

/**
 * The regulator's inbound delivery (DECISIONS.md "Stored mode", inbound invoices): one invoice
 * addressed to a buyer TIN, in the regulator environment it came from, with the regulator's
 * delivery id (a repeated id is the same delivery).
 */
export const InboundDelivery = v.strictObject({
  delivery_id: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, "1 to 128 of A-Z a-z 0-9 . _ : -")),
  environment: v.picklist(["TEST", "LIVE"]),
  buyer_tin: v.pipe(v.string(), v.minLength(1), v.maxLength(64)),
  irn: v.pipe(v.string(), v.minLength(1), v.maxLength(128)),
  invoice: v.record(v.string(), v.unknown(), "the invoice must be a JSON object"),
});
export type InboundDeliveryInput = v.InferOutput<typeof InboundDelivery>;
