/**
 * The error contract (spec §2.4, §7; ARCHITECTURE.md §4), through real requests: every problem
 * field with its type, the three headers, violation lists (≤ 20, JSON Pointers, no echoed
 * values), nothing internal on GW_INTERNAL_ERROR, a fresh X-Request-ID on every response, every
 * catalog row rendered as the catalog says, and the collections envelope (DECISIONS.md).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as v from "valibot";
import { createRequestContext, type RequestContext } from "../../../core/context.ts";
import { newRequestId } from "../../../core/request-id.ts";
import { CATALOG, DEFAULT_BACKOFF_AFTER_SECONDS, docsUrl, type GwCode } from "../../../core/errors/catalog.ts";
import { CollectionsError, gwError, type Violation } from "../../../core/errors/gateway-error.ts";
import { MAX_DETAIL, MAX_VIOLATIONS, renderError, type ProblemBody as Problem } from "../../../core/errors/render.ts";
import { definePlugin } from "../../../core/plugin.ts";
import { envelope, json } from "../../../core/respond.ts";
import { health } from "../../../plugins/health/plugin.ts";
import { REQUEST_ID_UUID } from "../../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY_HEADERS as KEY, PASSTHROUGH, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { probePlugin } from "../../support/probe-plugin.ts";

const ISO_MS_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COLLECTIONS_TS = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}$/;
const IDEM = { ...KEY, "x-idempotency-key": "render-test-0001" };

/** Routes this file needs beyond the shared probe plugin. */
const renderProbe = definePlugin({
  name: "render-probe",
  setup: () => ({
    routes: [
    {
      method: "GET",
      path: "/render/rate",
      service: "gateway",
      auth: "apiKey",
      summary: "429 with a quota window",
      handler: () => {
        throw gwError("GW_RATE_LIMIT_EXCEEDED", { retryAfterSeconds: 17 });
      },
    },
    {
      method: "GET",
      path: "/render/capacity",
      service: "gateway",
      auth: "apiKey",
      summary: "503 with the catalog's fixed afterSeconds",
      handler: () => {
        throw gwError("GW_GATEWAY_CAPACITY_EXCEEDED");
      },
    },
    {
      method: "POST",
      path: "/render/contact",
      service: "gateway",
      auth: "apiKey",
      summary: "valibot actions whose default messages quote the input",
      schemas: {
        body: v.strictObject({
          email: v.optional(v.pipe(v.string(), v.email())),
          site: v.optional(v.pipe(v.string(), v.url())),
          note: v.optional(v.pipe(v.string(), v.maxLength(5))),
          kind: v.optional(v.picklist(["A", "B"])),
          ref: v.optional(v.pipe(v.string(), v.regex(/^[a-z]+$/))),
          nested: v.optional(v.strictObject({ "a/b": v.optional(v.number()), "c~d": v.optional(v.number()) })),
          lines: v.optional(v.array(v.strictObject({ qty: v.number() }))),
        }),
      },
      handler: (ctx) => json(ctx, 200, { ok: true }),
    },
    {
      method: "GET",
      path: "/api/v1/render-boom",
      service: "collections",
      auth: "bearer",
      summary: "collections route failing unexpectedly",
      handler: () => {
        throw new Error("redis://default:s3cret@cache:6379 refused; password=hunter2");
      },
    },
    {
      method: "POST",
      path: "/api/v1/render-duplicate",
      service: "collections",
      auth: "bearer",
      summary: "collections route raising its own 409",
      handler: () => {
        throw new CollectionsError(409, "source_reference already used", []);
      },
    },
    {
      method: "GET",
      path: "/api/v1/render-ok",
      service: "collections",
      auth: "bearer",
      summary: "collections success",
      handler: (ctx) => envelope(ctx, 200, "ok", { fine: true }),
    },
    ],
  }),
});

let tg: TestGateway;

test.before(async () => {
  tg = await startTestGateway({ plugins: [health, probePlugin, renderProbe] });
});
test.after(async () => {
  await tg.close();
});


