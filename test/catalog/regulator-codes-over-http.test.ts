/**
 * Catalog coverage over real HTTP, Pass-through routes beyond sign: transmission, the direct
 * regulator routes and the regulator's failures (spec §7.5, §7.8, §7.10), read off a listening
 * gateway's socket. test/plugins/signing and test/plugins/transmission cover the behaviour in depth.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { DEMO_KEY, PASSTHROUGH, startTestGateway } from "../support/gateway.ts";
import { callOverHttp, httpCall } from "../support/over-http.ts";
import { SUB, expectProblem, invoice, irnOf, startSigningHarness } from "../plugins/signing/signing-helpers.ts";

const h = await startSigningHarness();
await callOverHttp(h.tg);
test.after(() => h.close());
test.after.each(() => h.sim.faults.clear());
const currencies = () => h.call("GET", "/api/v1/invoice/resources/currencies");

async function signed(no: string): Promise<string> {
  const res = await h.sign(invoice(no), { key: `http-t-sign-${no}-0001` });
  assert.is(res.status, 201, await res.clone().text());
  return irnOf(no);
}

test("over HTTP: transmission refusals and outcomes", async () => {
  const irn = await signed("HTR1");
  await expectProblem(await h.transmit(irn, { a: 1 }), 400, "GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY");
  assert.is((await h.transmit(irn)).status, 201);
  await expectProblem(await h.transmit(irn), 409, "GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED");
  const unsure = await signed("HTU1");
  h.sim.faults.set("transmit", { kind: "status", status: 503, times: 1 } as never);
  await expectProblem(await h.transmit(unsure), 502, "GW_TRANSMIT_OUTCOME_UNCONFIRMED");
});

test("over HTTP: direct routes — unknown invoice, inbound operations", async () => {
  await expectProblem(await h.call("GET", `/api/v1/invoice/confirm/${irnOf("HNOPE1")}`, { sub: SUB }), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("GET", `/api/v1/invoice/inbound/${irnOf("HIN1")}/download`, { sub: SUB }), 503, "GW_INVOICE_OPERATION_UNAVAILABLE");
});

test("over HTTP: the regulator's failures — timeout, unusable answer, certainly not performed", async () => {
  h.sim.faults.set("resources", { kind: "timeout", times: 1 });
  await expectProblem(await currencies(), 504, "GW_UPSTREAM_TIMEOUT");
  h.sim.faults.clear();
  h.sim.faults.set("resources", { kind: "no_route", times: 5 });
  await expectProblem(await currencies(), 502, "GW_UPSTREAM_RESPONSE_INVALID");
  h.sim.faults.clear();
  h.sim.faults.set("sign", { kind: "reject_credentials", times: 1 });
  await expectProblem(await h.sign(invoice("HNS1"), { key: "http-ns1-0001" }), 502, "GW_UPSTREAM_UNAVAILABLE");
});

test("over HTTP: no regulator configured for the business's state → 503 GW_REGULATOR_UNAVAILABLE", async () => {
  const tg = await startTestGateway({ plugins, regulatorBaseUrls: { LIVE: h.sim.url } });
  try {
    const server = await tg.listen();
    const res = await httpCall(server.port, "/api/v1/invoice/resources/currencies", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
    await expectProblem(res, 503, "GW_REGULATOR_UNAVAILABLE");
  } finally {
    await tg.close();
  }
});

test.run();
