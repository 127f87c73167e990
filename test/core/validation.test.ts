/**
 * core/validation.ts: the shared header rules of spec §4.1 (idempotency key, attempt number,
 * sub-business id, X-Request-ID), server-managed fields, and valibot issues → §7.3 violations
 * (codes, pointers, details that never repeat the value, at most 20).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as v from "valibot";
import { createRequestContext, type RequestContext } from "../../core/context.ts";
import { isGatewayError, type GatewayError, type Violation } from "../../core/errors/gateway-error.ts";
import {
  SERVER_MANAGED_FIELDS,
  attemptNumber,
  callerRequestId,
  idempotencyKey,
  isValidSubBusinessId,
  rejectServerManagedFields,
  subBusinessId,
  toJsonPointer,
  validateInput,
  violationsFromIssues,
} from "../../core/validation.ts";

function ctxWith(headers: Record<string, string> = {}): RequestContext {
  const url = new URL("http://passthrough.demo.localhost/x");
  return createRequestContext(new Request(url, { headers }), crypto.randomUUID(), url);
}

/** Runs fn, expects a GatewayError and returns it. */
function raised(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (e) {
    assert.ok(isGatewayError(e), `expected a GatewayError, got ${String(e)}`);
    return e as GatewayError;
  }
  assert.unreachable("expected a GatewayError");
  throw new Error("unreachable");
}

function violationsOf(schema: v.GenericSchema, value: unknown, location: Violation["location"] = "body"): Violation[] {
  const e = raised(() => validateInput(schema, value, location));
  return e.info.violations ?? [];
}

// ---------------------------------------------------------------------------
// x-idempotency-key
// ---------------------------------------------------------------------------

test("idempotency key: absent → GW_IDEMPOTENCY_KEY_REQUIRED, sent empty → GW_IDEMPOTENCY_KEY_INVALID; optional → null", () => {
  assert.is(raised(() => idempotencyKey(ctxWith())).code, "GW_IDEMPOTENCY_KEY_REQUIRED");
  assert.is(raised(() => idempotencyKey(ctxWith({ "x-idempotency-key": "" }))).code, "GW_IDEMPOTENCY_KEY_INVALID");
  assert.is(raised(() => idempotencyKey(ctxWith({ "x-idempotency-key": "" }), false)).code, "GW_IDEMPOTENCY_KEY_INVALID");
  assert.is(idempotencyKey(ctxWith(), false), null);
});

test("idempotency key: 7 chars, 129 chars, a bad character → GW_IDEMPOTENCY_KEY_INVALID", () => {
  for (const bad of ["a".repeat(7), "a".repeat(129), "abcd efgh", "abcdefg/h", "abcdefgh!", "abcdéfgh", "abc+defgh", "abc,defgh"]) {
    const e = raised(() => idempotencyKey(ctxWith({ "x-idempotency-key": bad })));
    assert.is(e.code, "GW_IDEMPOTENCY_KEY_INVALID", bad);
    assert.not.ok(e.message.includes(bad), "the detail never repeats the key");
  }
  // Also invalid when optional: a key that is sent must be well formed.
  assert.is(raised(() => idempotencyKey(ctxWith({ "x-idempotency-key": "short" }), false)).code, "GW_IDEMPOTENCY_KEY_INVALID");
});

test("idempotency key: 8 and 128 characters of ^[A-Za-z0-9._:-]+$ are accepted, returned exactly", () => {
  for (const ok of ["a".repeat(8), "Z".repeat(128), "Ab0._:-z", "order:2024-01-01.retry_1", "--------", "........"]) {
    assert.is(idempotencyKey(ctxWith({ "x-idempotency-key": ok })), ok);
  }
});

// ---------------------------------------------------------------------------
// x-attempt-number
// ---------------------------------------------------------------------------

test("attempt number: absent → 1; '3' → 3; large positive accepted", () => {
  assert.is(attemptNumber(ctxWith()), 1);
  assert.is(attemptNumber(ctxWith({ "x-attempt-number": "3" })), 3);
  assert.is(attemptNumber(ctxWith({ "x-attempt-number": "1" })), 1);
  assert.is(attemptNumber(ctxWith({ "x-attempt-number": "123456" })), 123456);
});