/** Reads a problem response and checks every §2.4 field, its type and the three headers. */
async function problemOf(res: Response, code: GwCode, path: string): Promise<{ body: Problem; text: string }> {
  const text = await res.text();
  const row = CATALOG[code];
  assert.is(res.headers.get("content-type"), "application/problem+json", `${code} content-type`);
  assert.is(res.headers.get("cache-control"), "no-store", `${code} cache-control`);
  const rid = res.headers.get("x-request-id");
  assert.ok(rid && REQUEST_ID_UUID.test(rid), `${code} X-Request-ID is a UUID`);
  const body = JSON.parse(text) as Problem;
  assert.is(body.code, code);
  assert.is(res.status, row.status, `${code} HTTP status`);
  assert.is(body.status, res.status);
  assert.is(body.statusCode, res.status);
  assert.type(body.type, "string");
  assert.is(new URL(body.type).protocol, "https:", "type is an absolute URI");
  assert.is(body.type, docsUrl(code));
  assert.type(body.title, "string");
  assert.ok(body.title.length > 0);
  assert.type(body.detail, "string");
  assert.is(body.message, body.detail);
  assert.type(body.instance, "string");
  assert.match(body.instance, /^urn:[a-z0-9][a-z0-9-]{0,31}:\S+$/i, "instance is a URN");
  assert.ok(body.instance.includes(body.requestId), "instance identifies the request");
  assert.is(body.requestId, rid);
  assert.match(body.timestamp, ISO_MS_UTC);
  assert.ok(Math.abs(Date.parse(body.timestamp) - Date.now()) < 60_000, "timestamp is now");
  assert.type(body.action, "object");
  assert.is(body.action.code, row.action);
  assert.type(body.action.description, "string");
  assert.ok(body.action.description.length > 0);
  assert.is(new URL(body.action.documentation).protocol, "https:");
  assert.is(body.retry.strategy, row.strategy);
  assert.is(body.retry.sameIdempotencyKey, row.sameIdempotencyKey);
  if (body.retry.afterSeconds !== undefined) assert.ok(Number.isInteger(body.retry.afterSeconds) && body.retry.afterSeconds >= 0);
  assert.is(body.path, path);
  if (body.errors !== undefined) assert.ok(Array.isArray(body.errors));
  return { body, text };
}

/** A minimal context, as the dispatcher makes one. */
function ctxFor(path = "/x", service: RequestContext["service"] = "gateway"): RequestContext {
  const url = new URL(`http://${PASSTHROUGH}${path}`);
  const ctx = createRequestContext(new Request(url), newRequestId(), url);
  ctx.service = service;
  return ctx;
}

// ---------------------------------------------------------------------------
// Problem body, through real requests
// ---------------------------------------------------------------------------

test("a validation problem carries every §2.4 field, typed, with the three headers", async () => {
  const res = await tg.call("/probe/items/abc", { method: "POST", headers: IDEM, body: { name: 5 } });
  const { body } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/probe/items/abc");
  assert.is(res.status, 400);
  assert.equal(body.errors, [{ location: "body", code: "TYPE", detail: body.errors![0]!.detail, pointer: "/name" }]);
  assert.ok(!("afterSeconds" in body.retry), "no afterSeconds when the catalog has none");
  assert.not.ok("operationId" in body);
  const keys = Object.keys(body).sort();
  assert.equal(keys, ["action", "code", "detail", "errors", "instance", "message", "path", "requestId", "retry", "status", "statusCode", "timestamp", "title", "type"]);
});

test("operationId is present on /probe/operation (ambiguous mutation outcome)", async () => {
  const res = await tg.call("/probe/operation", { headers: KEY });
  const { body } = await problemOf(res, "GW_TRANSMIT_OUTCOME_UNCONFIRMED", "/probe/operation");
  assert.is(body.operationId, "op_123");
  assert.is(res.status, 502);
});

test("429 and 503 carry retry.afterSeconds and a matching Retry-After header", async () => {
  const rate = await tg.call("/render/rate", { headers: KEY });
  const r = await problemOf(rate, "GW_RATE_LIMIT_EXCEEDED", "/render/rate");
  assert.is(r.body.retry.afterSeconds, 17);
  assert.is(rate.headers.get("retry-after"), "17");
  const cap = await tg.call("/render/capacity", { headers: KEY });
  const c = await problemOf(cap, "GW_GATEWAY_CAPACITY_EXCEEDED", "/render/capacity");
  assert.is(c.body.retry.afterSeconds, CATALOG.GW_GATEWAY_CAPACITY_EXCEEDED.afterSeconds);
  assert.is(cap.headers.get("retry-after"), String(CATALOG.GW_GATEWAY_CAPACITY_EXCEEDED.afterSeconds));
});

