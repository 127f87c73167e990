import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isFaultSpecError } from "../../../../adapters/regulator/simulator/faults.ts";
import type { Fault } from "../../../../adapters/regulator/simulator/faults.ts";
import type { RegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
import { call, DEMO, demoInvoice, startDemoSimulator } from "./simulator-helpers.ts";

const test = suite("simulator: fault injection");
let sim: RegulatorSimulator;

test.before(async () => {
  sim = await startDemoSimulator();
});
test.after(async () => {
  await sim.close();
});
test.before.each(() => {
  sim.reset();
});

const entity = (opts: { signal?: AbortSignal } = {}) => call(sim, "GET", `/api/v1/entity/${DEMO.entityId}`, opts);
const sign = (invoiceNo: string, opts: { signal?: AbortSignal } = {}) =>
  call(sim, "POST", "/api/v1/invoice/sign", { body: demoInvoice(invoiceNo), ...opts });
const irnOf = (invoiceNo: string) => `${invoiceNo}-${DEMO.serviceId}-20240611`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  assert.unreachable("expected the call to fail");
  throw new Error("unreachable");
}

test("latency: the answer is normal but late", async () => {
  sim.faults.set("entity", { kind: "latency", ms: 150 });
  const started = Date.now();
  const r = await entity();
  assert.ok(Date.now() - started >= 140, `took ${Date.now() - started} ms`);
  assert.is(r.status, 200);
  assert.is(r.json.data.id, DEMO.entityId);
});

test("latency on sign reads the body after the delay and signs", async () => {
  sim.faults.set("sign", { kind: "latency", ms: 50 });
  const r = await sign("LAT1");
  assert.is(r.status, 201);
  assert.ok(sim.state.isSigned(irnOf("LAT1")));
});

test("latency (without afterProcessing): a client that gives up first leaves nothing signed", async () => {
  sim.faults.set("sign", { kind: "latency", ms: 300 });
  const e = await rejection(sign("LAT2", { signal: AbortSignal.timeout(100) }));
  assert.is(e.name, "TimeoutError");
  await new Promise((r) => setTimeout(r, 350));
  assert.not.ok(sim.state.isSigned(irnOf("LAT2")));
});

test("timeout: no answer until the client gives up (AbortSignal.timeout fires)", async () => {
  sim.faults.set("sign", { kind: "timeout" });
  const started = Date.now();
  const e = await rejection(sign("TMO1", { signal: AbortSignal.timeout(200) }));
  assert.is(e.name, "TimeoutError");
  assert.ok(Date.now() - started < 2000);
  assert.not.ok(sim.state.isSigned(irnOf("TMO1")), "a timeout without afterProcessing does not sign");
  assert.is(sim.state.calls("sign"), 1);
});

test("status: 500 / 503 in the real error envelope (fresh UUID id, route's handler, optional Retry-After)", async () => {
  sim.faults.set("entity", { kind: "status", status: 500 });
  const r500 = await entity();
  assert.is(r500.status, 500);
  assert.equal(Object.keys(r500.json), ["code", "data", "message", "error"]);
  assert.is(r500.json.code, 500);
  assert.is(r500.json.data, null);
  assert.is(r500.json.message, "error has occurred");
  assert.match(r500.json.error.id, UUID);
  assert.is(r500.json.error.handler, "entity_actions");
  assert.is(r500.json.error.public_message, "internal server error");
  sim.faults.set("entity", { kind: "status", status: 503, message: "down", handler: "gateway", retryAfter: 5 });
  const r503 = await entity();
  assert.is(r503.status, 503);
  assert.is(r503.json.error.public_message, "down");
  assert.is(r503.json.error.handler, "gateway");
  assert.is(r503.headers.get("retry-after"), "5");
});

