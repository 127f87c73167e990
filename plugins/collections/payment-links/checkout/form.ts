/**
 * The checkout form (POST /pay/:reference, application/x-www-form-urlencoded): the fields the
 * page posts, and their rules against the link. A variable-amount link needs an amount of at least
 * NGN 100; a fixed-amount link pays its amount unless the form says otherwise (the charge then does
 * not match and is refunded, never settled: spec §2.2). A refused form is answered by the page
 * itself (re-rendered with accessible messages), never by the API envelope.
 */
import * as v from "valibot";
import { issuesToErrors, orderedErrors, type FieldErrors } from "../../shared/input.ts";
import { MAX_AMOUNT_KOBO, MIN_AMOUNT_KOBO, parseNgnText } from "../../shared/money.ts";

export const SANDBOX_OUTCOMES = ["success", "failure", "duplicate_report"] as const;
export type SandboxOutcome = (typeof SANDBOX_OUTCOMES)[number];
/** How the payer pays: the payment processor (the sandbox for TEST businesses) or a bank transfer. */
export const PAY_METHODS = ["processor", "bank_transfer"] as const;
export type PayMethod = (typeof PAY_METHODS)[number];

/**
 * The form's fields as the route declares them (OpenAPI): text fields, any of them absent. A
 * url-encoded form always passes; their rules depend on the link, so the page checks them
 * (`parseCheckoutForm`) and answers its own 422 page.
 */
export const CheckoutFormFields = v.optional(
  v.object({
    email: v.optional(v.string()),
    amount: v.optional(v.string()),
    outcome: v.optional(v.string()),
    method: v.optional(v.string()),
    checkout_token: v.optional(v.string()),
  }),
);

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
  method: v.optional(v.picklist(PAY_METHODS, "Choose how you want to pay."), "processor"),
  checkout_token: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9-]{8,64}$/, "The form is out of date; reload the page.")), ""),
});

export interface CheckoutInput {
  email: string;
  /** The amount the customer pays for (before a CUSTOMER fee), in kobo. */
  amountKobo: number;
  outcome: SandboxOutcome;
  /** A form without a method pays through the processor (the flow before transfers existed). */
  method: PayMethod;
  /** The form's one-time token (a resubmitted form answers the same session). */
  token: string | null;
}

/** Validates the checkout form against the link (see the module comment). */
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
      method: result.output.method,
      token: result.output.checkout_token === "" ? null : result.output.checkout_token,
    },
  };
}

// --- Internal helpers ---

const _FORM_ORDER = ["amount", "email", "method", "outcome", "checkout_token"];
