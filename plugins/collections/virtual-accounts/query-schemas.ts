/**
 * Query strings of the virtual-account list and find (spec §4). Declared on the routes: the core
 * validates them and lists their failures as 422 `{ field, message }` in the envelope; the rules
 * between parameters (endDate not before startDate, exactly one lookup key) are checked here.
 */
import * as v from "valibot";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { PAGE, SEARCH, VALIDATION_MESSAGE, positiveInt } from "../shared/input.ts";
import { parseDateFilter } from "../shared/time.ts";
import { ACCOUNT_NUMBER, ACCOUNT_STATUSES, ACCOUNT_TYPES, type AccountStatus, type AccountType } from "./schemas.ts";

/** Largest virtual-account list page (the document store's page cap). */
export const MAX_ACCOUNT_PAGE = 1000;
export const DEFAULT_ACCOUNT_PAGE = 1000;

// ---------------------------------------------------------------------------
// GET /api/v1/virtual-account
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
// GET /api/v1/virtual-account/find
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
