/**
 * Stage 3, protocol: content type (415), declared body size (413), and the body reader it owns
 * (streaming size limit, read deadline 408, completeness 400, JSON syntax), plus the caller's
 * X-Request-ID (validated, correlation only: the gateway's own id is authoritative).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REQUEST_ID_UUID, expectProblem, expectRawProblem, until } from "../support/assertions.ts";
import { DEMO_KEY_HEADERS as KEY, PASSTHROUGH, gatewayTracker, rawRequest } from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

const MUTATION = { ...KEY, "x-idempotency-key": "protocol-test-0001" };
const SIGN = { ...KEY, "x-idempotency-key": "protocol-sign-0001", "x-sub-business-id": "sub-1" };
const KIB64 = 64 * 1024;
const MIB = 1024 * 1024;

/** A JSON document of exactly `size` bytes: {"name":"xx","tags":["aaaa…"]}. */
function itemsBody(size: number): string {
  const shell = '{"name":"xx","tags":[""]}';
  return shell.replace('[""]', `["${"a".repeat(size - shell.length)}"]`);
}

/** A JSON document of exactly `size` bytes: {"data":"aaaa…"}. */
function signBody(size: number): string {
  const shell = '{"data":""}';
  return shell.replace('""', `"${"a".repeat(size - shell.length)}"`);
}

function head(lines: string[], path = "/probe/items/abc"): string[] {
  return [`POST ${path} HTTP/1.1`, `Host: ${PASSTHROUGH}`, ...lines];
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("a body that is not application/json gives 415 GW_REQUEST_MEDIA_TYPE_UNSUPPORTED, before authentication", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const type of ["text/plain", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
    const res = await tg.call("/probe/counted", { method: "POST", headers: { ...KEY, "content-type": type }, body: '{"a":1}' });
    await expectProblem(res, 415, "GW_REQUEST_MEDIA_TYPE_UNSUPPORTED", "AFTER_CORRECTION");
  }
  // A body without any content type is refused too.
  const none = await tg.gateway.fetch(
    new Request(`http://${PASSTHROUGH}/probe/counted`, { method: "POST", headers: { host: PASSTHROUGH, ...KEY }, body: new Uint8Array([123, 125]) }),
  );
  await expectProblem(none, 415, "GW_REQUEST_MEDIA_TYPE_UNSUPPORTED", "AFTER_CORRECTION");
  // No key: still 415 (the protocol stage runs before auth).
  await expectProblem(
    await tg.call("/probe/counted", { method: "POST", headers: { "content-type": "text/plain" }, body: "x" }),
    415,
    "GW_REQUEST_MEDIA_TYPE_UNSUPPORTED",
    "AFTER_CORRECTION",
  );
  assert.is(probeHits.count, 0, "the handler never ran");
  // Parameters and case do not matter.
  for (const type of ["application/json; charset=utf-8", "Application/JSON"]) {
    const res = await tg.call("/probe/counted", { method: "POST", headers: { ...KEY, "content-type": type }, body: "{}" });
    assert.is(res.status, 200, type);
  }
  await tg.close();
});

test("a declared Content-Length over the route limit gives 413 at once, before the body is read or the key checked", async () => {
  // If the declared size were not checked, these requests (whose body never comes) would wait for the read deadline.
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 5_000 } } });
  const server = await tg.listen();
  const started = Date.now();
  const res = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", `Content-Length: ${KIB64 + 1}`]),
    timeoutMs: 3_000,
  });
  const body = expectRawProblem(res, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  assert.match(body.detail, String(KIB64));
  assert.ok(Date.now() - started < 2_500, "answered without waiting for the body");
  // The large route refuses over 1 MiB the same way.
  const big = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", `Content-Length: ${MIB + 1}`, ...Object.entries(SIGN).map(([k, v]) => `${k}: ${v}`)], "/probe/sign"),
    timeoutMs: 3_000,
  });
  expectRawProblem(big, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  await tg.close();
});