test("405 carries the Allow header and the full problem", async () => {
  const res = await tg.call("/probe/echo", { method: "PUT", headers: KEY });
  await problemOf(res, "GW_METHOD_NOT_ALLOWED", "/probe/echo");
  assert.is(res.headers.get("allow"), "DELETE, GET");
});

test("errors[] is capped at 20: 30 bad values", async () => {
  const tags = Array.from({ length: 30 }, (_, i) => i);
  const res = await tg.call("/probe/items/abc", { method: "POST", headers: IDEM, body: { name: "ok", tags } });
  const { body } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/probe/items/abc");
  assert.is(body.errors!.length, MAX_VIOLATIONS);
  assert.equal(body.errors!.map((e) => e.pointer), tags.slice(0, 20).map((i) => `/tags/${i}`));
  for (const e of body.errors!) assert.is(e.code, "TYPE");
});

test("errors[] lists every unknown field (not only the first), capped at 20: 30 unknown fields", async () => {
  const extra = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`extra${i}`, `SECRET-VALUE-${i}`]));
  const res = await tg.call("/probe/items/abc", { method: "POST", headers: IDEM, body: { name: "ok", ...extra } });
  const { body, text } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/probe/items/abc");
  assert.is(body.errors!.length, 20);
  assert.equal(body.errors!.map((e) => e.pointer), Array.from({ length: 20 }, (_, i) => `/extra${i}`));
  for (const e of body.errors!) {
    assert.is(e.code, "UNKNOWN_FIELD");
    assert.is(e.location, "body");
  }
  assert.not.ok(text.includes("SECRET-VALUE"), "values of unknown fields are never echoed");
});

test("a small number of unknown fields are all listed", async () => {
  const res = await tg.call("/probe/items/abc", { method: "POST", headers: IDEM, body: { name: "ok", one: 1, two: 2, three: 3 } });
  const { body } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/probe/items/abc");
  assert.equal(body.errors!.map((e) => [e.pointer, e.code]), [
    ["/one", "UNKNOWN_FIELD"],
    ["/two", "UNKNOWN_FIELD"],
    ["/three", "UNKNOWN_FIELD"],
  ]);
});

test("violation details are ≤ 256 characters and never repeat the rejected value", async () => {
  const secret = "SECRET-VALUE-123";
  const probes: Array<[string, unknown]> = [
    ["/probe/items/abc", { name: 12345, count: secret, tags: ["fine", secret.length, { secret }] }],
    ["/probe/items/abc", { name: "S", count: 1.5 }],
    ["/render/contact", { email: `${secret}-email`, site: `${secret}-site`, note: `${secret}-note`, kind: `${secret}-kind`, ref: `${secret}-ref` }],
    ["/render/contact", { nested: { "a/b": secret, "c~d": secret }, lines: [{ qty: 1 }, { qty: secret }] }],
  ];
  for (const [path, payload] of probes) {
    const res = await tg.call(path, { method: "POST", headers: path.startsWith("/probe") ? IDEM : KEY, body: payload });
    const { body, text } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", path);
    assert.ok(body.errors!.length > 0, path);
    for (const e of body.errors!) {
      assert.type(e.detail, "string");
      assert.ok(e.detail.length > 0 && e.detail.length <= MAX_DETAIL, `detail length ${e.detail.length}`);
      assert.ok(["REQUIRED", "FORMAT", "TYPE", "RANGE", "LENGTH", "UNKNOWN_FIELD", "MISMATCH", "IMMUTABLE_FIELD"].includes(e.code));
      assert.is(e.location, "body");
      assert.type(e.pointer, "string");
      assert.not.ok("field" in e, "body problems use pointer, not field");
    }
    assert.not.ok(text.includes(secret), `${path}: the rejected value appears in ${text}`);
    assert.not.ok(/received/i.test(text), "valibot's 'received …' text is never returned");
  }
});

