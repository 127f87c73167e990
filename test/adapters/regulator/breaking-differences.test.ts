/**
 * The three differences of issue 17 that break a real deployment on day one, each against the real
 * API's own answers (recorded or reconstructed from mukhtar-github/taxpoynt-platform docs/):
 *   1. the error envelope (no stable error id; a rejected deployment key is HTTP 400 "unable to
 *      validate api key"; an unknown path is an un-enveloped 404);
 *   2. the entity shape (no service_id);
 *   3. IRN templates with embedded example text.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { checkIrn } from "../../../plugins/signing/schemas.ts";
import { isGatewayError } from "../../../core/errors/gateway-error.ts";
import { demoInvoice } from "./simulator/simulator-helpers.ts";
import { CTX, makeClient, type ClientHarness } from "./regulator-helpers.ts";
import { recordedAnswer, startReplayServer, type ReplayServer } from "./recorded-helpers.ts";

const test = suite("issue 17: the three breaking differences");
let server: ReplayServer;
let h: ClientHarness;

test.before(async () => {
  server = await startReplayServer();
});
test.after(async () => {
  await server.close();
});
test.before.each(() => {
  h = makeClient({ TEST: server.url });
});
test.after.each(async () => {
  await h.close();
});

async function thrown(p: Promise<unknown>): Promise<{ code?: string; status?: number; dependencyFailure?: boolean }> {
  try {
    const value = await p;
    return { code: `resolved ${JSON.stringify(value)}` };
  } catch (e) {
    return e as { code: string; status: number; dependencyFailure: boolean };
  }
}

test("1a. error envelope: the recorded 400 \"unable to validate api key\" on sign is a dependency failure (counted, immediate signal), never a sign rejection", async () => {
  server.serve(recordedAnswer("sign-api-key"));
  const e = await thrown(h.client.sign("TEST", demoInvoice("BD1"), CTX));
  assert.equal([e.code, e.status, e.dependencyFailure], ["GW_UPSTREAM_UNAVAILABLE", 502, true]);
  assert.is(h.policies.get("regulator:TEST")!.snapshot().totalFailures, 1, "counted for the circuit");
  const [signal] = h.events("regulator_credentials_rejected");
  assert.is(signal?.alert, "immediate");
});

test("1b. error envelope: the same recording on the taxpayer login is not blamed on the taxpayer (GW_REG_VERIFICATION_UNAVAILABLE, not GW_REG_CREDENTIALS_REJECTED)", async () => {
  server.serve(recordedAnswer("authenticate-api-key"));
  const e = await thrown(h.client.authenticate("TEST", { email: "taxpayer@demo.ng", password: "demo-password-1" }, CTX));
  assert.equal([e.code, e.status, e.dependencyFailure], ["GW_REG_VERIFICATION_UNAVAILABLE", 503, true]);
  assert.is(h.events("regulator_credentials_rejected").length, 1);
});

test("1c. error envelope: the router's recorded un-enveloped 404 on transmit throws GW_UPSTREAM_RESPONSE_INVALID (not performed), never an ambiguous outcome", async () => {
  server.serve(recordedAnswer("no-route-post-payment"));
  const e = await thrown(h.client.transmit("TEST", "INV001-94ND90NR-20240611", CTX));
  assert.equal([e.code, e.status, e.dependencyFailure], ["GW_UPSTREAM_RESPONSE_INVALID", 502, true]);
});

test("2. entity shape: the real entity (no service_id) loads; the service ID comes from the IRN template", async () => {
  server.serve(recordedAnswer("get-entity-sandbox-business"));
  const entity = await h.client.getEntity("TEST", "6cd4ee57-5985-4eb6-8313-7a1b64c5beda", CTX);
  assert.equal(entity.businesses[0], {
    id: "800a1faf-4b81-4b6e-bbe0-cfeb6ca31d4a",
    name: "Quam inventore est",
    tin: "29445920-4211",
    irnTemplate: "{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}",
    serviceId: "59854B81",
    active: true,
  });
});

test("3. IRN template: an IRN built from `{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}` passes the gateway's IRN check", () => {
  const template = "{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}";
  let outcome: unknown;
  try {
    outcome = checkIrn("INV001-59854B81-20250629", template, "body");
  } catch (e) {
    outcome = isGatewayError(e) ? e.code : e;
  }
  assert.equal(outcome, { irn: "INV001-59854B81-20250629", invoiceNumber: "INV001", serviceId: "59854B81" });
});

test.run();
