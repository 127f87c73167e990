/**
 * Observability without leaks (spec §5 rule 8, §6; ARCHITECTURE.md §7.5): the redaction layer
 * (`redact`, `sanitizeText`, `isSecretFieldName`), and an end-to-end scan of every log record
 * written while real requests carry keys, passwords, idempotency keys, query tokens, regulator
 * credentials and invoice bodies, including failing ones. Plus the `gateway_request_completed`
 * event: exactly one per request, with the §6 fields.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createLogger, describeError, isSecretFieldName, redact, sanitizeText, type LogFields } from "../../../core/log.ts";
import { definePlugin } from "../../../core/plugin.ts";
import { json } from "../../../core/respond.ts";
import { health } from "../../../plugins/health/plugin.ts";
import { ADMIN_KEY, BEARER_DEMO, DEMO_KEY, OTHER_KEY, STORED, startTestGateway, type CallInit } from "../../support/gateway.ts";
import { probePlugin } from "../../support/probe-plugin.ts";

// ---------------------------------------------------------------------------
// Unit: field names
// ---------------------------------------------------------------------------

test("isSecretFieldName: keys, auth headers, passwords, secrets, tokens, idempotency keys, bodies, queries, credentials", () => {
  for (const name of [
    "x-api-key", "X-API-KEY", "apiKey", "api_key", "x-admin-api-key", "authorization", "Authorization", "proxy-authorization",
    "password", "newPassword", "passwd", "secret", "clientSecret", "apiSecret", "token", "accessToken", "refresh_token",
    "x-idempotency-key", "idempotencyKey", "privateKey", "private_key", "cookie", "set-cookie", "webhook-signature",
    "cryptoMaterial", "certificate", "key", "KEY", "body", "rawBody", "payload", "query", "search", "querystring",
    "credential", "credentials", "regulatorCredentials", "x-gatehouse-edge-secret",
  ]) assert.ok(isSecretFieldName(name), name);
});

test("isSecretFieldName: non-secret identifiers stay loggable (credentialId, requestId, route, …)", () => {
  for (const name of [
    "credentialId", "requestId", "callerRequestId", "route", "status", "code", "durationMs", "responseSize", "host",
    "businessId", "operationId", "dependency", "state", "mode", "method", "keyHash", "monkey", "event", "level",
  ]) assert.not.ok(isSecretFieldName(name), name);
});

// ---------------------------------------------------------------------------
// Unit: free text
// ---------------------------------------------------------------------------

test("sanitizeText: connection-string credentials, URL queries and path queries are removed", () => {
  assert.is(sanitizeText("mongodb://admin:s3cret@db:27017/x"), "mongodb://[redacted]@db:27017/x");
  assert.is(sanitizeText("redis://:pw@r:6379"), "redis://[redacted]@r:6379");
  assert.is(sanitizeText("GET https://api.example/x?token=QSECRET&a=1 failed"), "GET https://api.example/x?[redacted] failed");
  assert.is(sanitizeText("GET /probe/echo?token=QSECRET done"), "GET /probe/echo?[redacted] done");
  assert.is(sanitizeText('{"url":"/v1/x?sig=abc"}'), '{"url":"/v1/x?[redacted]"}');
  assert.is(sanitizeText("no secrets here: 3 items at /probe/echo"), "no secrets here: 3 items at /probe/echo");
});

test("sanitizeText: password=…, secret: …, Bearer and our key formats are masked", () => {
  const out = sanitizeText("database password=hunter2 at mongodb://admin:s3cret@db:27017 exploded");
  assert.not.ok(out.includes("hunter2"));
  assert.not.ok(out.includes("s3cret"));
  assert.ok(out.includes("exploded"), "the rest of the message stays useful");
  for (const [text, secret] of [
    ['{"apiSecret": "abc123xyz"}', "abc123xyz"],
    ["pwd: letmein", "letmein"],
    ["token=tok_999", "tok_999"],
    ["x-api-key: k_123456", "k_123456"],
    ["Authorization: Bearer eyJhbGciOi.payload.sig", "eyJhbGciOi"],
    ["Authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"],
    ["key gw_demo_key_0001 rejected", "gw_demo_key_0001"],
    ["Bearer sk_test_demo_0001", "sk_test_demo_0001"],
    ["admin_demo_key_0001", "admin_demo_key_0001"],
    ["whsec_abcdefgh1234", "whsec_abcdefgh1234"],
    ["privateKey=MIIEvQIBADANBg", "MIIEvQIBADANBg"],
  ] as const) {
    const s = sanitizeText(text);
    assert.not.ok(s.includes(secret), `${text} → ${s}`);
    assert.ok(s.includes("[redacted"), s);
  }
});

test("describeError: name and sanitized message only, at most 500 characters", () => {
  const e = new Error("login failed password=hunter2 for mongodb://u:p@h/db " + "x".repeat(1000));
  const d = describeError(e);
  assert.equal(Object.keys(d).sort(), ["message", "name"]);
  assert.is(d.name, "Error");
  assert.not.ok(d.message.includes("hunter2"));
  assert.not.ok(d.message.includes("u:p@"));
  assert.ok(d.message.length <= 500);
  assert.not.ok(JSON.stringify(d).includes("at "), "no stack");
  assert.equal(describeError("password=hunter2"), { name: "string", message: "non-error thrown" });
});

// ---------------------------------------------------------------------------
// Unit: structured fields
// ---------------------------------------------------------------------------

test("redact: secret-named fields at any depth, Headers, Errors, strings; the input is not changed", () => {
  const input = {
    requestId: "r1",
    credentialId: "demo-primary",
    headers: new Headers({ "x-api-key": DEMO_KEY, authorization: `Bearer ${BEARER_DEMO}`, "x-idempotency-key": "IDEM-SECRET-1", accept: "application/json" }),
    nested: { deeper: { password: "p1", list: [{ token: "t1" }, "url https://x/y?token=QSECRET"] } },
    regulatorCredentials: { email: "taxpayer@example.ng", password: "regpw" },
    body: { invoice: { supplierTin: "TIN-1" } },
    error: new Error("password=hunter2"),
    count: 3,
    flag: true,
    none: null,
  };
  const before = JSON.stringify({ ...input, headers: undefined, error: undefined });
  const out = redact(input);
  const text = JSON.stringify(out);
  for (const s of [DEMO_KEY, BEARER_DEMO, "IDEM-SECRET-1", "p1", "t1", "QSECRET", "taxpayer@example.ng", "regpw", "TIN-1", "hunter2"])
    assert.not.ok(text.includes(s), `${s} in ${text}`);
  assert.is(out.requestId, "r1");
  assert.is(out.credentialId, "demo-primary");
  assert.is(out.count, 3);
  assert.is(out.flag, true);
  assert.is(out.none, null);
  assert.is((out.headers as Record<string, string>).accept, "application/json");
  assert.is((out.headers as Record<string, string>)["x-api-key"], "[redacted]");
  assert.is(out.regulatorCredentials, "[redacted]");
  assert.is(out.body, "[redacted]");
  assert.equal(out.error, { name: "Error", message: "password=[redacted]" });
  assert.is(JSON.stringify({ ...input, headers: undefined, error: undefined }), before, "input unchanged");
});

test("redact: very deep values are truncated, never dumped", () => {
  const deep = { a: { b: { c: { d: { e: { f: { g: "SECRET-DEEP" } } } } } } };
  const text = JSON.stringify(redact(deep));
  assert.ok(text.includes("[truncated]"));
  assert.not.ok(text.includes("SECRET-DEEP"));
});

test("createLogger: records pass through redaction to the sink; levels filter", () => {
  const records: LogFields[] = [];
  const log = createLogger({ level: "warn", sink: (r) => records.push(r) });
  log.event("ignored_info", { x: 1 });
  log.debug("ignored_debug", { x: 1 });
  log.warn("kept_warn", { password: "pw", note: "Bearer abc.def" });
  log.error("kept_error", { error: new Error("token=zzz") });
  assert.equal(records.map((r) => r.event), ["kept_warn", "kept_error"]);
  assert.is(records[0]!.level, "warn");
  assert.match(records[0]!.time as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  const text = JSON.stringify(records);
  for (const s of ["pw\"", "abc.def", "zzz"]) assert.not.ok(text.includes(s), s);
});

// ---------------------------------------------------------------------------
// End to end: many real requests carrying secrets, every log record scanned
// ---------------------------------------------------------------------------

const SECRETS = {
  idem: "IDEMKEY-SECRET-0001",
  query: "QSECRET",
  bodyPassword: "BODY-PASSWORD-8812",
  regEmail: "taxpayer.secret@example.ng",
  regPassword: "REG-PASSWORD-7731",
  tin: "TIN-SECRET-99887766",
  buyer: "Buyer Secret Holdings",
  privateKey: "PRIVATE-KEY-MATERIAL-5544",
  edge: "EDGE-SECRET-VALUE-42",
};

const INVOICE = {
  business_id: "biz-1",
  irn: "INV001-94ND90NR-20240611",
  issue_date: "2024-06-11",
  accounting_supplier_party: { party_name: "Demo Ventures", tin: SECRETS.tin, email: "supplier@example.ng" },
  accounting_customer_party: { party_name: SECRETS.buyer, tin: SECRETS.tin },
  invoice_line: [{ item: "Consulting", price: 1000, quantity: 2 }],
};

/** A plugin that logs the way careless handler code might: whole headers, bodies and URLs. */
const chattyProbe = definePlugin({
  name: "chatty-probe",
  setup: (kit) => ({
    routes: [
    {
      method: "POST",
      path: "/chatty/invoice",
      service: "gateway",
      auth: "apiKey",
      idempotent: true,
      summary: "logs everything it sees",
      handler: (ctx) => {
        kit.log.event("chatty_seen", {
          requestId: ctx.requestId,
          headers: ctx.req.headers,
          body: ctx.body,
          payload: ctx.body,
          url: ctx.req.url,
          path: `${ctx.path}${ctx.search}`,
          search: ctx.search,
          idempotencyKey: ctx.req.headers.get("x-idempotency-key"),
          regulatorCredentials: (ctx.body as { regulatorCredentials?: unknown }).regulatorCredentials,
          cryptoMaterial: { privateKey: SECRETS.privateKey },
        });
        kit.log.warn("chatty_upstream_failed", {
          error: new Error(`upstream 401 for x-api-key: ${ctx.req.headers.get("x-api-key")} at ${ctx.req.url} password=${SECRETS.bodyPassword}`),
          detail: `retrying ${ctx.path}${ctx.search} with Authorization: Bearer ${BEARER_DEMO}`,
        });
        return json(ctx, 201, { accepted: true });
      },
    },
    {
      method: "GET",
      path: "/chatty/throw",
      service: "gateway",
      auth: "apiKey",
      summary: "throws with secrets in the message",
      handler: (ctx) => {
        throw new Error(`failed for ${ctx.req.headers.get("x-api-key")} on ${ctx.req.url}; regulator password=${SECRETS.regPassword}`);
      },
    },
    ],
  }),
});

