/**
 * Input rules of the virtual-account, customer and sandbox-deposit API (spec §2.4, §4, §8;
 * DECISIONS.md "Virtual accounts", "Deposits (sandbox)", "Customers"). Bodies are checked in the
 * handlers (the create rules depend on the clock); every failing field is listed with a message
 * written here, never repeating the rejected value. Query strings are declared on the routes (the
 * core lists their failures the same way, as 422 `{ field, message }`).
 */
import * as v from "valibot";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { MAX_AMOUNT_KOBO, ngnToKobo } from "../shared/money.ts";
import { parseDateFilter, parseFullTime } from "../shared/time.ts";
import {
  CONTROL,
  EMAIL,
  PAGE,
  SEARCH,
  VALIDATION_MESSAGE,
  issuesToErrors,
  orderedErrors,
  parseInput,
  positiveInt,
  type FieldErrors,
} from "../payment-links/schemas.ts";

export const ACCOUNT_TYPES = ["single_use", "multi_use"] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const ACCOUNT_STATUSES = ["active", "inactive", "expired"] as const;
export type AccountStatus = (typeof ACCOUNT_STATUSES)[number];

/** A single_use account expires at most this long after its creation (spec §8). */
export const MAX_EXPIRY_WINDOW_MS = 24 * 60 * 60_000;
/** Largest virtual-account list page (the document store's page cap). */
export const MAX_ACCOUNT_PAGE = 1000;
export const DEFAULT_ACCOUNT_PAGE = 1000;

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

const ACCOUNT_NUMBER = v.pipe(v.string("must be a string"), v.regex(/^\d{10}$/, "must be exactly 10 digits"));

const PHONE = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.regex(/^\+?\d{7,15}$/, "must be 7 to 15 digits, optionally starting with +"),
);

// ---------------------------------------------------------------------------
// POST /api/v1/virtual-account
// ---------------------------------------------------------------------------

/** The create body's fields (the handler adds the clock-dependent expires_at rules). */
export const CreateVirtualAccountShape = v.object(
  {
    account_type: v.picklist(ACCOUNT_TYPES, "must be single_use or multi_use"),
    account_name: text(3, 250),
    source_reference: text(3, 250),
    amount: v.nullish(AMOUNT),
    expires_at: v.nullish(v.string("must be a string in the format YYYY-MM-DD HH:MM:SS (UTC)")),
  },
  "must be a JSON object",
);

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
 * The create body → input, or a 422 listing every failing field. `expires_at` is required for
 * single_use, must be omitted (or null) for multi_use, and must be a `YYYY-MM-DD HH:MM:SS` UTC time
 * after `now` and at most 24 hours after it.
 */
export function parseCreateVirtualAccount(body: unknown, now: number): CreateVirtualAccountInput {
  requireJsonObject(body);
  const result = v.safeParse(CreateVirtualAccountShape, body, { abortEarly: false });
  const errors: FieldErrors = result.success ? [] : issuesToErrors(result.issues);
  const raw = body as Record<string, unknown>; // a JSON object: requireJsonObject passed
  let expiresAtMs: number | null = null;
  if (!errors.some((e) => e.field === "expires_at")) {
    const type = raw.account_type;
    const given = raw.expires_at !== undefined && raw.expires_at !== null;
    const fail = (message: string) => errors.push({ field: "expires_at", message });
    if (type === "multi_use" && given) fail("must be omitted for multi_use accounts (they never expire)");
    else if (type === "single_use" && !given) fail("is required for single_use accounts");
    else if (given) {
      const at = parseFullTime(raw.expires_at as string);
      if (at === null) fail("must be a valid UTC time in the format YYYY-MM-DD HH:MM:SS");
      else if (at <= now) fail("must be in the future");
      else if (at > now + MAX_EXPIRY_WINDOW_MS) fail("must be within 24 hours from now");
      else expiresAtMs = at;
    }
  }
  if (errors.length > 0 || !result.success) {
    throw new CollectionsError(422, VALIDATION_MESSAGE, orderedErrors(errors, _CREATE_ORDER));
  }
  const out = result.output;
  return {
    accountType: out.account_type,
    accountName: out.account_name,
    sourceReference: out.source_reference,
    amountKobo: out.amount === null || out.amount === undefined ? null : ngnToKobo(out.amount),
    expiresAtMs: out.account_type === "single_use" ? expiresAtMs : null,
  };
}

// ---------------------------------------------------------------------------
// GET /api/v1/virtual-account (query)
// ---------------------------------------------------------------------------

const DATE_FILTER = v.optional(
  v.pipe(
    v.string("must be a date"),
    v.check((s) => parseDateFilter(s, "start") !== null, "must be a UTC date YYYY-MM-DD or time YYYY-MM-DD HH:MM:SS"),
  ),
);

export const ListVirtualAccountsQuery = v.object({
  reference: v.optional(v.pipe(v.string("must be a string"), v.maxLength(250, "must be at most 250 characters"))),
  accountNumber: v.optional(ACCOUNT_NUMBER),
  accountType: v.optional(v.picklist(ACCOUNT_TYPES, "must be single_use or multi_use")),
  status: v.optional(v.picklist(ACCOUNT_STATUSES, "must be active, inactive or expired")),
  currency: v.optional(
    v.pipe(v.string("must be a string"), v.regex(/^[A-Za-z]{3}$/, "must be a 3-letter currency code"), v.toUpperCase()),
  ),
  search: SEARCH,
  startDate: DATE_FILTER,
  endDate: DATE_FILTER,
  sort: v.optional(v.pipe(v.string("must be ASC or DESC"), v.toUpperCase(), v.picklist(["ASC", "DESC"], "must be ASC or DESC")), "DESC"),
  limit: positiveInt(MAX_ACCOUNT_PAGE, String(DEFAULT_ACCOUNT_PAGE), `must be an integer from 1 to ${MAX_ACCOUNT_PAGE}`),
  page: PAGE,
});
type _ListQueryOutput = v.InferOutput<typeof ListVirtualAccountsQuery>;