test("rate_limit: 429 with Retry-After", async () => {
  sim.faults.set("sign", { kind: "rate_limit", retryAfter: 7 });
  const r = await sign("RL1");
  assert.is(r.status, 429);
  assert.is(r.headers.get("retry-after"), "7");
  assert.is(r.json.code, 429);
  assert.match(r.json.error.id, UUID);
  sim.faults.set("sign", { kind: "rate_limit" });
  assert.is((await sign("RL1")).headers.get("retry-after"), "1");
  assert.not.ok(sim.state.isSigned(irnOf("RL1")));
});

test("reset: the connection is reset and fetch throws", async () => {
  sim.faults.set("entity", { kind: "reset" });
  const e = await rejection(entity());
  assert.instance(e, TypeError);
  assert.is(sim.state.calls("entity"), 1, "not retried by the client");
  sim.faults.clear("entity");
  assert.is((await entity()).status, 200, "the simulator serves again after a reset");
});

test("malformed: 2xx with a non-JSON body", async () => {
  sim.faults.set("sign", { kind: "malformed" });
  const r = await sign("MAL1");
  assert.is(r.status, 201);
  assert.is(r.json, undefined);
  assert.ok(r.text.length > 0);
  assert.throws(() => JSON.parse(r.text));
  sim.faults.set("entity", { kind: "malformed", body: "<html>oops</html>" });
  const e = await entity();
  assert.is(e.status, 200);
  assert.is(e.text, "<html>oops</html>");
});

test("empty: 2xx with an empty body", async () => {
  sim.faults.set("sign", { kind: "empty" });
  const r = await sign("EMP1");
  assert.is(r.status, 201);
  assert.is(r.text, "");
  assert.is(r.headers.get("content-length"), "0");
});

test("renamed: a success envelope with renamed fields", async () => {
  sim.faults.set("sign", { kind: "renamed" });
  const r = await sign("REN1");
  assert.is(r.status, 201);
  assert.equal(r.json, { status: 201, result: { ok: true } });
  assert.not.ok(sim.state.isSigned(irnOf("REN1")));
});

test("ok_false: 2xx { code: 201, data: { ok: false } }", async () => {
  sim.faults.set("sign", { kind: "ok_false" });
  const r = await sign("OKF1");
  assert.is(r.status, 201);
  assert.equal(r.json, { code: 201, data: { ok: false } });
});

test("reject_credentials: the recorded 400 \"unable to validate api key\" even with the right deployment credentials", async () => {
  sim.faults.set("authenticate", { kind: "reject_credentials" });
  const r = await call(sim, "POST", "/api/v1/utilities/authenticate", { body: { email: DEMO.email, password: DEMO.password } });
  assert.is(r.status, 400);
  assert.is(r.json.error.public_message, "unable to validate api key");
  assert.is(r.json.error.handler, "handler");
});

test("no_route: the router's recorded un-enveloped 404 on a route the simulator serves", async () => {
  sim.faults.set("sign", { kind: "no_route", times: 1 });
  const r = await sign("NR1");
  assert.is(r.status, 404);
  assert.equal(r.json, { code: 404, data: null, message: "no route found for this path. kindly check your request and try again" });
  assert.not.ok(sim.state.isSigned(irnOf("NR1")));
});

test("custom: any status, body and headers", async () => {
  sim.faults.set("entity", { kind: "custom", status: 200, body: { code: 200, data: { id: DEMO.entityId, businesses: "none" } }, headers: { "x-sim": "1" } });
  const r = await entity();
  assert.is(r.status, 200);
  assert.is(r.json.data.businesses, "none");
  assert.is(r.headers.get("x-sim"), "1");
});

test("times: n faults the next n calls only, then the route is normal again", async () => {
  sim.faults.set("entity", { kind: "status", status: 503, times: 2 });
  assert.is((await entity()).status, 503);
  assert.equal(sim.faults.list(), [{ route: "entity", fault: { kind: "status", status: 503, times: 2 }, remaining: 1 }]);
  assert.is((await entity()).status, 503);
  assert.equal(sim.faults.list(), []);
  assert.is((await entity()).status, 200);
  assert.is(sim.state.calls("entity"), 3);
});

