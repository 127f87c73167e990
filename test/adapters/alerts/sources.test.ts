/**
 * Every alert from its real source, end to end: a gateway (regulator simulator over HTTP, the real
 * ledger behind a fault switch, a store and a coordination store that fail on purpose) with a chat
 * webhook pointing at a local receiver. Requests full of secrets and taxpayer data (API and operator
 * keys, the taxpayer's portal login, TINs, names, addresses, IRNs, idempotency keys, the caller's
 * X-Request-ID, the deployment's regulator credentials, the webhook URL's token) drive every signal
 * of spec §6: sustained failure and its recovery, rejected deployment credentials, unconfirmed sign
 * and reversal, incomplete settlement, missing post-sign state, unconfirmed transmission, routing
 * loop, capacity and quota safety, circuit opened, unprovable recovery, overdue reconciliation, and
 * an exhausted delivery (dead letter). Each signal reaches the log channel and the chat webhook (or
 * the dead-letter stream) with only the allowlisted fields — and none of the secrets, anywhere.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import { createFaultInjectingLedger } from "../../../adapters/billing/faults.ts";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Alert, AlertChannel, CoordinationStore } from "../../../adapters/ports.ts";
import { recoveryFor } from "../../../plugins/recovery/plugin.ts";
import { createHopMarker } from "../../../core/http/hop.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, startTestGateway } from "../../support/gateway.ts";
import { withStoreFaults } from "../../support/store-faults.ts";
import { CREDENTIALS, DEMO, demoInvoice, startDemoSimulator } from "../regulator/simulator/simulator-helpers.ts";
import { startReceiver } from "./alert-helpers.ts";

const CALLER_REQUEST_ID = "caller-correlation-SECRET-0001";
const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;

test("every signal from its real source reaches the log and the chat webhook, carrying only the allowlist and no secret", async () => {
  const sim = await startDemoSimulator();
  const receiver = await startReceiver();
  let failFinish = false;
  let failQuota = false;
  const rawStore = await createSqliteDocumentStore({ file: ":memory:" });
  // The record of a sign's outcome (phase "done") cannot be written while failFinish is set.
  const store = withStoreFaults(rawStore, (collection, _method, args) =>
    failFinish && collection === "signing_idempotency" && (args[1] as { $set?: { phase?: string } } | undefined)?.$set?.phase === "done" ? "before" : null,
  );
  const innerCoordination = createMemoryCoordination();
  const coordination: CoordinationStore = Object.assign(Object.create(innerCoordination), {
    takePermit: (key: string, limit: number, windowMs: number) => (failQuota ? Promise.reject(new Error("injected: coordination down")) : innerCoordination.takePermit(key, limit, windowMs)),
    // The in-process store's synchronous path (the quota stage's fast path) fails the same way.
    takePermitNow: (key: string, limit: number, windowMs: number) => {
      if (failQuota) throw new Error("injected: coordination down");
      return innerCoordination.takePermitNow!(key, limit, windowMs);
    },
  });
  const billing = createFaultInjectingLedger(createDocumentLedger({ store: rawStore, openingBalances: { demo: 100_000_000, other: 0 } }));
  const g = await startTestGateway({
    ports: { documentStore: store, coordination, billing },
    patch: {
      limits: {
        capacity: { total: 1, perDomain: 1, retryAfterSeconds: 1 },
        quotas: { sign: { limit: 100_000, windowSeconds: 60 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } },
      },
      regulator: { apiKey: CREDENTIALS.apiKey, apiSecret: CREDENTIALS.apiSecret, timeoutMs: 1_500 },
      alerts: { environment: "prod", flushMs: 600_000, webhook: { url: receiver.url, attempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 } },
      recovery: { enabled: false, settleAfterMs: 1, overdueAfterMs: 1 },
    },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
  });
  const alerts = g.gateway.kit.ports.alerts as AlertChannel;
  const customer = { "x-api-key": DEMO_KEY, "x-request-id": CALLER_REQUEST_ID };
  const raised = (signal: string) => g.logs.filter((l) => l.event === "gateway_alert" && l.signal === signal);
  const sign = (no: string, key: string) =>
    g.call("/api/v1/invoice/sign", { method: "POST", host: PASSTHROUGH, headers: { ...customer, "x-sub-business-id": DEMO.businessId, "x-idempotency-key": key }, body: demoInvoice(no) });
  const resources = () => g.call("/api/v1/invoice/resources/currencies", { host: PASSTHROUGH, headers: customer });
  const expect = async (res: Response | Promise<Response>, status: number, code?: string) => {
    const r = await res;
    const text = await r.text();
    assert.is(r.status, status, text);
    if (code) assert.is(JSON.parse(text).code, code);
  };
  const settle = async () => {
    await new Promise((r) => setImmediate(r));
    await alerts.flush();
    await new Promise((r) => setImmediate(r));
    await alerts.drain();
  };

  try {
    await expect(
      g.call("/sub-businesses", {
        method: "POST",
        host: PASSTHROUGH,
        headers: { ...customer, "x-idempotency-key": "src-onboard-SECRET-0001" },
        body: { regulatorCredentials: { email: DEMO.email, password: DEMO.password } },
      }),
      201,
    );

    // Routing loop (its chat delivery fails twice: the dead letter).
    receiver.plan = [500, 500];
    const ownMarker = createHopMarker(g.config.regulator.apiSecret).forHost(PASSTHROUGH);
    await expect(g.call("/sub-businesses", { host: PASSTHROUGH, headers: { ...customer, "x-service-gateway-hop": ownMarker } }), 508, "GW_ROUTING_LOOP_DETECTED");
    await settle();
    assert.is(raised("routing_loop").length, 1);

    // Sustained failure of one regulator operation (5 consecutive failures), then its recovery (5 successes).
    sim.faults.set("resources", { kind: "status", status: 503, times: 5 });
    for (let i = 0; i < 5; i++) await expect(resources(), 502, "GW_UPSTREAM_UNAVAILABLE");
    await settle();
    assert.is(raised("dependency_sustained_failure").length, 1);
    for (let i = 0; i < 5; i++) await expect(resources(), 200);
    await settle();
    assert.is(raised("dependency_recovered").length, 1);

    // Rejected deployment credentials.
    sim.faults.set("resources", { kind: "reject_credentials", times: 1 });
    await expect(resources(), 502, "GW_UPSTREAM_UNAVAILABLE");

    // Capacity: one request in flight (the regulator holds the sign), a second one is refused.
    sim.faults.set("sign", { kind: "latency", ms: 500, times: 1 });
    const signs = sim.state.calls("sign");
    const held = sign("SRC1", "src-sign-SECRET-0001");
    for (let i = 0; i < 400 && sim.state.calls("sign") === signs; i++) await new Promise((r) => setTimeout(r, 5));
    await expect(g.call("/sub-businesses", { host: PASSTHROUGH, headers: customer }), 503, "GW_GATEWAY_CAPACITY_EXCEEDED");
    await expect(held, 201);

    // Quotas cannot be enforced (the coordination store fails): fail closed.
    failQuota = true;
    await expect(g.call("/sub-businesses", { host: PASSTHROUGH, headers: customer }), 503, "GW_GATEWAY_CAPACITY_EXCEEDED");
    failQuota = false;

    // Unconfirmed sign; unconfirmed reversal; incomplete settlement; missing post-sign state.
    sim.faults.set("sign", { kind: "renamed", afterProcessing: true, times: 1 });
    await expect(sign("SRC2", "src-sign-SECRET-0002"), 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
    sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
    billing.faults = { reverse: "unavailable", once: true };
    await expect(sign("SRC3", "src-sign-SECRET-0003"), 503, "GW_SIGN_REVERSAL_UNCONFIRMED");
    billing.faults = { confirm: "unavailable", once: true };
    await expect(sign("SRC4", "src-sign-SECRET-0004"), 503, "GW_SIGN_RECOVERY_UNAVAILABLE");
    failFinish = true;
    await expect(sign("SRC5", "src-sign-SECRET-0005"), 201);
    failFinish = false;

    // Unconfirmed transmission.
    sim.faults.set("transmit", { kind: "renamed", afterProcessing: true, times: 1 });
    await expect(
      g.call(`/api/v1/invoice/transmit/${irnOf("SRC1")}`, { method: "POST", host: PASSTHROUGH, headers: { ...customer, "x-sub-business-id": DEMO.businessId }, body: {} }),
      502,
      "GW_TRANSMIT_OUTCOME_UNCONFIRMED",
    );

    // Recovery: the regulator cannot prove anything (unprovable), and it is all overdue.
    sim.faults.set("confirm", { kind: "status", status: 503 });
    const run = await recoveryFor(g.gateway.kit).runOnce();
    assert.ok(run.unprovable >= 1 && run.overdue >= 1, JSON.stringify(run));
    sim.faults.clear("confirm");

    // The regulator's circuit opens (spec §3.5: ≥ 20 calls, ≥ 50 % failed within 30 s).
    sim.faults.set("resources", { kind: "status", status: 503 });
    for (let i = 0; i < 20; i++) await resources();
    sim.faults.clear("resources");
    await settle();

    const expected = [
      "dependency_sustained_failure",
      "dependency_recovered",
      "regulator_credentials_rejected",
      "sign_outcome_unconfirmed",
      "sign_reversal_unconfirmed",
      "sign_recovery_unavailable",
      "post_sign_state_missing",
      "transmit_outcome_unconfirmed",
      "routing_loop",
      "capacity_exceeded",
      "quota_unenforceable",
      "circuit_opened",
      "recovery_unprovable",
      "reconciliation_overdue",
    ];
    const logged = g.logs.filter((l) => l.event === "gateway_alert") as unknown as Alert[];
    for (const signal of expected) assert.ok(logged.some((a) => a.signal === signal), `log channel: ${signal}`);
    const chat = receiver.bodies.map((b) => b.alert);
    const letters = (await alerts.deadLetters({ limit: 100 })).items;
    assert.is(letters.length, 1, "the routing loop's delivery was exhausted");
    assert.is(letters[0]!.alert.signal, "routing_loop");
    assert.ok(g.logs.some((l) => l.event === "chat_alert_delivery_failed"));
    for (const signal of expected) assert.ok(chat.some((a) => a.signal === signal), `chat webhook: ${signal}`);
    for (const a of logged.filter((x) => x.code !== undefined)) assert.match(a.code!, /^GW_[A-Z_]+$/);
    assert.ok(logged.some((a) => a.requestIds.length > 0), "request ids are carried (the gateway's own)");

    const ALLOWED = new Set(["id", "kind", "signal", "severity", "summary", "environment", "dependency", "operation", "failureClass", "firstOccurrence", "lastOccurrence", "count", "ratio", "requestIds", "operationId", "providerId", "code", "runbook"]);
    for (const a of [...chat, ...letters.map((l) => l.alert)]) for (const key of Object.keys(a)) assert.ok(ALLOWED.has(key), `field outside the allowlist: ${key}`);
    for (const a of logged) for (const key of Object.keys(a)) assert.ok(ALLOWED.has(key) || ["time", "level", "event"].includes(key), `log field outside the allowlist: ${key}`);

    const invoice = demoInvoice("SRC1");
    const SECRETS = [
      DEMO_KEY,
      ADMIN_KEY,
      DEMO.email,
      DEMO.password,
      DEMO.tin,
      DEMO.businessId,
      DEMO.entityId,
      invoice.accounting_supplier_party.party_name,
      invoice.accounting_supplier_party.email,
      invoice.accounting_supplier_party.telephone,
      invoice.accounting_supplier_party.postal_address.street_name,
      invoice.accounting_customer_party.party_name,
      invoice.accounting_customer_party.tin,
      invoice.invoice_line[0].item.name,
      ...["SRC1", "SRC2", "SRC3", "SRC4", "SRC5"].map(irnOf),
      "SECRET",
      CALLER_REQUEST_ID,
      CREDENTIALS.apiKey,
      CREDENTIALS.apiSecret,
      "secret-token-in-path",
    ];
    const everything = JSON.stringify({ logged, chat: receiver.bodies, letters });
    for (const s of SECRETS) assert.not.ok(everything.toLowerCase().includes(s.toLowerCase()), `leaked into an alert: ${s}`);
  } finally {
    await g.close();
    await receiver.close();
    await sim.close();
  }
});

test.run();