test("bodies up to the limit are accepted: 64 KiB by default, 1 MiB on a bodyLimit: \"large\" route", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const atDefault = itemsBody(KIB64);
  assert.is(Buffer.byteLength(atDefault), KIB64);
  const ok = await tg.call("/probe/items/abc", { method: "POST", headers: { ...MUTATION, "content-type": "application/json", "content-length": String(KIB64) }, body: atDefault });
  assert.is(ok.status, 200, "exactly 64 KiB on a default route");
  const over = await tg.call("/probe/items/abc", { method: "POST", headers: { ...MUTATION, "content-type": "application/json" }, body: itemsBody(KIB64 + 1) });
  await expectProblem(over, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");

  const nearMiB = signBody(1_000_000);
  const large = await tg.call("/probe/sign", { method: "POST", headers: { ...SIGN, "content-type": "application/json" }, body: nearMiB });
  assert.is(large.status, 200, "1,000,000 bytes on the large route");
  assert.is((await large.json()).size, 1_000_000);
  const atMiB = await tg.call("/probe/sign", { method: "POST", headers: { ...SIGN, "content-type": "application/json", "content-length": String(MIB) }, body: signBody(MIB) });
  assert.is(atMiB.status, 200, "exactly 1 MiB on the large route");
  // Over 1 MiB without a declared length: the streaming limit refuses it.
  const overMiB = await tg.call("/probe/sign", { method: "POST", headers: { ...SIGN, "content-type": "application/json" }, body: signBody(MIB + 1) });
  await expectProblem(overMiB, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  // 1 MiB is the large limit only: the same body on a default route is refused.
  const nearMiBDefault = await tg.call("/probe/items/abc", { method: "POST", headers: { ...MUTATION, "content-type": "application/json" }, body: itemsBody(1_000_000) });
  await expectProblem(nearMiBDefault, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  await tg.close();
});

test("a chunked body (no Content-Length) is limited while it streams: 413 before it ends (real HTTP)", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 5_000 } } });
  const server = await tg.listen();
  const keyLines = Object.entries(MUTATION).map(([k, v]) => `${k}: ${v}`);
  // A small chunked body is read and served.
  const small = '{"name":"chunked"}';
  const okRes = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", "Transfer-Encoding: chunked", ...keyLines]),
    body: `${small.length.toString(16)}\r\n${small}\r\n0\r\n\r\n`,
  });
  assert.is(okRes.status, 200);
  assert.equal(JSON.parse(okRes.body).body, { name: "chunked" });
  // Over the limit, and the final chunk is never sent: the limit must trip while streaming.
  const chunk = itemsBody(KIB64 + 4_000);
  const started = Date.now();
  const res = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", "Transfer-Encoding: chunked", ...keyLines]),
    body: `${Buffer.byteLength(chunk).toString(16)}\r\n${chunk}\r\n`,
    timeoutMs: 3_000,
  });
  expectRawProblem(res, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  assert.ok(Date.now() - started < 2_500, "refused without waiting for the read deadline");
  await until(() => tg.gateway.runtime.inFlight().total === 0);
  await tg.close();
});

test("a body that stops arriving gives 408 GW_REQUEST_BODY_TIMEOUT after server.bodyReadTimeoutMs (SAME_IDEMPOTENCY_KEY)", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 300 } } });
  const server = await tg.listen();
  const started = Date.now();
  const res = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", "Content-Length: 100", ...Object.entries(MUTATION).map(([k, v]) => `${k}: ${v}`)]),
    body: '{"name":"x',
    end: false,
    timeoutMs: 4_000,
  });
  const elapsed = Date.now() - started;
  const body = expectRawProblem(res, 408, "GW_REQUEST_BODY_TIMEOUT", "SAME_IDEMPOTENCY_KEY");
  assert.is(body.retry.sameIdempotencyKey, true);
  assert.ok(elapsed >= 250 && elapsed < 3_000, `answered at the deadline (${elapsed} ms)`);
  assert.is(tg.gateway.runtime.inFlight().total, 0, "the capacity slot is released");
  const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
  assert.is(done?.code, "GW_REQUEST_BODY_TIMEOUT");
  await tg.close();
});

test("a body cut short by the client (Content-Length 100, 10 bytes, then FIN): slot released, INCOMPLETE recorded (real HTTP)", async () => {
  // The half-close makes Node's HTTP parser fail (incomplete message at EOF). The server's
  // 'clientError' handler (core/server.ts) answers the contract's problem+json instead of Node's
  // bare 400; inside, the body reader sees the aborted stream, the request completes with
  // GW_REQUEST_BODY_INCOMPLETE in the completion log and the capacity slot is released.
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 5_000 } } });
  const server = await tg.listen();
  const res = await rawRequest({
    port: server.port,
    head: head(["Content-Type: application/json", "Content-Length: 100", ...Object.entries(MUTATION).map(([k, v]) => `${k}: ${v}`)]),
    body: '{"name":"x',
    end: true,
    timeoutMs: 3_000,
  });
  assert.is(res.status, 400, "the client is told 400, never a success and never a hang");
  expectRawProblem(res, 400, "GW_REQUEST_BODY_INCOMPLETE", "AFTER_CORRECTION");
  await until(() => tg.logs.some((l) => l.event === "gateway_request_completed" && l.code === "GW_REQUEST_BODY_INCOMPLETE"));
  const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.code === "GW_REQUEST_BODY_INCOMPLETE")!;
  assert.is(done.status, 400);
  assert.is(done.route, "POST /probe/items/:itemId");
  assert.is(tg.gateway.runtime.inFlight().total, 0, "the capacity slot is released");
  // The server is fine afterwards.
  assert.is((await tg.call("/probe/echo", { headers: KEY })).status, 200);
  await tg.close();
});