test("attempt number: '0', '-1', '1.5', 'abc', '' , '1e3', '+2', '0x10' → GW_ATTEMPT_NUMBER_INVALID", () => {
  for (const bad of ["0", "-1", "1.5", "abc", "", "1e3", "+2", "0x10", "01", "9".repeat(20)]) {
    const e = raised(() => attemptNumber(ctxWith({ "x-attempt-number": bad })));
    assert.is(e.code, "GW_ATTEMPT_NUMBER_INVALID", JSON.stringify(bad));
    assert.is(e.status, 400);
  }
});

// ---------------------------------------------------------------------------
// x-sub-business-id
// ---------------------------------------------------------------------------

test("sub-business id: absent → GW_SUB_BUSINESS_ID_REQUIRED", () => {
  const e = raised(() => subBusinessId(ctxWith()));
  assert.is(e.code, "GW_SUB_BUSINESS_ID_REQUIRED");
  assert.is(e.status, 400);
});

test("sub-business id: '' and 256 characters → GW_SUB_BUSINESS_ID_INVALID", () => {
  for (const bad of ["", "s".repeat(256), "has space", "tab\there"]) {
    const e = raised(() => subBusinessId(ctxWith({ "x-sub-business-id": bad })));
    assert.is(e.code, "GW_SUB_BUSINESS_ID_INVALID", JSON.stringify(bad.slice(0, 10)));
    assert.is(e.status, 400);
  }
  assert.not.ok(isValidSubBusinessId(""));
  assert.not.ok(isValidSubBusinessId("x".repeat(256)));
});

test("sub-business id: 1 and 255 characters accepted and returned exactly, case preserved", () => {
  const long = "AbC-" + "x".repeat(247) + "-ZyX";
  assert.is(long.length, 255);
  assert.is(subBusinessId(ctxWith({ "x-sub-business-id": long })), long);
  assert.is(subBusinessId(ctxWith({ "x-sub-business-id": "s" })), "s");
  assert.is(subBusinessId(ctxWith({ "x-sub-business-id": "SB_MiXeD.case:01" })), "SB_MiXeD.case:01");
  assert.ok(isValidSubBusinessId(long));
});

// ---------------------------------------------------------------------------
// X-Request-ID (caller correlation)
// ---------------------------------------------------------------------------

test("X-Request-ID: absent → null; 1 and 128 characters of the pattern accepted", () => {
  assert.is(callerRequestId(new Headers()), null);
  for (const ok of ["a", "0", "A".repeat(128), "req-1.2_3:4", "9abc"]) assert.is(callerRequestId(new Headers({ "x-request-id": ok })), ok);
});

test("X-Request-ID: 129 characters, a bad first character, a bad character, empty → GW_REQUEST_HEADER_INVALID", () => {
  for (const bad of ["A".repeat(129), "-abc", ".abc", "_abc", ":abc", "ab cd", "ab/cd", "abc!", ""]) {
    const e = raised(() => callerRequestId(new Headers({ "x-request-id": bad })));
    assert.is(e.code, "GW_REQUEST_HEADER_INVALID", JSON.stringify(bad));
    assert.equal(
      (e.info.violations ?? []).map((x) => [x.location, x.field, x.code]),
      [["header", "X-Request-ID", "FORMAT"]],
    );
    if (bad.length > 2) assert.not.ok(JSON.stringify(e.info).includes(bad), "value not repeated");
  }
});

// ---------------------------------------------------------------------------
// Server-managed fields
// ---------------------------------------------------------------------------

test("each server-managed field → GW_REQUEST_SERVER_FIELD_SUPPLIED with an IMMUTABLE_FIELD violation", () => {
  assert.ok(SERVER_MANAGED_FIELDS.length >= 10);
  for (const field of SERVER_MANAGED_FIELDS) {
    const e = raised(() => rejectServerManagedFields({ name: "ok", [field]: "SECRET-SERVER-VALUE" }));
    assert.is(e.code, "GW_REQUEST_SERVER_FIELD_SUPPLIED", field);
    assert.is(e.status, 400);
    assert.equal(e.info.violations, [{ location: "body", pointer: `/${field}`, code: "IMMUTABLE_FIELD", detail: e.info.violations![0]!.detail }]);
    assert.not.ok(JSON.stringify(e.info).includes("SECRET-SERVER-VALUE"));
  }
});

