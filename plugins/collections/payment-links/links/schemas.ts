/**
 * valibot input schemas of the payment-link API. Every message is written here and never repeats
 * the rejected value. The bodies are declared on their routes (`schemas.body`): the core validates
 * them, OpenAPI shows them, and a failure answers the collections 422 listing every failing field
 * with its name as sent (`amount`, `customer_emails.1`); query strings go through the route
 * declarations too (the core lists them the same way).
 */
import * as v from "valibot";
import { CONTROL, EMAIL, LIMIT, PAGE, SEARCH, envelopeBody } from "../../shared/input.ts";
import { MAX_AMOUNT_KOBO, MIN_AMOUNT_KOBO, ngnToKobo } from "../../shared/money.ts";
import { parseWindowEdge } from "../../shared/time.ts";
import { MAX_REDIRECT_LENGTH, isRedirectUrl } from "./redirect.ts";

export const MAX_CUSTOMER_EMAILS = 50;
export const LINK_STATUSES = ["active", "inactive"] as const;
export const TRANSACTION_STATUSES = ["pending", "successful", "failed", "abandoned", "refunded"] as const;

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

/** A required, trimmed, non-empty single-line text of at most `max` characters. */
const text = (max: number) =>
  v.pipe(
    v.string("must be a string"),
    v.trim(),
    v.nonEmpty("must not be empty"),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => !CONTROL.test(s), "must not contain control characters"),
  );

const WINDOW_DATE = v.pipe(
  v.string("must be an ISO 8601 date or date-time string"),
  v.trim(),
  v.check(
    (s) => parseWindowEdge(s, "start") !== null,
    "must be an ISO 8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM:SSZ)",
  ),
);

// ---------------------------------------------------------------------------
// POST /api/v1/payment-link
// ---------------------------------------------------------------------------

export const CreatePaymentLinkBody = envelopeBody(
  v.pipe(
    v.object(
      {
        link_name: text(150),
        narration: text(500),
        fee_bearer: v.picklist(["MERCHANT", "CUSTOMER"], "must be MERCHANT or CUSTOMER"),
        source_reference: text(250),
        amount: v.nullish(
          v.pipe(
            v.number("must be a number"),
            v.check((n) => Number.isFinite(n), "must be a finite number"),
            v.check((n) => ngnToKobo(n) !== null, "must have at most two decimal places"),
            v.minValue(MIN_AMOUNT_KOBO / 100, `must be at least ${MIN_AMOUNT_KOBO / 100} (NGN)`),
            v.maxValue(MAX_AMOUNT_KOBO / 100, `must be at most ${MAX_AMOUNT_KOBO / 100} (NGN)`),
          ),
        ),
        customer_emails: v.nullish(
          v.pipe(
            v.array(EMAIL, "must be an array of e-mail addresses"),
            v.maxLength(MAX_CUSTOMER_EMAILS, `must have at most ${MAX_CUSTOMER_EMAILS} addresses`),
          ),
        ),
        redirect_link: v.nullish(
          v.pipe(
            v.string("must be a string"),
            v.trim(),
            v.maxLength(MAX_REDIRECT_LENGTH, `must be at most ${MAX_REDIRECT_LENGTH} characters`),
            // Blank: the customer stays on the success page (spec §2.2).
            v.check((s) => s === "" || isRedirectUrl(s), "must be an absolute http or https URL without credentials, spaces or control characters"),
          ),
        ),
        start_date: v.nullish(WINDOW_DATE),
        end_date: v.nullish(WINDOW_DATE),
      },
      "must be a JSON object",
    ),
    v.forward(
      v.partialCheck(
        [["start_date"], ["end_date"]],
        (input) => {
          if (!input.start_date || !input.end_date) return true;
          return parseWindowEdge(input.end_date, "end")! >= parseWindowEdge(input.start_date, "start")!;
        },
        "must not be before start_date",
      ),
      ["end_date"],
    ),
  ),
);
export type CreatePaymentLinkInput = v.InferOutput<typeof CreatePaymentLinkBody>;

// ---------------------------------------------------------------------------
// POST /api/v1/payment-link/toggle-status
// ---------------------------------------------------------------------------

export const ToggleStatusBody = envelopeBody(
  v.object(
    {
      link_id: text(250),
      activate: v.boolean("must be true or false"),
    },
    "must be a JSON object",
  ),
);
export type ToggleStatusInput = v.InferOutput<typeof ToggleStatusBody>;

// ---------------------------------------------------------------------------
// Query strings (route declarations)
// ---------------------------------------------------------------------------

export const ListLinksQuery = v.object({
  page: PAGE,
  limit: LIMIT,
  status: v.optional(v.picklist(LINK_STATUSES, "must be active or inactive")),
  search: SEARCH,
});
export type ListLinksInput = v.InferOutput<typeof ListLinksQuery>;

export const ListTransactionsQuery = v.object({
  page: PAGE,
  limit: LIMIT,
  status: v.optional(v.picklist(TRANSACTION_STATUSES, `must be one of ${TRANSACTION_STATUSES.join(", ")}`)),
  search: SEARCH,
});
export type ListTransactionsInput = v.InferOutput<typeof ListTransactionsQuery>;
