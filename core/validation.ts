/**
 * Input validation: valibot issues → the §7.3 violation list (≤ 20 items, JSON Pointers for body
 * problems, a code per item, a detail of at most 256 characters that never repeats the rejected
 * value), and the shared header rules of spec §4.1 that routes opt into.
 */
import * as v from "valibot";
import type { RequestContext } from "./context.ts";
import { gwError, type Violation } from "./errors/gateway-error.ts";
import { MAX_DETAIL, MAX_VIOLATIONS } from "./errors/render.ts";

export type Location = Violation["location"];

/** Runs a schema; on failure throws GW_REQUEST_VALIDATION_FAILED with every violation (first 20). */
export function validateInput<S extends v.GenericSchema>(schema: S, value: unknown, location: Location): v.InferOutput<S> {
  const result = v.safeParse(schema, value, { abortEarly: false });
  if (result.success) return result.output;
  const code =
    location === "path"
      ? "GW_REQUEST_PATH_PARAMETER_INVALID"
      : location === "header"
        ? "GW_REQUEST_HEADER_INVALID"
        : "GW_REQUEST_VALIDATION_FAILED";
  throw gwError(code, {
    detail: "The request has invalid values; see errors.",
    violations: violationsFromIssues(result.issues, location),
  });
}

export function violationsFromIssues(issues: readonly v.BaseIssue<unknown>[], location: Location): Violation[] {
  const out: Violation[] = [];
  for (const issue of issues) {
    if (out.length >= MAX_VIOLATIONS) break;
    const keys = (issue.path ?? []).map((p) => String(p.key));
    const code = _codeOf(issue);
    const violation: Violation = { location, code, detail: _detailOf(issue, code) };
    if (location === "body") violation.pointer = toJsonPointer(keys);
    else violation.field = keys[0] ?? "";
    out.push(violation);
  }
  return out;
}

/** RFC 6901: "" for the root, "/a/0/b" otherwise, with "~" and "/" escaped. */
export function toJsonPointer(keys: readonly string[]): string {
  return keys.map((k) => "/" + k.replaceAll("~", "~0").replaceAll("/", "~1")).join("");
}

// ---------------------------------------------------------------------------
// Header rules of spec §4.1 (routes opt in)
// ---------------------------------------------------------------------------

const IDEMPOTENCY_KEY = /^[A-Za-z0-9._:-]{8,128}$/;
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
const SUB_BUSINESS_ID_MAX = 255;

/** The caller's X-Request-ID, validated (correlation metadata only); null when absent. */
export function callerRequestId(headers: Headers): string | null {
  const value = headers.get("x-request-id");
  if (value === null) return null;
  if (!REQUEST_ID.test(value)) throw _headerError("X-Request-ID", "FORMAT", "must be 1 to 128 characters of A-Z a-z 0-9 . _ : - starting with a letter or digit");
  return value;
}

/** x-idempotency-key: required on mutations; 8 to 128 characters of `^[A-Za-z0-9._:-]+$`. */
export function idempotencyKey(ctx: RequestContext, required = true): string | null {
  const value = ctx.req.headers.get("x-idempotency-key");
  if (value === null || value === "") {
    if (!required) return null;
    throw gwError("GW_IDEMPOTENCY_KEY_REQUIRED", { detail: "Send x-idempotency-key on this mutation." });
  }
  if (!IDEMPOTENCY_KEY.test(value))
    throw gwError("GW_IDEMPOTENCY_KEY_INVALID", {
      detail: "x-idempotency-key must be 8 to 128 characters of A-Z a-z 0-9 . _ : -; nothing was accepted.",
    });
  return value;
}

/** x-attempt-number: positive integer, default 1. */
export function attemptNumber(ctx: RequestContext): number {
  const value = ctx.req.headers.get("x-attempt-number");
  if (value === null) return 1;
  if (!/^[1-9][0-9]{0,8}$/.test(value))
    throw gwError("GW_ATTEMPT_NUMBER_INVALID", { detail: "x-attempt-number must be a positive integer." });
  return Number(value);
}

/** x-sub-business-id: required on invoice operations; 1 to 255 characters, copied exactly. */
export function subBusinessId(ctx: RequestContext): string {
  const value = ctx.req.headers.get("x-sub-business-id");
  if (value === null) throw gwError("GW_SUB_BUSINESS_ID_REQUIRED", { detail: "Send x-sub-business-id." });
  if (!isValidSubBusinessId(value))
    throw gwError("GW_SUB_BUSINESS_ID_INVALID", { detail: "x-sub-business-id must be 1 to 255 visible characters." });
  return value;
}

export function isValidSubBusinessId(value: string): boolean {
  return value.length >= 1 && value.length <= SUB_BUSINESS_ID_MAX && /^[\x21-\x7e]+$/.test(value);
}

/** Fields a request must never carry: they are resolved from the hostname and key (spec §1.2 rule 1). */
export const SERVER_MANAGED_FIELDS = [
  "mode",
  "operationMode",
  "state",
  "businessState",
  "parentBusiness",
  "parentBusinessId",
  "topLevelBusinessId",
  "domain",
  "wallet",
  "walletId",
  "fee",
  "signFee",
] as const;

/** Rejects a JSON body whose top level carries a server-managed field. */
export function rejectServerManagedFields(body: unknown): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  const found = SERVER_MANAGED_FIELDS.filter((f) => Object.hasOwn(body, f));
  if (found.length === 0) return;
  throw gwError("GW_REQUEST_SERVER_FIELD_SUPPLIED", {
    detail: "Mode, business state, parent business, domain, wallet and fee are set by the gateway; remove them.",
    violations: found.map((f) => ({
      location: "body" as const,
      pointer: toJsonPointer([f]),
      code: "IMMUTABLE_FIELD" as const,
      detail: "server-managed field; remove it",
    })),
  });
}

// --- Internal helpers ---

function _headerError(field: string, code: Violation["code"], detail: string) {
  return gwError("GW_REQUEST_HEADER_INVALID", {
    detail: `Header ${field} is invalid.`,
    violations: [{ location: "header", field, code, detail }],
  });
}

function _codeOf(issue: v.BaseIssue<unknown>): Violation["code"] {
  if (issue.kind === "schema") {
    if (issue.received === "undefined") return "REQUIRED";
    if (issue.type === "strict_object" || issue.expected === "never") return "UNKNOWN_FIELD";
    if (issue.type === "picklist" || issue.type === "literal" || issue.type === "enum") return "FORMAT";
    return "TYPE";
  }
  switch (issue.type) {
    case "min_length":
    case "max_length":
    case "length":
    case "non_empty":
    case "min_bytes":
    case "max_bytes":
    case "min_entries":
    case "max_entries":
      return "LENGTH";
    case "min_value":
    case "max_value":
    case "value":
    case "integer":
    case "gt_value":
    case "lt_value":
      return "RANGE";
    case "check":
    case "partial_check":
      return "MISMATCH";
    default:
      return "FORMAT";
  }
}

function _detailOf(issue: v.BaseIssue<unknown>, code: Violation["code"]): string {
  let text: string;
  switch (code) {
    case "REQUIRED":
      text = `required (${issue.expected ?? "value"})`;
      break;
    case "UNKNOWN_FIELD":
      text = "unknown field";
      break;
    case "TYPE":
      text = `expected ${issue.expected ?? "another type"}`;
      break;
    default:
      // Custom messages are written by our schemas and never contain the input; valibot's own
      // defaults contain "received …", which is cut.
      text = issue.message.includes("received") ? `expected ${issue.expected ?? "another value"}` : issue.message;
  }
  return text.slice(0, MAX_DETAIL);
}
