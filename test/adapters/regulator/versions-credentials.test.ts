/**
 * Regulator adapter versioning (spec §9): the contract version is declared per state and an
 * unsupported one stops startup with a clear problem; staged deployment credentials (current and
 * next) against a simulator that accepts only the next pair (the regulator already rotated): a call
 * refused for its credentials — certainly not performed — is sent again with the next pair, and the
 * pair that worked is kept; a mutation whose first dispatch is uncertain is NEVER sent again with the
 * other pair.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig, ConfigError } from "../../../config/load.ts";
import { REGULATOR_ADAPTER_VERSIONS } from "../../../adapters/regulator/port.ts";
import { DEMO_RAW } from "../../support/gateway.ts";
import { DEMO, demoInvoice, startDemoSimulator } from "./simulator/simulator-helpers.ts";
import { tempDir } from "../../support/temp.ts";
import { CTX, makeClient } from "./regulator-helpers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

const CURRENT = { apiKey: "current_api_key", apiSecret: "current_api_secret" };
const NEXT = { apiKey: "next_api_key", apiSecret: "next_api_secret" };
const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;

test("the adapter declares v1; an unsupported configured version stops startup with a clear problem (config and adapter)", () => {
  assert.equal([...REGULATOR_ADAPTER_VERSIONS], ["v1"]);
  const ok = loadConfig({ raw: { ...structuredClone(DEMO_RAW), regulator: { contractVersions: { TEST: "v1" } } }, env: {} });
  assert.equal({ ...ok.regulator.contractVersions }, { TEST: "v1", LIVE: "v1" });
  try {
    loadConfig({ raw: { ...structuredClone(DEMO_RAW), regulator: { contractVersions: { LIVE: "v2" } } }, env: {} });
    assert.unreachable("v2 must be refused");
  } catch (e) {
    assert.instance(e, ConfigError);
    const problem = (e as ConfigError).problems.find((p) => p.startsWith("regulator.contractVersions.LIVE"));
    assert.ok(problem, (e as ConfigError).message);
    assert.match(problem!, /"v2" is not a regulator contract version this release supports \(v1\)/);
  }
  assert.throws(() => makeClient({ TEST: "http://127.0.0.1:9" }, { contractVersions: { TEST: "v9" } }), /contract version "v9" of TEST is not supported/);
});

test("npm start and npm run worker refuse to start on an unsupported contract version: exit 1, the problem on stderr, nothing listens", async () => {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.regulator = { ...raw.regulator, contractVersions: { TEST: "v1", LIVE: "v7" } };
  const path = join(tempDir("contract-version"), "config.json");
  writeFileSync(path, JSON.stringify(raw));
  for (const entry of ["boot/main.ts", "boot/worker.ts"]) {
    const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, ["--import", "tsx", entry, "--config", path], {
        cwd: ROOT,
        env: { ...process.env, NO_COLOR: "1", PORT: "", GATEHOUSE_CONFIG: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("close", (c) => {
        clearTimeout(timer);
        resolve({ code: c, stdout: out, stderr: err });
      });
    });
    assert.is(code, 1, `${entry}: ${stderr}`);
    assert.match(stderr, /regulator\.contractVersions\.LIVE: "v7" is not a regulator contract version this release supports \(v1\); the integration cannot start/, entry);
    assert.not.match(stderr, /^\s+at /m, "no stack trace");
    assert.not.ok(/listening|running/i.test(stdout), `${entry} started nothing`);
  }
});

test("staged credentials: the regulator refuses the current pair → the same call with the next pair succeeds once; the next pair is kept", async () => {
  const sim = await startDemoSimulator({ credentials: NEXT });
  const h = makeClient({ TEST: sim.url }, { ...CURRENT, next: NEXT });
  const out = await h.client.sign("TEST", demoInvoice("VC1"), CTX);
  assert.is(out.kind, "signed");
  assert.is(sim.state.calls("sign"), 2, "refused with current, performed with next");
  assert.equal(sim.state.signedIrns(), [irnOf("VC1")]);
  assert.is(h.events("regulator_credentials_switched").length, 1);
  assert.is(h.events("regulator_credentials_rejected").length, 0, "not an alert: a staged pair was accepted");
  const calls = h.events("gateway_dependency_call");
  assert.equal(
    calls.map((c) => [c.stagedPair, c.outcome]),
    [
      ["current", "failure"],
      ["next", "success"],
    ],
  );
  assert.is(calls[0]!.adapterVersion, "v1");
  // From now on the next pair is used first: one call per operation.
  assert.is((await h.client.sign("TEST", demoInvoice("VC2"), CTX)).kind, "signed");
  assert.is(sim.state.calls("sign"), 3);
  assert.equal(h.client.describe().map((d) => [d.state, d.contractVersion, d.interfaceVersion, d.credentials, d.staged]), [["TEST", "v1", "1.1.6", "next", true]]);
  assert.not.ok(JSON.stringify(h.logs).includes(NEXT.apiSecret), "credentials never logged");
  await h.close();
  await sim.close();
});

test("an uncertain first dispatch (timeout) is never sent again with the other pair: ambiguous, one sign call", async () => {
  const sim = await startDemoSimulator({ credentials: CURRENT });
  const h = makeClient({ TEST: sim.url }, { ...CURRENT, next: NEXT, timeoutMs: 1_000 });
  sim.faults.set("sign", { kind: "timeout", times: 1 });
  const out = await h.client.sign("TEST", demoInvoice("VC3"), CTX);
  assert.is(out.kind, "ambiguous");
  assert.is(sim.state.calls("sign"), 1, "never retried with the next pair");
  sim.faults.set("transmit", { kind: "reset", times: 1 });
  await h.client.sign("TEST", demoInvoice("VC4"), CTX);
  const t = await h.client.transmit("TEST", irnOf("VC4"), CTX);
  assert.is(t.kind, "ambiguous");
  assert.is(sim.state.calls("transmit"), 1, "a lost connection is not retried either");
  assert.is(h.events("regulator_credentials_switched").length, 0);
  await h.close();
  await sim.close();
});

test("both pairs refused: one retry, then the immediate signal regulator_credentials_rejected (raised once per call)", async () => {
  const sim = await startDemoSimulator({ credentials: { apiKey: "rotated_again", apiSecret: "rotated_again_secret" } });
  const raised: unknown[] = [];
  const h = makeClient({ TEST: sim.url }, { ...CURRENT, next: NEXT, alerts: { raise: (s: unknown) => raised.push(s) } as never });
  await h.client.sign("TEST", demoInvoice("VC5"), CTX).catch(() => null);
  assert.is(sim.state.calls("sign"), 2);
  assert.is(h.events("regulator_credentials_rejected").length, 1);
  assert.equal(raised, [{ signal: "regulator_credentials_rejected", dependency: "regulator:TEST", operation: "sign", failureClass: "credentials_rejected", requestId: CTX.requestId }]);
  await h.close();
  await sim.close();
});

test("confirm by IRN: found when the regulator holds it, not_found on its own 404, unknown otherwise", async () => {
  const sim = await startDemoSimulator({ credentials: CURRENT });
  const h = makeClient({ TEST: sim.url }, { ...CURRENT });
  await h.client.sign("TEST", demoInvoice("VC6"), CTX);
  assert.equal(await h.client.confirm("TEST", irnOf("VC6"), CTX), { kind: "found" });
  assert.equal(await h.client.confirm("TEST", irnOf("VC7"), CTX), { kind: "not_found" });
  sim.faults.set("confirm", { kind: "status", status: 503, times: 1 });
  assert.equal(await h.client.confirm("TEST", irnOf("VC6"), CTX), { kind: "unknown", failureClass: "server_error" });
  await h.close();
  await sim.close();
});

test.run();
