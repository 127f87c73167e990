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
  const answer = _invalidAnswers.get(schema);
  if (answer) return answer(result.issues, value) as v.InferOutput<S>;
  const code =
    location === "path"
      ? "GW_REQUEST_PATH_PARAMETER_INVALID"
      : location === "header"
        ? "GW_REQUEST_HEADER_INVALID"
        : "GW_REQUEST_VALIDATION_FAILED";
  throw gwError(code, {
    detail: "The request has invalid values; see errors.",
    violations: violationsFromIssues(result.issues, location, schema),
  });
}

/**
 * What a schema's failures answer instead of the catalog's validation codes: a service with its own
 * error shape (the collections envelope lists every failing field, by its name as sent) declares
 * its schema with this, and validateInput returns what `answer(issues, input)` returns, or throws
 * what it throws. Routes keep declaring the schema itself (OpenAPI shows it, it decides validity).
 */
export type InvalidInputAnswer = (issues: readonly v.BaseIssue<unknown>[], input: unknown) => unknown;

export function withInvalidInputAnswer<S extends v.GenericSchema>(schema: S, answer: InvalidInputAnswer): S {
  _invalidAnswers.set(schema, answer);
  return schema;
}

/**
 * valibot issues → violations (first 20). With the schema given, an unknown-field issue of a
 * strict object is expanded to one violation per unknown key: valibot itself stops at the first.
 */
export function violationsFromIssues(
  issues: readonly v.BaseIssue<unknown>[],
  location: Location,
  schema?: v.GenericSchema,
): Violation[] {
  const out: Violation[] = [];
  const push = (keys: readonly string[], code: Violation["code"], detail: string) => {
    const violation: Violation = { location, code, detail };
    if (location === "body") violation.pointer = toJsonPointer(keys);
    else violation.field = keys[0] ?? "";
    out.push(violation);
  };
  for (const issue of issues) {
    if (out.length >= MAX_VIOLATIONS) break;
    const keys = (issue.path ?? []).map((p) => String(p.key));
    const code = _codeOf(issue);
    const unknown = code === "UNKNOWN_FIELD" && schema ? _unknownKeys(schema, issue) : null;
    if (unknown) {
      const parent = keys.slice(0, -1);
      for (const key of unknown) {
        if (out.length >= MAX_VIOLATIONS) break;
        push([...parent, key], code, "unknown field");
      }
      continue;
    }
    push(keys, code, _detailOf(issue, code));
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

/**
 * x-idempotency-key: required on mutations; 8 to 128 characters of `^[A-Za-z0-9._:-]+$`. A header
 * sent empty is a key of the wrong format (INVALID), not a missing one (REQUIRED).
 */
export function idempotencyKey(ctx: RequestContext, required = true): string | null {
  const value = ctx.req.headers.get("x-idempotency-key");
  if (value === null) {
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

/**
 * Spec §1.2 rule 1 on the request's headers and query: a server-managed field as a header
 * (`mode`, `x-mode`, `x-wallet-id`, `X-Sign-Fee`…) or as a query parameter (`?mode=stored`, any
 * case) gives GW_REQUEST_SERVER_FIELD_SUPPLIED listing each one, as a body field does. No
 * allocation unless the request has a query string or a finding.
 */
export function rejectServerManagedParams(ctx: RequestContext): void {
  let found: Violation[] | null = null;
  const nodeHeaders = ctx.req.runtime?.node?.req.headers;
  if (nodeHeaders) {
    for (const name in nodeHeaders) if (SERVER_MANAGED_NAMES.has(name)) (found ??= []).push(_serverField("header", name));
  } else {
    for (const name of ctx.req.headers.keys()) if (SERVER_MANAGED_NAMES.has(name)) (found ??= []).push(_serverField("header", name));
  }
  if (ctx.search.length > 1) {
    for (const name of new URLSearchParams(ctx.search).keys())
      if (SERVER_MANAGED_NAMES.has(name.toLowerCase())) (found ??= []).push(_serverField("query", name));
  }
  if (found !== null) throw _serverFieldsError(found);
}

/** Rejects a JSON body whose top level carries a server-managed field. */
export function rejectServerManagedFields(body: unknown): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  const found = SERVER_MANAGED_FIELDS.filter((f) => Object.hasOwn(body, f));
  if (found.length > 0) throw _serverFieldsError(found.map((f) => _serverField("body", f)));
}

// ---------------------------------------------------------------------------
// JSON body shape (before JSON.parse)
// ---------------------------------------------------------------------------

export interface JsonLimits {
  /** Nesting of objects and arrays (the top-level value's container is level 1). */
  maxDepth: number;
  /** Members of any one object. */
  maxObjectKeys: number;
}

/**
 * A check of a JSON text's nesting depth and per-object member count, in one pass over the text
 * before anything parses it (deep nesting otherwise exhausts the stack in recursive code such as
 * JSON.stringify, long after a fee might have been taken). Planned once: the member counters live
 * in one buffer reused by every call (the scan is synchronous). Strings are skipped with indexOf;
 * the text is not validated here (JSON.parse does that next), so a malformed text only ever
 * passes through to GW_REQUEST_INVALID_JSON or trips the same limits.
 */
export function createJsonLimitCheck(limits: JsonLimits): (text: string) => void {
  const { maxDepth, maxObjectKeys } = limits;
  const members = new Uint32Array(maxDepth + 1);
  // A text shorter than this cannot break either limit: d levels take 2d characters, m members
  // at least 5m + 1 ("":0, each).
  const shortest = Math.min(2 * (maxDepth + 1), 5 * (maxObjectKeys + 1) + 1);
  return function checkJsonLimits(text: string): void {
    if (text.length < shortest) return;
    let depth = 0;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        // Skip to the closing quote: the next '"' preceded by an even number of backslashes.
        let from = i + 1;
        for (;;) {
          const q = text.indexOf('"', from);
          if (q < 0) return; // unterminated string: JSON.parse reports it
          let b = q - 1;
          while (text.charCodeAt(b) === 0x5c) b--;
          if ((q - 1 - b) % 2 === 0) {
            i = q;
            break;
          }
          from = q + 1;
        }
      } else if (c === 0x7b || c === 0x5b) {
        if (++depth > maxDepth) throw _bodyShapeError(`nesting is deeper than ${maxDepth} levels`);
        members[depth] = 0;
      } else if (c === 0x7d || c === 0x5d) {
        if (depth > 0) depth--;
      } else if (c === 0x3a && depth > 0) {
        if (++members[depth]! > maxObjectKeys) throw _bodyShapeError(`an object has more than ${maxObjectKeys} members`);
      }
    }
  };
}

// --- Internal helpers ---

/** The answers declared with withInvalidInputAnswer, by schema. */
const _invalidAnswers = new WeakMap<v.GenericSchema, InvalidInputAnswer>();

/** Every spelling of a server-managed field a header or query name may take, lower-cased. */
const SERVER_MANAGED_NAMES: ReadonlySet<string> = new Set(
  SERVER_MANAGED_FIELDS.flatMap((f) => {
    const words = f.replace(/[A-Z]/g, (c) => " " + c.toLowerCase()).split(" ");
    const spellings = [words.join(""), words.join("-"), words.join("_")];
    return spellings.flatMap((n) => [n, `x-${n}`]);
  }),
);

function _serverField(location: Location, name: string): Violation {
  const violation: Violation = { location, code: "IMMUTABLE_FIELD", detail: "server-managed field; remove it" };
  if (location === "body") violation.pointer = toJsonPointer([name]);
  else violation.field = name;
  return violation;
}

function _serverFieldsError(violations: Violation[]) {
  return gwError("GW_REQUEST_SERVER_FIELD_SUPPLIED", {
    detail: "Mode, business state, parent business, domain, wallet and fee are set by the gateway; remove them.",
    violations,
  });
}

function _bodyShapeError(detail: string) {
  return gwError("GW_REQUEST_VALIDATION_FAILED", {
    detail: "The JSON body is nested too deeply or has too many members; nothing was processed.",
    violations: [{ location: "body", pointer: "", code: "RANGE", detail }],
  });
}

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
      // defaults end in "but received …" or, without an expectation, "Received …" (email, url):
      // those are replaced.
      text = /\breceived\b/i.test(issue.message)
        ? issue.expected
          ? `expected ${issue.expected}`
          : `invalid ${issue.type.replaceAll("_", " ")}`
        : issue.message;
  }
  return text.slice(0, MAX_DETAIL);
}