test("server-managed fields: all listed at once; only the top level; non-objects pass", () => {
  const all = Object.fromEntries(SERVER_MANAGED_FIELDS.map((f) => [f, 1]));
  const e = raised(() => rejectServerManagedFields(all));
  assert.equal(e.info.violations!.map((x) => x.pointer), SERVER_MANAGED_FIELDS.map((f) => `/${f}`));
  for (const x of e.info.violations!) assert.is(x.code, "IMMUTABLE_FIELD");
  rejectServerManagedFields({ nested: { mode: "stored" } });
  rejectServerManagedFields([{ mode: "stored" }]);
  rejectServerManagedFields(undefined);
  rejectServerManagedFields(null);
  rejectServerManagedFields("mode");
  rejectServerManagedFields({ name: "fine", modeOfPayment: "x" });
});

// ---------------------------------------------------------------------------
// valibot issues → violations
// ---------------------------------------------------------------------------

test("violation codes: REQUIRED, TYPE, LENGTH, RANGE, FORMAT, UNKNOWN_FIELD, MISMATCH", () => {
  const schema = v.pipe(
    v.strictObject({
      required: v.string(),
      typed: v.number(),
      short: v.pipe(v.string(), v.minLength(3)),
      long: v.pipe(v.string(), v.maxLength(2)),
      exact: v.pipe(v.string(), v.length(4)),
      nonEmpty: v.pipe(v.string(), v.nonEmpty()),
      list: v.pipe(v.array(v.number()), v.maxLength(1)),
      small: v.pipe(v.number(), v.minValue(10)),
      big: v.pipe(v.number(), v.maxValue(10)),
      whole: v.pipe(v.number(), v.integer()),
      pattern: v.pipe(v.string(), v.regex(/^[a-z]+$/)),
      email: v.pipe(v.string(), v.email()),
      pick: v.picklist(["a", "b"]),
      lit: v.literal("x"),
      password: v.string(),
      confirm: v.string(),
    }),
    v.forward(
      v.partialCheck([["password"], ["confirm"]], (i) => i.password === i.confirm, "must match password"),
      ["confirm"],
    ),
  );
  const value = {
    typed: "1",
    short: "ab",
    long: "abc",
    exact: "abc",
    nonEmpty: "",
    list: [1, 2],
    small: 1,
    big: 11,
    whole: 1.5,
    pattern: "ABC",
    email: "not-an-email",
    pick: "c",
    lit: "y",
    password: "one",
    confirm: "two",
    unknown: true,
  };
  const byPointer = Object.fromEntries(violationsOf(schema, value).map((x) => [x.pointer, x.code]));
  assert.equal(byPointer, {
    "/required": "REQUIRED",
    "/typed": "TYPE",
    "/short": "LENGTH",
    "/long": "LENGTH",
    "/exact": "LENGTH",
    "/nonEmpty": "LENGTH",
    "/list": "LENGTH",
    "/small": "RANGE",
    "/big": "RANGE",
    "/whole": "RANGE",
    "/pattern": "FORMAT",
    "/email": "FORMAT",
    "/pick": "FORMAT",
    "/lit": "FORMAT",
    "/unknown": "UNKNOWN_FIELD",
    "/confirm": "MISMATCH",
  });
});

test("MISMATCH via v.check keeps the schema's own message", () => {
  const schema = v.pipe(v.object({ a: v.number(), b: v.number() }), v.check((o) => o.a < o.b, "a must be below b"));
  const [x] = violationsOf(schema, { a: 2, b: 1 });
  assert.equal(x, { location: "body", code: "MISMATCH", detail: "a must be below b", pointer: "" });
});

