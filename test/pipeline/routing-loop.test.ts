/**
 * Stage 4, routing loop: a request carrying a non-zero X-Service-Gateway-Hop marker has come back
 * to the gateway and is refused at once with 508 (CONTACT_SUPPORT); "0" or no marker passes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { expectProblem } from "../support/assertions.ts";
import { BEARER_DEMO, DEMO_KEY_HEADERS as KEY, gatewayTracker } from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("a non-zero hop marker gives 508 GW_ROUTING_LOOP_DETECTED (CONTACT_SUPPORT) and the handler never runs", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const hop of ["1", "2", " 1 ", "17", "garbage"]) {
    const res = await tg.call("/probe/counted", { headers: { ...KEY, "x-service-gateway-hop": hop } });
    const body = await expectProblem(res, 508, "GW_ROUTING_LOOP_DETECTED", "CONTACT_SUPPORT");
    assert.is(body.retry.sameIdempotencyKey, false, hop);
  }
  // A mutation is refused the same way, before its body or key are looked at.
  const post = await tg.call("/probe/counted", { method: "POST", headers: { ...KEY, "X-Service-Gateway-Hop": "1" }, body: {} });
  await expectProblem(post, 508, "GW_ROUTING_LOOP_DETECTED", "CONTACT_SUPPORT");
  assert.is(probeHits.count, 0, "the handler never ran");
  await tg.close();
});

test("the loop is refused before authentication and is signalled to operators", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const res = await tg.call("/probe/echo", { headers: { "x-service-gateway-hop": "1" } });
  const body = await expectProblem(res, 508, "GW_ROUTING_LOOP_DETECTED", "CONTACT_SUPPORT");
  const signal = tg.logs.find((l) => l.event === "gateway_routing_loop_detected");
  assert.ok(signal, "an immediate operator signal is logged (spec §6)");
  assert.is(signal!.requestId, body.requestId);
  const done = tg.logs.find((l) => l.event === "gateway_request_completed" && l.requestId === body.requestId);
  assert.is(done?.status, 508);
  assert.is(done?.code, "GW_ROUTING_LOOP_DETECTED");
  await tg.close();
});

test("hop marker 0 (or none) passes", async () => {
  const tg = await start({ plugins: [probePlugin] });
  probeHits.reset();
  for (const headers of [{ "x-service-gateway-hop": "0" }, { "x-service-gateway-hop": " 0 " }, {}] as Array<Record<string, string>>) {
    const res = await tg.call("/probe/counted", { headers: { ...KEY, ...headers } });
    assert.is(res.status, 200, JSON.stringify(headers));
  }
  assert.is(probeHits.count, 3);
  assert.not.ok(tg.logs.some((l) => l.event === "gateway_routing_loop_detected"));
  await tg.close();
});

test("no route can skip the check: health and collections routes refuse a looped request too", async () => {
  const tg = await start({ plugins: [...plugins, probePlugin] });
  await expectProblem(await tg.call("/health", { headers: { "x-service-gateway-hop": "1" } }), 508, "GW_ROUTING_LOOP_DETECTED", "CONTACT_SUPPORT");
  const col = await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}`, "x-service-gateway-hop": "1" } });
  assert.is(col.status, 508);
  const body = await col.json();
  assert.is(body.statusCode, 508, "collections answer in their envelope");
  assert.is(col.headers.get("x-request-id"), body.requestId);
  await tg.close();
});

test.run();