test("without times a fault stays until cleared", async () => {
  sim.faults.set("entity", { kind: "status", status: 502 });
  for (let i = 0; i < 3; i++) assert.is((await entity()).status, 502);
  sim.faults.clear("entity");
  assert.is((await entity()).status, 200);
});

test("afterProcessing on sign: the IRN is signed, then the connection is reset", async () => {
  sim.faults.set("sign", { kind: "reset", afterProcessing: true, times: 1 });
  const e = await rejection(sign("AP1"));
  assert.instance(e, TypeError);
  assert.ok(sim.state.isSigned(irnOf("AP1")), "the regulator signed but the answer was lost");
  const again = await sign("AP1");
  assert.is(again.status, 400);
  assert.is(again.json.error.details, "an invoice with this irn already exists");
});

test("afterProcessing on sign: signed, then no answer (timeout)", async () => {
  sim.faults.set("sign", { kind: "timeout", afterProcessing: true });
  const e = await rejection(sign("AP2", { signal: AbortSignal.timeout(200) }));
  assert.is(e.name, "TimeoutError");
  assert.ok(sim.state.isSigned(irnOf("AP2")));
});

test("afterProcessing on transmit: transmitted, then 500 / renamed", async () => {
  await sign("AP3");
  sim.faults.set("transmit", { kind: "status", status: 500, afterProcessing: true, times: 1 });
  const r = await call(sim, "POST", `/api/v1/invoice/transmit/${irnOf("AP3")}`, { body: {} });
  assert.is(r.status, 500);
  assert.ok(sim.state.isTransmitted(irnOf("AP3")));
  await sign("AP4");
  sim.faults.set("transmit", { kind: "renamed", afterProcessing: true });
  const renamed = await call(sim, "POST", `/api/v1/invoice/transmit/${irnOf("AP4")}`, { body: {} });
  assert.equal(renamed.json, { status: 201, result: { ok: true } });
  assert.ok(sim.state.isTransmitted(irnOf("AP4")));
});

test("afterProcessing + latency: processed at once, answered late", async () => {
  sim.faults.set("sign", { kind: "latency", ms: 3_000, afterProcessing: true });
  const pending = sign("AP5");
  let answered = false;
  void pending.then(() => (answered = true));
  for (const end = Date.now() + 2_500; !sim.state.isSigned(irnOf("AP5")) && Date.now() < end; ) await new Promise((r) => setTimeout(r, 10));
  assert.ok(sim.state.isSigned(irnOf("AP5")), "signed");
  assert.not.ok(answered, "signed before the answer left");
  assert.is((await pending).status, 201);
});

test("afterProcessing + renamed on a read carries the real data", async () => {
  sim.faults.set("entity", { kind: "renamed", afterProcessing: true });
  const r = await entity();
  assert.is(r.json.status, 200);
  assert.is(r.json.result.id, DEMO.entityId);
});

test("\"*\" faults every route; a route's own fault wins", async () => {
  sim.faults.set("*", { kind: "status", status: 503 });
  sim.faults.set("health", { kind: "ok_false" });
  assert.is((await entity()).status, 503);
  assert.is((await call(sim, "GET", "/api/v1/invoice/resources/currencies")).status, 503);
  assert.equal((await call(sim, "GET", "/api")).json, { code: 200, data: { ok: false } });
  sim.faults.clear();
  assert.is((await entity()).status, 200);
});

test("faults.set rejects an invalid fault with the list of problems", () => {
  try {
    sim.faults.set("sign", { kind: "latency", ms: -1, colour: "red" } as unknown as Fault);
    assert.unreachable();
  } catch (e) {
    assert.ok(isFaultSpecError(e));
    assert.ok(e.problems.length >= 2, e.problems.join("; "));
  }
  try {
    sim.faults.set("nope" as "sign", { kind: "timeout" });
    assert.unreachable();
  } catch (e) {
    assert.ok(isFaultSpecError(e));
  }
});