test("the location decides the error code and field vs pointer", () => {
  const params = v.object({ id: v.pipe(v.string(), v.regex(/^\d+$/)) });
  const p = raised(() => validateInput(params, { id: "abc" }, "path"));
  assert.is(p.code, "GW_REQUEST_PATH_PARAMETER_INVALID");
  assert.equal(p.info.violations, [{ location: "path", field: "id", code: "FORMAT", detail: p.info.violations![0]!.detail }]);
  const h = raised(() => validateInput(params, { id: "abc" }, "header"));
  assert.is(h.code, "GW_REQUEST_HEADER_INVALID");
  assert.is(h.info.violations![0]!.field, "id");
  const q = raised(() => validateInput(v.strictObject({ limit: v.optional(v.string()) }), { limit: "1", page: "2", sort: "x" }, "query"));
  assert.is(q.code, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(q.info.violations!.map((x) => [x.location, x.field, x.code]), [
    ["query", "page", "UNKNOWN_FIELD"],
    ["query", "sort", "UNKNOWN_FIELD"],
  ]);
  const b = raised(() => validateInput(v.object({ a: v.string() }), {}, "body"));
  assert.is(b.code, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(b.info.violations![0]!.pointer, "/a");
  assert.not.ok("field" in b.info.violations![0]!);
});

test("a valid value is returned as the schema's output", () => {
  const out = validateInput(v.object({ n: v.pipe(v.string(), v.transform(Number)) }), { n: "4" }, "body");
  assert.equal(out, { n: 4 });
});

test("a non-object body against an object schema is one TYPE violation at the root pointer", () => {
  assert.equal(
    violationsOf(v.object({ a: v.string() }), "text").map((x) => [x.pointer, x.code]),
    [["", "TYPE"]],
  );
  assert.equal(
    violationsOf(v.object({ a: v.string() }), undefined).map((x) => [x.pointer, x.code]),
    [["", "REQUIRED"]],
  );
});

test("details never repeat the rejected value, whatever valibot's default message", () => {
  const secret = "SECRET-VALUE-123";
  const schema = v.object({
    a: v.number(),
    b: v.pipe(v.string(), v.regex(/^x$/)),
    c: v.pipe(v.string(), v.email()),
    d: v.pipe(v.string(), v.url()),
    e: v.picklist(["x"]),
    f: v.pipe(v.string(), v.maxLength(3)),
    g: v.literal("x"),
    h: v.pipe(v.string(), v.uuid()),
    i: v.pipe(v.string(), v.isoDate()),
    j: v.pipe(v.string(), v.startsWith("x")),
    k: v.pipe(v.string(), v.value("x")),
  });
  const value = Object.fromEntries("abcdefghijk".split("").map((k) => [k, secret]));
  const list = violationsOf(schema, value);
  assert.is(list.length, 11);
  for (const x of list) {
    assert.not.ok(x.detail.includes(secret), `${x.pointer}: ${x.detail}`);
    assert.not.ok(/received/i.test(x.detail), `${x.pointer}: ${x.detail}`);
    assert.ok(x.detail.length > 0 && x.detail.length <= 256);
  }
});

test("details are cut to 256 characters; at most 20 violations", () => {
  const long = "m".repeat(400);
  const schema = v.object({ a: v.pipe(v.string(), v.minLength(5, long)) });
  assert.is(violationsOf(schema, { a: "x" })[0]!.detail.length, 256);
  const many = v.array(v.number());
  const list = violationsOf(many, Array.from({ length: 50 }, () => "x"));
  assert.is(list.length, 20);
  assert.equal(list.map((x) => x.pointer), Array.from({ length: 20 }, (_, i) => `/${i}`));
});

test("unknown fields: every one listed (valibot itself reports only the first), nested and in arrays", () => {
  const schema = v.strictObject({
    keep: v.optional(v.string()),
    inner: v.optional(v.nullable(v.strictObject({ x: v.optional(v.number()) }))),
    rows: v.optional(v.array(v.strictObject({ q: v.number() }))),
  });
  const list = violationsOf(schema, { a: 1, b: 2, inner: { x: 1, y: 2, "z/w": 3 }, rows: [{ q: 1, r: 1 }, { q: 2 }] });
  assert.equal(
    list.map((x) => [x.pointer, x.code]).sort(),
    [
      ["/a", "UNKNOWN_FIELD"],
      ["/b", "UNKNOWN_FIELD"],
      ["/inner/y", "UNKNOWN_FIELD"],
      ["/inner/z~1w", "UNKNOWN_FIELD"],
      ["/rows/0/r", "UNKNOWN_FIELD"],
    ].sort(),
  );
  // Without the schema, violationsFromIssues still maps what valibot reported.
  const r = v.safeParse(schema, { a: 1, b: 2 }, { abortEarly: false });
  assert.not.ok(r.success);
  assert.equal(violationsFromIssues(r.issues!, "body").map((x) => x.pointer), ["/a"]);
  assert.equal(violationsFromIssues(r.issues!, "body", schema).map((x) => x.pointer), ["/a", "/b"]);
});

test("toJsonPointer: RFC 6901", () => {
  assert.is(toJsonPointer([]), "");
  assert.is(toJsonPointer(["a"]), "/a");
  assert.is(toJsonPointer(["a/b"]), "/a~1b");
  assert.is(toJsonPointer(["~"]), "/~0");
  assert.is(toJsonPointer(["~1"]), "/~01");
  assert.is(toJsonPointer(["tags", "1"]), "/tags/1");
  assert.is(toJsonPointer([""]), "/");
  assert.is(toJsonPointer(["a", "b~/c", "0"]), "/a/b~0~1c/0");
});

test.run();