test("an incomplete body the gateway can still answer gives 400 GW_REQUEST_BODY_INCOMPLETE (same key)", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const send = (stream: ReadableStream<Uint8Array>, extra: Record<string, string> = {}) =>
    tg.gateway.fetch(
      new Request(`http://${PASSTHROUGH}/probe/items/abc`, {
        method: "POST",
        headers: { host: PASSTHROUGH, ...MUTATION, "content-type": "application/json", ...extra },
        body: stream,
        duplex: "half",
      } as RequestInit),
    );
  // A stream that fails part-way (the connection broke).
  const broken = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"name":"x'));
      c.error(new Error("socket hang up"));
    },
  });
  const a = await expectProblem(await send(broken), 400, "GW_REQUEST_BODY_INCOMPLETE", "AFTER_CORRECTION");
  assert.is(a.retry.sameIdempotencyKey, true);
  // A stream that ends before its declared Content-Length.
  const short = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode('{"name":"x'));
      c.close();
    },
  });
  const b = await expectProblem(await send(short, { "content-length": "100" }), 400, "GW_REQUEST_BODY_INCOMPLETE", "AFTER_CORRECTION");
  assert.is(b.retry.sameIdempotencyKey, true);
  assert.is(tg.gateway.runtime.inFlight().total, 0);
  await tg.close();
});

test("a body that is not JSON gives 400 GW_REQUEST_INVALID_JSON without echoing it", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const text of ['{"name": "widget"', "name=widget", "{'name':'widget'}", '{"name":"widget"}}']) {
    const res = await tg.call("/probe/items/abc", { method: "POST", headers: { ...MUTATION, "content-type": "application/json" }, body: text });
    const body = await expectProblem(res, 400, "GW_REQUEST_INVALID_JSON", "AFTER_CORRECTION");
    assert.not.ok(JSON.stringify(body).includes("widget"), "the body is not echoed");
  }
  await tg.close();
});

test("a valid caller X-Request-ID is correlation only: logged as callerRequestId, the response carries the gateway's id", async () => {
  const tg = await start({ plugins: [probePlugin] });
  for (const caller of ["caller-123", "A", "a".repeat(128), "x1.y_z:w-9"]) {
    const res = await tg.call("/probe/echo", { headers: { ...KEY, "x-request-id": caller } });
    assert.is(res.status, 200, caller);
    const id = res.headers.get("x-request-id")!;
    assert.match(id, REQUEST_ID_UUID);
    assert.is.not(id, caller);
    const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === id);
    assert.is(done?.callerRequestId, caller);
  }
  // On an error too: requestId (body and header) is the gateway's own.
  const err = await tg.call("/probe/echo", { headers: { "x-request-id": "caller-err-1" } });
  const body = await expectProblem(err, 401, "GW_AUTH_API_KEY_REQUIRED", "AFTER_CORRECTION");
  assert.match(body.requestId, REQUEST_ID_UUID);
  const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
  assert.is(done?.callerRequestId, "caller-err-1");
  await tg.close();
});

test("an invalid X-Request-ID gives 400 GW_REQUEST_HEADER_INVALID naming the header, without echoing it", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const bad of ["bad id!", "b".repeat(129), "-leading-dash", "", "x/y", "ünï"]) {
    const res = await tg.call("/probe/counted", { headers: { ...KEY, "x-request-id": bad } });
    const body = await expectProblem(res, 400, "GW_REQUEST_HEADER_INVALID", "AFTER_CORRECTION");
    assert.is(body.errors?.length, 1, JSON.stringify(bad));
    assert.is(body.errors[0].location, "header");
    assert.is(body.errors[0].field, "X-Request-ID");
    assert.match(body.requestId, REQUEST_ID_UUID);
    if (bad.length > 3) assert.not.ok(JSON.stringify(body).includes(bad), "the rejected value is not echoed");
  }
  assert.is(probeHits.count, 0, "the handler never ran");
  await tg.close();
});

test.run();
