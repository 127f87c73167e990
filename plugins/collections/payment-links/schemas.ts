/**
 * valibot input schemas of the payment-link API and the checkout form. Every message is written
 * here and never repeats the rejected value. Bodies are checked with `parseInput`, which lists
 * every failing field with its name as sent (`amount`, `customer_emails.1`) in a 422 envelope;
 * query strings go through the route declarations (the core lists them the same way).
 */
import * as v from "valibot";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { MAX_AMOUNT_KOBO, MIN_AMOUNT_KOBO, ngnToKobo, parseNgnText } from "../shared/money.ts";
import { parseWindowEdge } from "../shared/time.ts";

export const VALIDATION_MESSAGE = "The request has invalid values; see errors.";
export const MAX_PAGE_LIMIT = 100;
export const MAX_CUSTOMER_EMAILS = 50;
export const LINK_STATUSES = ["active", "inactive"] as const;
export const TRANSACTION_STATUSES = ["pending", "successful", "failed", "abandoned", "refunded"] as const;
export const SANDBOX_OUTCOMES = ["success", "failure", "duplicate_report"] as const;
export type SandboxOutcome = (typeof SANDBOX_OUTCOMES)[number];

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f]/;

/** A required, trimmed, non-empty single-line text of at most `max` characters. */
const text = (max: number) =>
  v.pipe(
    v.string("must be a string"),
    v.trim(),
    v.nonEmpty("must not be empty"),
    v.maxLength(max, `must be at most ${max} characters`),
    v.check((s) => !CONTROL.test(s), "must not contain control characters"),
  );

export const EMAIL = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.nonEmpty("must not be empty"),
  v.maxLength(254, "must be at most 254 characters"),
  v.email("must be a valid e-mail address"),
);

const WINDOW_DATE = v.pipe(
  v.string("must be an ISO 8601 date or date-time string"),
  v.trim(),
  v.check(
    (s) => parseWindowEdge(s, "start") !== null,
    "must be an ISO 8601 date (YYYY-MM-DD) or date-time (YYYY-MM-DDTHH:MM:SSZ)",
  ),
);

export const MAX_REDIRECT_LENGTH = 2048;

/**
 * Where a successful payment sends the payer: the stored `redirect_link` serialised by the URL
 * standard (always a valid Location value: ASCII, no CR/LF/NUL), or null when there is none or it
 * is unusable (a value stored before creation validated it strictly). Never throws.
 */
export function redirectTarget(stored: string | null | undefined): string | null {
  if (!stored || !_isRedirectUrl(stored)) return null;
  return new URL(stored).href;
}

/** An absolute http(s) URL with a host, no credentials, no whitespace or control characters. */
function _isRedirectUrl(s: string): boolean {
  if (s.length > MAX_REDIRECT_LENGTH || WHITESPACE_OR_CONTROL.test(s) || !URL.canParse(s)) return false;
  const u = new URL(s);
  return (u.protocol === "https:" || u.protocol === "http:") && u.hostname !== "" && u.username === "" && u.password === "";
}

// eslint-disable-next-line no-control-regex
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/;

// ---------------------------------------------------------------------------
// POST /api/v1/payment-link
// ---------------------------------------------------------------------------

export const CreatePaymentLinkBody = v.pipe(
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
          v.check((s) => s === "" || _isRedirectUrl(s), "must be an absolute http or https URL without credentials, spaces or control characters"),
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
);
export type CreatePaymentLinkInput = v.InferOutput<typeof CreatePaymentLinkBody>;

// ---------------------------------------------------------------------------
// POST /api/v1/payment-link/toggle-status
// ---------------------------------------------------------------------------

export const ToggleStatusBody = v.object(
  {
    link_id: text(250),
    activate: v.boolean("must be true or false"),
  },
  "must be a JSON object",
);

// ---------------------------------------------------------------------------
// Query strings (route declarations)
// ---------------------------------------------------------------------------

/** An optional query integer from 1 to `max` (sent as text), `fallback` when absent. */
export const positiveInt = (max: number, fallback: string, message: string) =>
  v.optional(
    v.pipe(
      v.string(message),
      v.regex(/^[1-9][0-9]{0,8}$/, message),
      v.transform(Number),
      v.maxValue(max, message),
    ),
    fallback,
  );

