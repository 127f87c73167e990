/**
 * Stage 10, mode: the domain's mode (Pass-through / Stored) is resolved from the hostname, never
 * from the request; a route not offered in that mode gives 409 GW_OPERATION_MODE_CONFLICT; a
 * domain whose mode cannot be determined gives 503 GW_TENANT_MODE_UNAVAILABLE.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as v from "valibot";
import { DIRECTORY_COLLECTIONS, type DomainDoc } from "../../core/directory-store.ts";
import { DEFAULT_BACKOFF_AFTER_SECONDS } from "../../core/errors/catalog.ts";
import { definePlugin } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { plugins } from "../../plugins/index.ts";
import { expectProblem } from "../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY_HEADERS as KEY, OTHER_KEY, PASSTHROUGH, STORED, gatewayTracker } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";

const SIGN = { ...KEY, "x-idempotency-key": "mode-sign-0001", "x-sub-business-id": "sub-1" };

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("a Stored-only route on a Pass-through domain gives 409 GW_OPERATION_MODE_CONFLICT; on a Stored domain it answers", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const conflict = await tg.call("/probe/stored-only", { host: PASSTHROUGH, headers: KEY });
  const body = await expectProblem(conflict, 409, "GW_OPERATION_MODE_CONFLICT", "AFTER_CORRECTION");
  assert.match(body.detail, /Pass-through/);
  const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
  assert.is(done?.mode, "passthrough", "the resolved mode is logged");

  const ok = await tg.call("/probe/stored-only", { host: STORED, headers: KEY });
  assert.is(ok.status, 200);
  const echo = await ok.json();
  assert.is(echo.mode, "stored");
  assert.is(echo.host, STORED);
  await tg.close();
});

test("a Pass-through-only route (sign) on a Stored domain gives 409; on a Pass-through domain it answers", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const conflict = await tg.call("/probe/sign", { method: "POST", host: STORED, headers: SIGN, body: { invoice: 1 } });
  const body = await expectProblem(conflict, 409, "GW_OPERATION_MODE_CONFLICT", "AFTER_CORRECTION");
  assert.match(body.detail, /Stored/);
  const ok = await tg.call("/probe/sign", { method: "POST", host: PASSTHROUGH, headers: SIGN, body: { invoice: 1 } });
  assert.is(ok.status, 200);
  await tg.close();
});

test("routes without modes answer in both; the mode comes from the hostname, never from the request", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const [host, mode] of [
    [PASSTHROUGH, "passthrough"],
    [STORED, "stored"],
  ] as const) {
    const res = await tg.call("/probe/echo", { host, headers: KEY });
    assert.is(res.status, 200, host);
    assert.is((await res.json()).mode, mode);
    // A mode the request names itself is refused (spec §1.2 rule 1, every channel), not ignored.
    const other = mode === "stored" ? "passthrough" : "stored";
    const named = await tg.call(`/probe/echo?mode=${other}`, { host, headers: { ...KEY, "x-mode": other, "x-operation-mode": other } });
    const body = await expectProblem(named, 400, "GW_REQUEST_SERVER_FIELD_SUPPLIED", "AFTER_CORRECTION");
    assert.equal(
      body.errors.map((e: { location: string; field: string }) => `${e.location}:${e.field}`).sort(),
      ["header:x-mode", "header:x-operation-mode", "query:mode"],
    );
  }
  await tg.close();
});

test("the mode check runs last: authentication failures answer first", async () => {
  const tg = await start({ plugins: [probePlugin] });
  await expectProblem(await tg.call("/probe/stored-only", { host: PASSTHROUGH }), 401, "GW_AUTH_API_KEY_REQUIRED", "AFTER_CORRECTION");
  await expectProblem(
    await tg.call("/probe/stored-only", { host: PASSTHROUGH, headers: { "x-api-key": OTHER_KEY } }),
    403,
    "GW_AUTH_TENANT_FORBIDDEN",
    "AFTER_CORRECTION",
  );
  await tg.close();
});

test("health and collections routes are unaffected by the domain's mode", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  for (const host of [PASSTHROUGH, STORED]) {
    for (const path of ["/health", "/health/live"]) {
      const res = await tg.call(path, { host });
      assert.is(res.status, 200, `${path} on ${host}`);
      assert.equal(await res.json(), { status: "ok" });
    }
  }
  const col = await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } });
  assert.is(col.status, 200);
  await tg.close();
});

test("a domain whose stored mode cannot be read gives 503 GW_TENANT_MODE_UNAVAILABLE (BACKOFF, same key)", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  const { gateway } = tg;
  // A record this version cannot read the mode of (written by a newer version, or damaged).
  await gateway.kit.ports.documentStore
    .collection<DomainDoc>(DIRECTORY_COLLECTIONS.domains)
    .findOneAndUpdate({ _id: PASSTHROUGH }, { $set: { mode: "hybrid" as never }, $inc: { rev: 1 } });
  await gateway.kit.directory.changed({ kind: "domain", id: PASSTHROUGH });
  for (const path of ["/probe/echo", "/probe/stored-only"]) {
    const res = await tg.call(path, { host: PASSTHROUGH, headers: KEY });
    const body = await expectProblem(res, 503, "GW_TENANT_MODE_UNAVAILABLE", "BACKOFF");
    assert.is(body.retry.sameIdempotencyKey, true);
    assert.is(res.headers.get("retry-after"), String(DEFAULT_BACKOFF_AFTER_SECONDS), "a BACKOFF 503 names its wait");
    assert.is(body.retry.afterSeconds, DEFAULT_BACKOFF_AFTER_SECONDS);
  }
  // Health does not need the mode; the other domains keep theirs.
  assert.is((await tg.call("/health", { host: PASSTHROUGH })).status, 200);
  assert.is((await tg.call("/probe/stored-only", { host: STORED, headers: KEY })).status, 200);
  await tg.close();
});

/** One method + path per mode with different bodies: the mode stage picks the domain's declaration. */
const variantPlugin = definePlugin({
  name: "variants",
  setup: () => ({
    routes: [
    {
      method: "POST",
      path: "/probe/variant",
      service: "gateway",
      auth: "apiKey",
      modes: ["passthrough"],
      schemas: { body: v.strictObject({ document: v.string() }) },
      summary: "the Pass-through variant",
      handler: (ctx) => json(ctx, 201, { variant: "passthrough", route: ctx.route!.id, body: ctx.body }),
    },
    {
      method: "POST",
      path: "/probe/variant",
      service: "gateway",
      auth: "apiKey",
      modes: ["stored"],
      idempotent: true,
      schemas: { body: v.strictObject({ intake: v.number() }) },
      summary: "the Stored variant",
      handler: (ctx) => json(ctx, 202, { variant: "stored", route: ctx.route!.id, body: ctx.body }),
    },
    { method: "GET", path: "/probe/variant", service: "gateway", auth: "apiKey", modes: ["stored"], summary: "stored read", handler: (ctx) => json(ctx, 200, { read: true }) },
    ],
  }),
});

