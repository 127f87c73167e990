/**
 * Catalog coverage over real HTTP, the pipeline: a trusted edge's failed verification and an
 * unexpected handler failure (spec §7.4, §7.5), read off a listening gateway's socket. The probe
 * plugin's /probe/boom route throws; the answer is the gateway's own 500, with nothing internal in it.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectProblem, until } from "../support/assertions.ts";
import { DEMO_KEY, TRUSTED_EDGE, startTestGateway } from "../support/gateway.ts";
import { callOverHttp } from "../support/over-http.ts";
import { probePlugin, slowGate } from "../support/probe-plugin.ts";

test("over HTTP: a missing edge secret → 403 GW_EDGE_VERIFICATION_FAILED; an unexpected failure → 500 GW_INTERNAL_ERROR", async () => {
  const tg = await startTestGateway({ plugins: [probePlugin], patch: { edge: TRUSTED_EDGE } });
  try {
    await callOverHttp(tg);
    await expectProblem(await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY, "x-edge-client-ip": "10.1.2.3" } }), 403, "GW_EDGE_VERIFICATION_FAILED", "DO_NOT_RETRY");
    const edgeOk = { "x-edge-secret": TRUSTED_EDGE.secret, "x-edge-client-ip": "10.1.2.3", "x-api-key": DEMO_KEY };
    const body = await expectProblem(await tg.call("/probe/boom", { headers: edgeOk }), 500, "GW_INTERNAL_ERROR", "CONTACT_SUPPORT");
    assert.not.match(JSON.stringify(body), /hunter2|s3cret/, "nothing internal answered");
  } finally {
    await tg.close();
  }
});

test("over HTTP: every slot held → 503 GW_GATEWAY_CAPACITY_EXCEEDED", async () => {
  const tg = await startTestGateway({ plugins: [probePlugin], patch: { limits: { capacity: { total: 1, perDomain: 1 } } } });
  try {
    await callOverHttp(tg);
    const parked = tg.call("/probe/slow", { headers: { "x-api-key": DEMO_KEY } });
    await until(() => slowGate.waiting.length === 1);
    await expectProblem(await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } }), 503, "GW_GATEWAY_CAPACITY_EXCEEDED", "BACKOFF");
    slowGate.releaseAll();
    assert.is((await parked).status, 200);
  } finally {
    await tg.close();
  }
});

test.run();
