/**
 * Body rules of the virtual-account, customer and sandbox-deposit API (spec §2.4, §8; DECISIONS.md
 * "Virtual accounts", "Deposits (sandbox)", "Customers"). Each body is declared on its route
 * (`schemas.body`): the core validates it, OpenAPI shows it, and a failure answers the collections
 * 422 listing every failing field with a message written here, never repeating the rejected value.
 * Anything but a JSON object is refused as a whole (field `body`). Query strings: query-schemas.ts.
 */
import * as v from "valibot";
import { CONTROL, EMAIL, deferredEnvelopeBody, envelopeBody, jsonObject } from "../shared/input.ts";
import { MAX_AMOUNT_KOBO, ngnToKobo } from "../shared/money.ts";
import { parseFullTime } from "../shared/time.ts";

export const ACCOUNT_TYPES = ["single_use", "multi_use"] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const ACCOUNT_STATUSES = ["active", "inactive", "expired"] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** A single_use account expires at most this long after its creation (spec §8). */
export const MAX_EXPIRY_WINDOW_MS = 24 * 60 * 60_000;

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

/** Trimmed single-line text of `min`..`max` characters. */
const text = (min: number, max: number) =>
  v.pipe(
    v.string("must be a string"),
    v.trim(),
    v.minLength(min, min === 1 ? "must not be empty" : `must be ${min} to ${max} characters`),
    v.maxLength(max, min === 1 ? `must be at most ${max} characters` : `must be ${min} to ${max} characters`),
    v.check((s) => !CONTROL.test(s), "must not contain control characters"),
  );

/** A positive NGN amount with at most two decimals, at most NGN 100,000,000. */
const AMOUNT = v.pipe(
  v.number("must be a number"),
  v.check((n) => Number.isFinite(n), "must be a finite number"),
  v.check((n) => n > 0, "must be greater than 0"),
  v.check((n) => ngnToKobo(n) !== null, "must have at most two decimal places"),
  v.maxValue(MAX_AMOUNT_KOBO / 100, `must be at most ${MAX_AMOUNT_KOBO / 100} (NGN)`),
);

export const ACCOUNT_NUMBER = v.pipe(v.string("must be a string"), v.regex(/^\d{10}$/, "must be exactly 10 digits"));

const PHONE = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.regex(/^\+?\d{7,15}$/, "must be 7 to 15 digits, optionally starting with +"),
);

// ---------------------------------------------------------------------------
// POST /api/v1/virtual-account
// ---------------------------------------------------------------------------

/** The create body's fields (createVirtualAccountBody adds the clock-dependent expires_at rules). */
export const CreateVirtualAccountShape = jsonObject({
  account_type: v.picklist(ACCOUNT_TYPES, "must be single_use or multi_use"),
  account_name: text(3, 250),
  source_reference: text(3, 250),
  amount: v.nullish(AMOUNT),
  expires_at: v.nullish(v.string("must be a string in the format YYYY-MM-DD HH:MM:SS (UTC)")),
});

export interface CreateVirtualAccountInput {
  accountType: AccountType;
  accountName: string;
  sourceReference: string;
  /** Fixed expected amount in kobo, or null (any amount). */
  amountKobo: number | null;
  /** single_use: epoch ms of the expiry; multi_use: null. */
  expiresAtMs: number | null;
}

const _CREATE_ORDER = ["body", "account_type", "account_name", "source_reference", "amount", "expires_at"];

/**
 * The create body, checked at the time `clock` reads → CreateVirtualAccountInput. `expires_at` is
 * required for single_use, must be omitted (or null) for multi_use, and must be a
 * `YYYY-MM-DD HH:MM:SS` UTC time after now and at most 24 hours after it.
 */