test("control API: POST / GET / DELETE /__sim/faults without credentials", async () => {
  const post = await call(sim, "POST", "/__sim/faults", { noAuth: true, body: { route: "sign", kind: "status", status: 503, times: 1 } });
  assert.is(post.status, 201);
  assert.equal(post.json, { ok: true, route: "sign", fault: { kind: "status", status: 503, times: 1 } });
  const list = await call(sim, "GET", "/__sim/faults", { noAuth: true });
  assert.equal(list.json.faults, [{ route: "sign", fault: { kind: "status", status: 503, times: 1 }, remaining: 1 }]);
  assert.is((await sign("CTL1")).status, 503);
  assert.is((await sign("CTL1")).status, 201);

  await call(sim, "POST", "/__sim/faults", { noAuth: true, body: { route: "entity", kind: "reset" } });
  await call(sim, "POST", "/__sim/faults", { noAuth: true, body: { route: "health", kind: "empty" } });
  const delOne = await call(sim, "DELETE", "/__sim/faults/entity", { noAuth: true });
  assert.is(delOne.status, 200);
  assert.equal(delOne.json.faults.map((f: any) => f.route), ["health"]);
  assert.is((await entity()).status, 200);
  const delAll = await call(sim, "DELETE", "/__sim/faults", { noAuth: true });
  assert.equal(delAll.json, { ok: true, faults: [] });

  const invalid = await call(sim, "POST", "/__sim/faults", { noAuth: true, body: { route: "sign", kind: "explode" } });
  assert.is(invalid.status, 400);
  assert.is(invalid.json.error, "invalid_fault");
  assert.ok(invalid.json.problems.length > 0);
  const notJson = await call(sim, "POST", "/__sim/faults", { noAuth: true, rawBody: "{" });
  assert.is(notJson.status, 400);
  assert.is((await call(sim, "DELETE", "/__sim/faults/nope", { noAuth: true })).status, 404);
  // Control calls are not regulator calls.
  assert.is(sim.state.calls("sign"), 2);
});

test("control API: GET /__sim/state and POST /__sim/reset", async () => {
  await sign("ST1");
  const st = await call(sim, "GET", "/__sim/state", { noAuth: true });
  assert.equal(st.json.signed, [irnOf("ST1")]);
  assert.equal(st.json.transmitted, []);
  assert.is(st.json.calls.sign, 1);
  assert.is(st.json.totalCalls, 1);
  const reset = await call(sim, "POST", "/__sim/reset", { noAuth: true });
  assert.is(reset.status, 200);
  assert.equal(sim.state.signedIrns(), []);
});

test("controlApi: false → /__sim/* is an unknown path", async () => {
  const closed = await startDemoSimulator({ controlApi: false });
  try {
    const r = await call(closed, "POST", "/__sim/faults", { noAuth: true, body: { route: "sign", kind: "timeout" } });
    assert.is(r.status, 404);
    assert.not.ok("error" in r.json, "the router's un-enveloped 404");
    assert.equal(closed.faults.list(), []);
  } finally {
    await closed.close();
  }
});

test("close() returns promptly while a timeout answer is held, and the waiting client fails", async () => {
  const other = await startDemoSimulator();
  other.faults.set("sign", { kind: "timeout" });
  const pending = call(other, "POST", "/api/v1/invoice/sign", { body: demoInvoice("CL1") }).then(
    () => "answered",
    (e: Error) => e.name,
  );
  await new Promise((r) => setTimeout(r, 100));
  const started = Date.now();
  await other.close();
  assert.ok(Date.now() - started < 1000, `close took ${Date.now() - started} ms`);
  assert.is(await pending, "TypeError");
  await other.close(); // idempotent
});

test.run();