test("valibot actions without an expectation (email, url) do not echo the value", async () => {
  const res = await tg.call("/render/contact", { method: "POST", headers: KEY, body: { email: "ECHO-ME-EMAIL", site: "ECHO-ME-URL" } });
  const { body, text } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/render/contact");
  assert.equal(body.errors!.map((e) => [e.pointer, e.code]), [
    ["/email", "FORMAT"],
    ["/site", "FORMAT"],
  ]);
  assert.not.ok(text.includes("ECHO-ME"));
});

test("JSON Pointers: RFC 6901 escaping and array indexes", async () => {
  const res = await tg.call("/probe/items/abc", {
    method: "POST",
    headers: IDEM,
    body: { name: "ok", tags: ["a", 7], "a/b": 1, "~x": 2, "m~/n": 3 },
  });
  const { body } = await problemOf(res, "GW_REQUEST_VALIDATION_FAILED", "/probe/items/abc");
  const pointers = body.errors!.map((e) => e.pointer);
  assert.ok(pointers.includes("/tags/1"), `nested array index in ${pointers}`);
  assert.ok(pointers.includes("/a~1b"), "'/' escaped as ~1");
  assert.ok(pointers.includes("/~0x"), "'~' escaped as ~0");
  assert.ok(pointers.includes("/m~0~1n"), "'~' before '/' both escaped");

  const nested = await tg.call("/render/contact", {
    method: "POST",
    headers: KEY,
    body: { nested: { "a/b": "x", "c~d": "y", "e/f": 1 }, lines: [{ qty: 1 }, { qty: 2, extra: true }, {}] },
  });
  const n = await problemOf(nested, "GW_REQUEST_VALIDATION_FAILED", "/render/contact");
  assert.equal(
    n.body.errors!.map((e) => [e.pointer, e.code]).sort(),
    [
      ["/nested/a~1b", "TYPE"],
      ["/nested/c~0d", "TYPE"],
      ["/nested/e~1f", "UNKNOWN_FIELD"],
      ["/lines/1/extra", "UNKNOWN_FIELD"],
      ["/lines/2/qty", "REQUIRED"],
    ].sort(),
  );
});

test("a path parameter problem names the parameter and does not repeat its value in errors[]", async () => {
  const res = await tg.call("/probe/items/SECRET-VALUE-123", { method: "POST", headers: IDEM, body: { name: "ok" } });
  const { body } = await problemOf(res, "GW_REQUEST_PATH_PARAMETER_INVALID", "/probe/items/SECRET-VALUE-123");
  assert.is(body.errors!.length, 1);
  assert.is(body.errors![0]!.location, "path");
  assert.is(body.errors![0]!.field, "itemId");
  assert.is(body.errors![0]!.code, "FORMAT");
  assert.not.ok("pointer" in body.errors![0]!);
  assert.not.ok(JSON.stringify(body.errors).includes("SECRET"), "only `path` (the request path) carries it");
});

test("header problems never repeat the header value", async () => {
  const badRid = await tg.call("/probe/echo", { headers: { ...KEY, "x-request-id": "-SECRET-RID-VALUE" } });
  const r = await problemOf(badRid, "GW_REQUEST_HEADER_INVALID", "/probe/echo");
  assert.equal(r.body.errors!.map((e) => [e.location, e.field, e.code]), [["header", "X-Request-ID", "FORMAT"]]);
  assert.not.ok(r.text.includes("SECRET-RID-VALUE"));

  const badKey = await tg.call("/probe/items/abc", { method: "POST", headers: { ...KEY, "x-idempotency-key": "SECRET KEY VALUE!" }, body: { name: "ok" } });
  const k = await problemOf(badKey, "GW_IDEMPOTENCY_KEY_INVALID", "/probe/items/abc");
  assert.not.ok(k.text.includes("SECRET KEY VALUE"));

  const missing = await tg.call("/probe/items/abc", { method: "POST", headers: KEY, body: { name: "ok" } });
  await problemOf(missing, "GW_IDEMPOTENCY_KEY_REQUIRED", "/probe/items/abc");
});