export function createVirtualAccountBody(clock: () => number) {
  return envelopeBody(
    v.pipe(
      CreateVirtualAccountShape,
      v.rawCheck(({ dataset, addIssue }) => {
        const problem = _expiryProblem(dataset.value, dataset.issues, clock());
        if (problem) addIssue({ message: problem, path: [_expiresAtPath(dataset.value)] });
      }),
      v.transform((out): CreateVirtualAccountInput => ({
        accountType: out.account_type,
        accountName: out.account_name,
        sourceReference: out.source_reference,
        amountKobo: out.amount === null || out.amount === undefined ? null : ngnToKobo(out.amount),
        expiresAtMs: out.account_type === "single_use" ? parseFullTime(out.expires_at!) : null,
      })),
    ),
    { objectOnly: true, order: _CREATE_ORDER },
  );
}

// ---------------------------------------------------------------------------
// POST /api/v1/virtual-account/toggle-status
// ---------------------------------------------------------------------------

export const ToggleVirtualAccountBody = envelopeBody(
  jsonObject({
    reference: text(1, 250),
    activate: v.boolean("must be true or false"),
  }),
  { objectOnly: true },
);
export type ToggleVirtualAccountInput = v.InferOutput<typeof ToggleVirtualAccountBody>;

// ---------------------------------------------------------------------------
// POST /api/v1/customers
// ---------------------------------------------------------------------------

export const CreateCustomerBody = envelopeBody(
  jsonObject({
    first_name: text(1, 100),
    last_name: text(1, 100),
    email: EMAIL,
    phone: PHONE,
    has_wallet: v.optional(v.boolean("must be true or false"), false),
  }),
  { objectOnly: true },
);
export type CreateCustomerInput = v.InferOutput<typeof CreateCustomerBody>;

// ---------------------------------------------------------------------------
// POST /api/v1/sandbox/virtual-account/deposit
// ---------------------------------------------------------------------------

export const DepositShape = jsonObject({
  account_number: ACCOUNT_NUMBER,
  amount: AMOUNT,
  sender_name: text(1, 250),
  sender_account_number: ACCOUNT_NUMBER,
  sender_bank: text(1, 100),
});

export interface DepositInput {
  accountNumber: string;
  amountKobo: number;
  sender: { accountName: string; accountNumber: string; bankName: string };
}

/**
 * The deposit body → DepositInput. Its failure is answered by the handler (bodyOf), after the
 * route's "TEST businesses only" check: a LIVE business is told the route is not there first.
 */
export const DepositBody = deferredEnvelopeBody(
  v.pipe(
    DepositShape,
    v.transform((d): DepositInput => ({
      accountNumber: d.account_number,
      amountKobo: ngnToKobo(d.amount)!,
      sender: { accountName: d.sender_name, accountNumber: d.sender_account_number, bankName: d.sender_bank },
    })),
  ),
  { objectOnly: true },
);

// --- Internal helpers ---

/**
 * The expires_at rule the shape cannot say (it depends on account_type and on now), or null: only
 * for a JSON object whose expires_at passed the shape.
 */
function _expiryProblem(value: unknown, issues: readonly v.BaseIssue<unknown>[] | undefined, now: number): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  if (issues?.some((i) => i.path?.length === 1 && i.path[0]!.key === "expires_at")) return null;
  const raw = value as Record<string, unknown>;
  const type = raw.account_type;
  const given = raw.expires_at !== undefined && raw.expires_at !== null;
  if (type === "multi_use" && given) return "must be omitted for multi_use accounts (they never expire)";
  if (type === "single_use" && !given) return "is required for single_use accounts";
  if (!given) return null;
  const at = parseFullTime(raw.expires_at as string);
  if (at === null) return "must be a valid UTC time in the format YYYY-MM-DD HH:MM:SS";
  if (at <= now) return "must be in the future";
  if (at > now + MAX_EXPIRY_WINDOW_MS) return "must be within 24 hours from now";
  return null;
}

/** The issue path of `expires_at` in the body object. */
function _expiresAtPath(value: unknown): v.ObjectPathItem {
  const input = value as Record<string, unknown>;
  return { type: "object", origin: "value", input, key: "expires_at", value: input.expires_at };
}