test("end to end: no secret ever reaches a log record; one completion event per request with the §6 fields", async () => {
  const tg = await startTestGateway({ plugins: [health, probePlugin, chattyProbe] });
  const key = { "x-api-key": DEMO_KEY };
  const bearer = { authorization: `Bearer ${BEARER_DEMO}` };
  const admin = { "x-admin-api-key": ADMIN_KEY };
  const onboardingLike = {
    regulatorCredentials: { email: SECRETS.regEmail, password: SECRETS.regPassword },
    password: SECRETS.bodyPassword,
    cryptoMaterial: { publicKey: "pub", certificate: "cert", privateKey: SECRETS.privateKey },
  };
  const requests: Array<[string, CallInit, number]> = [
    [`/probe/echo?token=${SECRETS.query}`, { headers: key }, 200],
    [`/probe/echo?token=${SECRETS.query}`, { headers: { "x-api-key": "gw_wrong_key_123456" } }, 401],
    [`/probe/echo?token=${SECRETS.query}`, { headers: { "x-api-key": OTHER_KEY } }, 403],
    [`/probe/echo`, { host: STORED, headers: key }, 200],
    [`/probe/boom?token=${SECRETS.query}`, { headers: key }, 500],
    ["/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": SECRETS.idem }, body: { name: "ok" } }, 200],
    ["/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": SECRETS.idem }, body: onboardingLike }, 400],
    ["/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": SECRETS.idem }, body: { name: "ok", mode: "stored", password: SECRETS.bodyPassword } }, 400],
    ["/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": "bad key!" }, body: INVOICE }, 400],
    ["/probe/items/abc", { method: "POST", headers: { ...key, "x-idempotency-key": SECRETS.idem, "content-type": "application/json" }, body: `{"password": "${SECRETS.bodyPassword}"` }, 400],
    ["/chatty/invoice?sig=" + SECRETS.query, { method: "POST", headers: { ...key, "x-idempotency-key": SECRETS.idem }, body: { ...INVOICE, ...onboardingLike } }, 201],
    [`/chatty/throw?token=${SECRETS.query}`, { headers: key }, 500],
    ["/probe/admin", { headers: admin }, 200],
    ["/probe/admin", { headers: { "x-admin-api-key": "admin_wrong_key_0001" } }, 401],
    ["/health/dependencies", { headers: admin }, 200],
    [`/api/v1/probe?token=${SECRETS.query}`, { host: "localhost", headers: bearer }, 200],
    ["/api/v1/probe", { method: "POST", host: "localhost", headers: bearer, body: { amount: 5, password: SECRETS.bodyPassword } }, 422],
    ["/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_wrong_key_999" } }, 401],
    ["/api/v1/probe", { host: "localhost", headers: { authorization: `Basic ${btoa("user:" + SECRETS.bodyPassword)}` } }, 401],
    ["/health", { host: "unprovisioned.example", headers: { ...key, ...bearer, "x-gatehouse-edge-secret": SECRETS.edge } }, 200],
    ["/nope?token=" + SECRETS.query, { headers: key }, 404],
    ["/probe/echo", { host: "unprovisioned.example", headers: key }, 404],
  ];
  const ids: Array<{ id: string; status: number; size: number; path: string }> = [];
  for (const [path, init, status] of requests) {
    const res = await tg.call(path, init);
    const bytes = (await res.arrayBuffer()).byteLength;
    assert.is(res.status, status, `${init.method ?? "GET"} ${path}`);
    ids.push({ id: res.headers.get("x-request-id")!, status, size: bytes, path });
  }

  const all = JSON.stringify(tg.logs);
  const forbidden = [
    DEMO_KEY, OTHER_KEY, BEARER_DEMO, ADMIN_KEY, "gw_wrong_key_123456", "admin_wrong_key_0001", "sk_test_wrong_key_999",
    btoa("user:" + SECRETS.bodyPassword), ...Object.values(SECRETS), "hunter2", "s3cret", "mongodb://admin",
    "supplier@example.ng", "INV001-94ND90NR-20240611", "Consulting",
  ];
  for (const s of forbidden) assert.not.ok(all.includes(s), `log records contain "${s}"`);
  // The chatty plugin did log (so the scan above covered its records).
  assert.ok(tg.logs.some((r) => r.event === "chatty_seen"));
  assert.ok(tg.logs.some((r) => r.event === "chatty_upstream_failed"));
  assert.ok(tg.logs.filter((r) => r.event === "gateway_internal_error").length === 2);

  // Exactly one completion event per request, matching the response's X-Request-ID.
  const completions = tg.logs.filter((r) => r.event === "gateway_request_completed");
  assert.is(completions.length, requests.length);
  for (const { id, status, size, path } of ids) {
    const mine = completions.filter((r) => r.requestId === id);
    assert.is(mine.length, 1, `one completion for ${path}`);
    const c = mine[0]!;
    for (const field of ["requestId", "route", "state", "mode", "status", "code", "durationMs", "responseSize"])
      assert.ok(field in c, `${path}: completion lacks ${field}`);
    assert.is(c.status, status, path);
    assert.type(c.durationMs, "number");
    assert.ok((c.durationMs as number) >= 0);
    assert.is(c.responseSize, size, `${path}: responseSize`);
    if (status < 400) assert.is(c.code, null, `${path}: no code on success`);
    else assert.type(c.code, "string", `${path}: error code`);
    assert.not.ok("path" in c || "url" in c || "query" in c || "headers" in c, "no raw request data");
  }

  const byPath = (p: string) => completions.find((r) => r.requestId === ids.find((x) => x.path === p)!.id)!;
  const echo = byPath(`/probe/echo?token=${SECRETS.query}`);
  assert.is(echo.route, "GET /probe/echo");
  assert.is(echo.state, "TEST");
  assert.is(echo.mode, "passthrough");
  assert.is(echo.credentialId, "demo-primary", "the non-secret credential id IS logged");
  assert.is(byPath("/probe/echo").mode, "stored");
  assert.is(byPath(`/probe/boom?token=${SECRETS.query}`).code, "GW_INTERNAL_ERROR");
  assert.is(byPath("/nope?token=" + SECRETS.query).code, "GW_ROUTE_NOT_FOUND");
  assert.is(byPath("/nope?token=" + SECRETS.query).route, null);
  assert.is(byPath("/probe/admin").credentialId, "demo-operator");
  assert.is(byPath(`/api/v1/probe?token=${SECRETS.query}`).credentialId, "demo-collections");
  assert.is(byPath("/probe/echo").credentialId, "demo-stored-primary", "the Stored host is its own business's");
  const validation = completions.find((r) => r.code === "GW_REQUEST_SERVER_FIELD_SUPPLIED");
  assert.ok(validation, "the server-field rejection is logged with its public code");
  await tg.close();
});

test("end to end: the caller's X-Request-ID is logged as correlation only, beside the authoritative id", async () => {
  const tg = await startTestGateway({ plugins: [probePlugin] });
  const res = await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY, "x-request-id": "caller-corr-42" } });
  assert.is(res.status, 200);
  const c = tg.logs.find((r) => r.event === "gateway_request_completed")!;
  assert.is(c.requestId, res.headers.get("x-request-id"));
  assert.is(c.callerRequestId, "caller-corr-42");
  assert.is.not(c.requestId, "caller-corr-42");
  await tg.close();
});

test.run();