test("server-managed fields: GW_REQUEST_SERVER_FIELD_SUPPLIED with IMMUTABLE_FIELD pointers", async () => {
  const res = await tg.call("/probe/items/abc", { method: "POST", headers: IDEM, body: { name: "ok", mode: "stored", fee: "0.00" } });
  const { body } = await problemOf(res, "GW_REQUEST_SERVER_FIELD_SUPPLIED", "/probe/items/abc");
  assert.equal(body.errors!.map((e) => [e.pointer, e.code]), [
    ["/mode", "IMMUTABLE_FIELD"],
    ["/fee", "IMMUTABLE_FIELD"],
  ]);
  assert.not.ok(JSON.stringify(body).includes("0.00"));
});

test("GW_INTERNAL_ERROR for an unexpected exception leaks nothing internal", async () => {
  const res = await tg.call("/probe/boom", { headers: KEY });
  const { body, text } = await problemOf(res, "GW_INTERNAL_ERROR", "/probe/boom");
  assert.is(res.status, 500);
  assert.is(body.retry.strategy, "CONTACT_SUPPORT");
  for (const leaked of ["password", "hunter2", "mongodb://", "s3cret", "exploded", "database", "Error:", "stack"])
    assert.not.ok(text.includes(leaked), `"${leaked}" leaked: ${text}`);
  assert.not.match(text, /\bat [^\s]+ \(|\bat .*:\d+:\d+/, "stack frames");
  assert.not.match(text, /\/work\/|\.ts\b|\.js\b|node:internal|file:\/\//, "file paths");
  assert.is(body.detail, CATALOG.GW_INTERNAL_ERROR.description);
});

test("every response carries X-Request-ID: a fresh UUID per request, never the caller's", async () => {
  const calls: Array<[string, Parameters<TestGateway["call"]>[1]]> = [
    ["/probe/echo", { headers: KEY }], // 200
    ["/probe/echo", { headers: { ...KEY, "x-request-id": "caller-supplied-1" } }], // 200, caller id ignored
    ["/nope", { headers: KEY }], // 404 route
    ["/probe/boom", { headers: KEY }], // 500
    ["/probe/echo", {}], // 401
    ["/health", {}], // health
    ["/health", { host: "unprovisioned.example" }], // health on any host
    ["/openapi.json", { host: "unprovisioned.example" }],
    ["/probe/echo", { host: "unprovisioned.example" }], // 404 domain
    ["/api/v1/probe", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } }], // collections 200
    ["/api/v1/nope", { host: "localhost" }], // collections 404
  ];
  const seen = new Set<string>();
  for (const [path, init] of calls) {
    const res = await tg.call(path, init);
    const id = res.headers.get("x-request-id");
    assert.ok(id && REQUEST_ID_UUID.test(id), `${path} → ${res.status}: X-Request-ID ${id}`);
    assert.not.ok(seen.has(id!), "fresh per request");
    seen.add(id!);
    const text = await res.text();
    if (res.headers.get("content-type")?.includes("json") && text.startsWith("{")) {
      const body = JSON.parse(text) as { requestId?: string };
      if (body.requestId !== undefined) assert.is(body.requestId, id, `${path}: body requestId == header`);
    }
  }
  assert.is(seen.size, calls.length);
  // The same request twice gets two IDs.
  const a = await tg.call("/health");
  const b = await tg.call("/health");
  assert.is.not(a.headers.get("x-request-id"), b.headers.get("x-request-id"));
});

// ---------------------------------------------------------------------------
// Every catalog row, rendered directly
// ---------------------------------------------------------------------------