interface SchemaNode {
  type: string;
  entries?: Record<string, SchemaNode>;
  wrapped?: SchemaNode;
  item?: SchemaNode;
  value?: SchemaNode;
}

/** Every unknown key of the strict object an unknown-field issue points into; null when not resolvable. */
function _unknownKeys(schema: v.GenericSchema, issue: v.BaseIssue<unknown>): string[] | null {
  if (issue.type !== "strict_object" || !issue.path || issue.path.length === 0) return null;
  const last = issue.path[issue.path.length - 1]!;
  const parentInput = last.input;
  if (typeof parentInput !== "object" || parentInput === null) return null;
  let node: SchemaNode | undefined = _unwrap(schema as unknown as SchemaNode);
  for (const item of issue.path.slice(0, -1)) {
    if (!node) return null;
    if (node.entries) node = _unwrap(node.entries[String(item.key)]);
    else if (node.type === "array" && node.item) node = _unwrap(node.item);
    else if (node.type === "record" && node.value) node = _unwrap(node.value);
    else return null;
  }
  if (!node || node.type !== "strict_object" || !node.entries) return null;
  const entries = node.entries;
  const unknown = Object.keys(parentInput).filter((k) => !Object.hasOwn(entries, k));
  return unknown.length > 0 ? unknown : null;
}

function _unwrap(node: SchemaNode | undefined): SchemaNode | undefined {
  let n = node;
  while (n && n.wrapped) n = n.wrapped;
  return n;
}