test("mode variants: each mode runs its own declaration (body schema, idempotency, handler)", async () => {
  const tg = await start({ plugins: [variantPlugin] });
  const pass = await tg.call("/probe/variant", { method: "POST", host: PASSTHROUGH, headers: KEY, body: { document: "x" } });
  assert.is(pass.status, 201);
  assert.equal(await pass.json(), { variant: "passthrough", route: "POST /probe/variant", body: { document: "x" } });
  const stored = await tg.call("/probe/variant", { method: "POST", host: STORED, headers: { ...KEY, "x-idempotency-key": "variant-key-0001" }, body: { intake: 1 } });
  assert.is(stored.status, 202);
  assert.equal(await stored.json(), { variant: "stored", route: "POST /probe/variant", body: { intake: 1 } });
  // The Stored declaration's own checks: its idempotency key and its body schema, not the other's.
  await expectProblem(await tg.call("/probe/variant", { method: "POST", host: STORED, headers: KEY, body: { intake: 1 } }), 400, "GW_IDEMPOTENCY_KEY_REQUIRED", "AFTER_CORRECTION");
  const wrong = await expectProblem(
    await tg.call("/probe/variant", { method: "POST", host: STORED, headers: { ...KEY, "x-idempotency-key": "variant-key-0002" }, body: { document: "x" } }),
    400,
    "GW_REQUEST_VALIDATION_FAILED",
    "AFTER_CORRECTION",
  );
  assert.equal(wrong.errors.map((e: { pointer: string }) => e.pointer).sort(), ["/document", "/intake"]);
  await expectProblem(await tg.call("/probe/variant", { method: "POST", host: PASSTHROUGH, headers: KEY, body: { intake: 1 } }), 400, "GW_REQUEST_VALIDATION_FAILED", "AFTER_CORRECTION");
  // Another method of the path without a Pass-through variant still answers the mode conflict.
  await expectProblem(await tg.call("/probe/variant", { host: PASSTHROUGH, headers: KEY }), 409, "GW_OPERATION_MODE_CONFLICT", "AFTER_CORRECTION");
  assert.is((await tg.call("/probe/variant", { host: STORED, headers: KEY })).status, 200);
  await tg.close();
});

test("mode variants: the checks before the mode stage still run first (auth, 405 with the path's Allow)", async () => {
  const tg = await start({ plugins: [variantPlugin] });
  await expectProblem(await tg.call("/probe/variant", { method: "POST", host: STORED, body: { intake: 1 } }), 401, "GW_AUTH_API_KEY_REQUIRED", "AFTER_CORRECTION");
  const res = await tg.call("/probe/variant", { method: "DELETE", host: STORED, headers: KEY });
  await expectProblem(res, 405, "GW_METHOD_NOT_ALLOWED", "AFTER_CORRECTION");
  assert.is(res.headers.get("allow"), "GET, POST");
  await tg.close();
});

test.run();