export interface ListVirtualAccountsInput {
  reference?: string;
  accountNumber?: string;
  accountType?: AccountType;
  status?: AccountStatus;
  currency?: string;
  search?: string;
  /** Inclusive creation-time bounds, epoch ms. */
  createdFrom?: number;
  createdTo?: number;
  sort: "ASC" | "DESC";
  limit: number;
  page: number;
}

/** The validated query (ctx.query) → list input; 422 when endDate is before startDate. */
export function listInputFromQuery(query: Record<string, unknown>): ListVirtualAccountsInput {
  const q = query as unknown as _ListQueryOutput;
  const createdFrom = q.startDate ? parseDateFilter(q.startDate, "start")! : undefined;
  const createdTo = q.endDate ? parseDateFilter(q.endDate, "end")! : undefined;
  if (createdFrom !== undefined && createdTo !== undefined && createdTo < createdFrom) {
    throw new CollectionsError(422, VALIDATION_MESSAGE, [{ field: "endDate", message: "must not be before startDate" }]);
  }
  const search = q.search?.trim();
  return {
    ...(q.reference ? { reference: q.reference } : {}),
    ...(q.accountNumber ? { accountNumber: q.accountNumber } : {}),
    ...(q.accountType ? { accountType: q.accountType } : {}),
    ...(q.status ? { status: q.status } : {}),
    ...(q.currency ? { currency: q.currency } : {}),
    ...(search ? { search } : {}),
    ...(createdFrom !== undefined ? { createdFrom } : {}),
    ...(createdTo !== undefined ? { createdTo } : {}),
    sort: q.sort as "ASC" | "DESC",
    limit: q.limit,
    page: q.page,
  };
}

// ---------------------------------------------------------------------------
// GET /api/v1/virtual-account/find (query)
// ---------------------------------------------------------------------------

export const FindVirtualAccountQuery = v.object({
  reference: v.optional(v.pipe(v.string("must be a string"), v.maxLength(250, "must be at most 250 characters"))),
  sourceReference: v.optional(v.pipe(v.string("must be a string"), v.maxLength(250, "must be at most 250 characters"))),
});

/** Exactly one of `reference` / `sourceReference` (an empty value counts as absent), else 422. */
export function findInputFromQuery(query: Record<string, unknown>): { by: "reference" | "sourceReference"; value: string } {
  const reference = typeof query.reference === "string" && query.reference !== "" ? query.reference : null;
  const sourceReference = typeof query.sourceReference === "string" && query.sourceReference !== "" ? query.sourceReference : null;
  if ((reference === null) === (sourceReference === null)) {
    const message = reference === null ? "give exactly one of reference or sourceReference (neither was given)" : "give exactly one of reference or sourceReference (both were given)";
    throw new CollectionsError(422, VALIDATION_MESSAGE, [
      { field: "reference", message },
      { field: "sourceReference", message },
    ]);
  }
  return reference !== null ? { by: "reference", value: reference } : { by: "sourceReference", value: sourceReference! };
}

// ---------------------------------------------------------------------------
// POST /api/v1/virtual-account/toggle-status
// ---------------------------------------------------------------------------

export const ToggleVirtualAccountBody = v.object(
  {
    reference: text(1, 250),
    activate: v.boolean("must be true or false"),
  },
  "must be a JSON object",
);

// ---------------------------------------------------------------------------
// POST /api/v1/customers
// ---------------------------------------------------------------------------

export const CreateCustomerBody = v.object(
  {
    first_name: text(1, 100),
    last_name: text(1, 100),
    email: EMAIL,
    phone: PHONE,
    has_wallet: v.optional(v.boolean("must be true or false"), false),
  },
  "must be a JSON object",
);
export type CreateCustomerInput = v.InferOutput<typeof CreateCustomerBody>;

// ---------------------------------------------------------------------------
// POST /api/v1/sandbox/virtual-account/deposit
// ---------------------------------------------------------------------------

export const DepositShape = v.object(
  {
    account_number: ACCOUNT_NUMBER,
    amount: AMOUNT,
    sender_name: text(1, 250),
    sender_account_number: ACCOUNT_NUMBER,
    sender_bank: text(1, 100),
  },
  "must be a JSON object",
);

export interface DepositInput {
  accountNumber: string;
  amountKobo: number;
  sender: { accountName: string; accountNumber: string; bankName: string };
}

export function parseDeposit(body: unknown): DepositInput {
  const d = parseBody(DepositShape, body);
  return {
    accountNumber: d.account_number,
    amountKobo: ngnToKobo(d.amount)!,
    sender: { accountName: d.sender_name, accountNumber: d.sender_account_number, bankName: d.sender_bank },
  };
}

/** Runs a body schema on a JSON object (an array or a scalar is refused as a whole: field `body`). */
export function parseBody<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  requireJsonObject(body);
  return parseInput(schema, body);
}

/** 422 `{ field: "body" }` unless the body is a JSON object (valibot's object schema admits arrays). */
export function requireJsonObject(body: unknown): void {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new CollectionsError(422, VALIDATION_MESSAGE, [{ field: "body", message: "must be a JSON object" }]);
}