test("renderError: for EVERY catalog code, status/strategy/sameIdempotencyKey/afterSeconds/Retry-After are the catalog's", async () => {
  const codes = Object.keys(CATALOG) as GwCode[];
  assert.ok(codes.length >= 80);
  for (const code of codes) {
    const row = CATALOG[code];
    const ctx = ctxFor(`/c/${code}`);
    const rendered = renderError(ctx, gwError(code));
    assert.is(rendered.code, code);
    assert.is(rendered.internal, false);
    const res = rendered.response;
    assert.is(res.status, row.status, `${code} status`);
    const { body } = await problemOf(res, code, `/c/${code}`);
    assert.is(body.requestId, ctx.requestId);
    assert.is(body.retry.strategy, row.strategy, `${code} strategy`);
    assert.is(body.retry.sameIdempotencyKey, row.sameIdempotencyKey, `${code} sameIdempotencyKey`);
    // The row's own wait, else (every BACKOFF answer names one) the BACKOFF default.
    const own = "afterSeconds" in row ? (row as { afterSeconds?: number }).afterSeconds : undefined;
    const fixed = own ?? (row.strategy === "BACKOFF" ? DEFAULT_BACKOFF_AFTER_SECONDS : undefined);
    assert.is(body.retry.afterSeconds, fixed, `${code} afterSeconds`);
    const wantHeader = fixed !== undefined && (row.status === 429 || row.status === 503);
    assert.is(res.headers.get("retry-after"), wantHeader ? String(fixed) : null, `${code} Retry-After`);
    if (row.status === 429 || row.status === 503) {
      // A raise may supply its own window: body and header both carry it.
      const raised = renderError(ctxFor(), gwError(code, { retryAfterSeconds: 42 })).response;
      assert.is(raised.headers.get("retry-after"), "42", `${code} own Retry-After`);
      assert.is(((await raised.json()) as Problem).retry.afterSeconds, 42);
    }
  }
});

test("renderError: anything that is not a GatewayError is GW_INTERNAL_ERROR, marked internal", async () => {
  for (const thrown of [new Error("boom password=x"), "a string", null, undefined, { code: "GW_API_KEY_INVALID" }, new TypeError("x is undefined")]) {
    const rendered = renderError(ctxFor("/i"), thrown);
    assert.is(rendered.code, "GW_INTERNAL_ERROR");
    assert.is(rendered.internal, true);
    const { text } = await problemOf(rendered.response, "GW_INTERNAL_ERROR", "/i");
    assert.not.ok(text.includes("password"));
    assert.not.ok(text.includes("undefined"));
  }
});

test("renderError: detail and violation details are cut to 256, violations to 20", async () => {
  const long = "d".repeat(1000);
  const violations: Violation[] = Array.from({ length: 45 }, (_, i) => ({ location: "body", pointer: `/f${i}`, code: "FORMAT", detail: long }));
  const { response } = renderError(ctxFor("/v"), gwError("GW_REQUEST_VALIDATION_FAILED", { detail: long, violations }));
  const { body } = await problemOf(response, "GW_REQUEST_VALIDATION_FAILED", "/v");
  assert.is(body.detail.length, MAX_DETAIL);
  assert.is(body.errors!.length, MAX_VIOLATIONS);
  for (const e of body.errors!) assert.is(e.detail.length, MAX_DETAIL);
  assert.is(Number(response.headers.get("content-length")), Buffer.byteLength(JSON.stringify(body)));
});