export const PAGE = positiveInt(1_000_000, "1", "must be an integer from 1");
const LIMIT = positiveInt(MAX_PAGE_LIMIT, "15", `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
export const SEARCH = v.optional(v.pipe(v.string("must be a string"), v.maxLength(100, "must be at most 100 characters")));

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

export const PageQuery = v.object({ page: PAGE, limit: LIMIT });
export type PageInput = v.InferOutput<typeof PageQuery>;

// ---------------------------------------------------------------------------
// Checkout form (POST /pay/:reference, application/x-www-form-urlencoded)
// ---------------------------------------------------------------------------

export const CheckoutForm = v.object({
  email: v.pipe(
    v.optional(v.string(), ""),
    v.trim(),
    v.nonEmpty("Enter your e-mail address."),
    v.maxLength(254, "The e-mail address is too long."),
    v.email("Enter an e-mail address like name@example.com."),
  ),
  amount: v.optional(v.string(), ""),
  outcome: v.optional(v.picklist(SANDBOX_OUTCOMES, "Choose one of the sandbox outcomes."), "success"),
  checkout_token: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{8,64}$/, "The form is out of date; reload the page.")), ""),
});

export interface CheckoutInput {
  email: string;
  /** The amount the customer pays for (before a CUSTOMER fee), in kobo. */
  amountKobo: number;
  outcome: SandboxOutcome;
  /** The form's one-time token (a resubmitted form answers the same session). */
  token: string | null;
}

export type FieldErrors = Array<{ field: string; message: string }>;

/**
 * Validates the checkout form against the link: a variable-amount link needs an amount of at least
 * NGN 100; a fixed-amount link pays its amount unless the form says otherwise (the charge then
 * does not match and is refunded, never settled: spec §2.2).
 */
export function parseCheckoutForm(
  body: unknown,
  fixedAmountKobo: number | null,
): { ok: true; value: CheckoutInput } | { ok: false; errors: FieldErrors; email: string; amount: string } {
  const raw = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
  const result = v.safeParse(CheckoutForm, raw, { abortPipeEarly: true });
  const errors: FieldErrors = result.success ? [] : issuesToErrors(result.issues);
  const amountText = typeof raw.amount === "string" ? raw.amount.trim() : "";
  let amountKobo: number | null = null;
  if (amountText === "" && fixedAmountKobo !== null) amountKobo = fixedAmountKobo;
  else if (amountText === "") errors.push({ field: "amount", message: "Enter the amount you want to pay." });
  else {
    amountKobo = parseNgnText(amountText);
    if (amountKobo === null) errors.push({ field: "amount", message: "Enter the amount as a number, like 1500 or 1500.50." });
    else if (amountKobo < MIN_AMOUNT_KOBO) errors.push({ field: "amount", message: "The minimum amount is NGN 100.00." });
    else if (amountKobo > MAX_AMOUNT_KOBO) errors.push({ field: "amount", message: "The maximum amount is NGN 100,000,000.00." });
  }
  const email = typeof raw.email === "string" ? raw.email.trim() : "";
  if (errors.length > 0 || !result.success || amountKobo === null) {
    return { ok: false, errors: orderedErrors(errors, _FORM_ORDER), email, amount: amountText };
  }
  return {
    ok: true,
    value: {
      email: result.output.email,
      amountKobo,
      outcome: result.output.outcome,
      token: result.output.checkout_token === "" ? null : result.output.checkout_token,
    },
  };
}

// ---------------------------------------------------------------------------
// Issue mapping
// ---------------------------------------------------------------------------

/** Runs a body schema; on failure throws a 422 CollectionsError listing every failing field. */
export function parseInput<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input, { abortEarly: false });
  if (result.success) return result.output;
  throw new CollectionsError(422, VALIDATION_MESSAGE, issuesToErrors(result.issues));
}

/** valibot issues → `{ field, message }` with dotted field names as sent; one entry per field. */
export function issuesToErrors(issues: readonly v.BaseIssue<unknown>[]): FieldErrors {
  const out: FieldErrors = [];
  const seen = new Set<string>();
  for (const issue of issues) {
    const field = (issue.path ?? []).map((p) => String(p.key)).join(".") || "body";
    if (seen.has(field)) continue;
    seen.add(field);
    out.push({ field, message: _message(issue) });
  }
  return out;
}

/** The first error of each field, in `order` (fields not listed go last). */
export function orderedErrors(errors: FieldErrors, order: readonly string[]): FieldErrors {
  const seen = new Set<string>();
  const unique = errors.filter((e) => (seen.has(e.field) ? false : (seen.add(e.field), true)));
  const rank = (f: string) => {
    const i = order.indexOf(f);
    return i < 0 ? order.length : i;
  };
  return unique.sort((a, b) => rank(a.field) - rank(b.field));
}

// --- Internal helpers ---

function _message(issue: v.BaseIssue<unknown>): string {
  if (issue.kind === "schema" && issue.received === "undefined") return "is required";
  // Our schemas carry their own messages; valibot's defaults quote the input ("Received …").
  return /\breceived\b/i.test(issue.message) ? "is invalid" : issue.message;
}

const _FORM_ORDER = ["amount", "email", "outcome", "checkout_token"];
