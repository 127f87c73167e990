/**
 * Input rules both parts of the collections API share: the building blocks of their valibot
 * schemas (e-mail, page/limit/search query values), and how a declared body schema answers its
 * failures: the collections envelope's 422 listing every failing field by its name as sent
 * (`amount`, `customer_emails.1`), one entry per field, with messages written in the schemas and
 * never the rejected value (DECISIONS.md "Errors"). Query strings keep the core's answer, which the
 * envelope renders the same way.
 */
import * as v from "valibot";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { withInvalidInputAnswer } from "../../../core/validation.ts";

export const VALIDATION_MESSAGE = "The request has invalid values; see errors.";
export const MAX_PAGE_LIMIT = 100;

export type FieldErrors = Array<{ field: string; message: string }>;

// ---------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------

// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f]/;

export const EMAIL = v.pipe(
  v.string("must be a string"),
  v.trim(),
  v.nonEmpty("must not be empty"),
  v.maxLength(254, "must be at most 254 characters"),
  v.email("must be a valid e-mail address"),
);

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
export const LIMIT = positiveInt(MAX_PAGE_LIMIT, "15", `must be an integer from 1 to ${MAX_PAGE_LIMIT}`);
export const SEARCH = v.optional(v.pipe(v.string("must be a string"), v.maxLength(100, "must be at most 100 characters")));

export const PageQuery = v.object({ page: PAGE, limit: LIMIT });
export type PageInput = v.InferOutput<typeof PageQuery>;

// ---------------------------------------------------------------------------
// Declared bodies and their 422
// ---------------------------------------------------------------------------

export interface BodyRules {
  /** Anything but a JSON object (an array, a scalar, no body) is refused as a whole: field `body`. */
  objectOnly?: boolean;
  /** The errors in this field order (fields not listed go last); default: the schema's order. */
  order?: readonly string[];
}

/**
 * A route's body schema (declared in `schemas.body`, so the core validates it and OpenAPI shows
 * it) whose failures answer the collections 422: every failing field, as `invalidBody` lists them.
 */
export function envelopeBody<S extends v.GenericSchema>(schema: S, rules: BodyRules = {}): S {
  return withInvalidInputAnswer(schema, (issues, input) => {
    throw invalidBody(issues, input, rules);
  });
}

/**
 * Like envelopeBody, for a route whose handler answers other checks first (the sandbox deposit's
 * "TEST businesses only"): an invalid body reaches the handler as an InvalidBody, which `bodyOf`
 * throws when the handler asks for the body.
 */
export function deferredEnvelopeBody<S extends v.GenericSchema>(schema: S, rules: BodyRules = {}): S {
  return withInvalidInputAnswer(schema, (issues, input) => new InvalidBody(invalidBody(issues, input, rules)));
}

/** A declared body that failed its schema, carrying the 422 it answers. */
export class InvalidBody {
  constructor(readonly error: CollectionsError) {}
}

/** The validated body of a route declared with deferredEnvelopeBody; throws its 422 when invalid. */
export function bodyOf<T>(body: unknown): T {
  if (body instanceof InvalidBody) throw body.error;
  return body as T;
}

/** The 422 of a body that failed its schema (`input` is the body as parsed). */
export function invalidBody(issues: readonly v.BaseIssue<unknown>[], input: unknown, rules: BodyRules): CollectionsError {
  if (rules.objectOnly && !_isJsonObject(input)) return new CollectionsError(422, VALIDATION_MESSAGE, [{ field: "body", message: "must be a JSON object" }]);
  const errors = issuesToErrors(issues);
  return new CollectionsError(422, VALIDATION_MESSAGE, rules.order ? orderedErrors(errors, rules.order) : errors);
}

/** A body schema's entries that also refuses arrays (valibot's object schema admits them). */
export function jsonObject<E extends v.ObjectEntries>(entries: E) {
  return v.pipe(
    v.object(entries, "must be a JSON object"),
    v.check((x) => !Array.isArray(x), "must be a JSON object"),
  );
}

// ---------------------------------------------------------------------------
// Issue mapping
// ---------------------------------------------------------------------------

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

function _isJsonObject(body: unknown): boolean {
  return typeof body === "object" && body !== null && !Array.isArray(body);
}