test("renderError on a collections context answers the envelope (validation → 422)", async () => {
  const ctx = ctxFor("/api/v1/x", "collections");
  const { response, code } = renderError(
    ctx,
    gwError("GW_REQUEST_VALIDATION_FAILED", { violations: [{ location: "body", pointer: "/amount", code: "RANGE", detail: "too small" }] }),
  );
  assert.is(code, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(response.status, 422);
  assert.is(response.headers.get("content-type"), "application/json");
  const body = (await response.json()) as Record<string, unknown>;
  assert.equal(Object.keys(body).sort(), ["errors", "message", "requestId", "requestTimestamp", "statusCode"]);
  assert.is(body.statusCode, 422);
  assert.is(body.requestId, ctx.requestId);
  assert.equal(body.errors, [{ field: "amount", message: "too small" }]);
  // Other codes keep their catalog status.
  assert.is(renderError(ctxFor("/api/v1/x", "collections"), gwError("GW_RATE_LIMIT_EXCEEDED", { retryAfterSeconds: 3 })).response.status, 429);
  assert.is(renderError(ctxFor("/api/v1/x", "collections"), gwError("GW_RATE_LIMIT_EXCEEDED", { retryAfterSeconds: 3 })).response.headers.get("retry-after"), "3");
  assert.is(renderError(ctxFor("/api/v1/x", "collections"), new Error("x")).response.status, 500);
});

// ---------------------------------------------------------------------------
// The collections envelope, through real requests
// ---------------------------------------------------------------------------

const BEARER = { authorization: `Bearer ${BEARER_DEMO}` };

async function envelopeOf(res: Response, status: number): Promise<{ requestId: string; requestTimestamp: string; message: string; statusCode: number; errors: Array<{ field: string; message: string }> }> {
  assert.is(res.status, status);
  assert.is(res.headers.get("content-type"), "application/json");
  const rid = res.headers.get("x-request-id");
  assert.ok(rid && REQUEST_ID_UUID.test(rid));
  const body = (await res.json()) as Awaited<ReturnType<typeof envelopeOf>>;
  assert.equal(Object.keys(body).sort(), ["errors", "message", "requestId", "requestTimestamp", "statusCode"]);
  assert.is(body.requestId, rid);
  assert.match(body.requestTimestamp, COLLECTIONS_TS);
  assert.ok(Math.abs(Date.parse(body.requestTimestamp.replace(" ", "T") + "Z") - Date.now()) < 60_000, "requestTimestamp is UTC now");
  assert.type(body.message, "string");
  assert.ok(body.message.length > 0);
  assert.is(body.statusCode, status);
  assert.ok(Array.isArray(body.errors));
  for (const e of body.errors) {
    assert.type(e.field, "string");
    assert.type(e.message, "string");
  }
  return body;
}

test("collections validation → 422 envelope listing the field, no value echoed", async () => {
  const res = await tg.call("/api/v1/probe", { method: "POST", host: "localhost", headers: BEARER, body: { amount: 5 } });
  const body = await envelopeOf(res, 422);
  assert.is(body.errors.length, 1);
  assert.match(body.errors[0]!.field, /amount$/);
  assert.is(body.errors[0]!.message, "must be at least 100");
  const wrongType = await tg.call("/api/v1/probe", { method: "POST", host: "localhost", headers: BEARER, body: { amount: "SECRET-AMOUNT" } });
  const w = await envelopeOf(wrongType, 422);
  assert.not.ok(JSON.stringify(w).includes("SECRET-AMOUNT"));
  const missing = await tg.call("/api/v1/probe", { method: "POST", host: "localhost", headers: BEARER, body: {} });
  const m = await envelopeOf(missing, 422);
  assert.match(m.errors[0]!.field, /amount$/);
});

test("collections: invalid JSON → 400 envelope; unknown route → 404 envelope; auth → 401 envelope", async () => {
  const bad = await tg.call("/api/v1/probe", {
    method: "POST",
    host: "localhost",
    headers: { ...BEARER, "content-type": "application/json" },
    body: '{"amount": SECRET-JSON',
  });
  const b = await envelopeOf(bad, 400);
  assert.not.ok(JSON.stringify(b).includes("SECRET-JSON"));
  await envelopeOf(await tg.call("/api/v1/nowhere", { host: "localhost", headers: BEARER }), 404);
  await envelopeOf(await tg.call("/api/v1/nowhere", { host: "127.0.0.1" }), 404);
  await envelopeOf(await tg.call("/api/v1/probe", { host: "localhost" }), 401);
  await envelopeOf(await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_unknown_key" } }), 401);
  await envelopeOf(await tg.call("/api/v1/render-duplicate", { method: "POST", host: "localhost", headers: BEARER }), 409);
});

test("collections: an unexpected exception → 500 envelope with nothing internal", async () => {
  const res = await tg.call("/api/v1/render-boom", { host: "localhost", headers: BEARER });
  const body = await envelopeOf(res, 500);
  const text = JSON.stringify(body);
  for (const leaked of ["redis://", "s3cret", "hunter2", "password", "refused", "Error"]) assert.not.ok(text.includes(leaked), leaked);
  const ok = await tg.call("/api/v1/render-ok", { host: "localhost", headers: BEARER });
  assert.is(ok.status, 200);
  const okBody = (await ok.json()) as Record<string, unknown>;
  assert.match(okBody.requestTimestamp as string, COLLECTIONS_TS);
  assert.is(okBody.requestId, ok.headers.get("x-request-id"));
});

test.run();
