/**
 * Scale-out, proved (issue 15; ARCHITECTURE.md §6–§7, docs/deployment.md): the production topology
 * started on this machine — nginx (Debian) as the trusted edge running deploy/nginx.conf, two gateway
 * processes (`npm start`'s entry), two `npm run worker` processes, Redis and the shared store (the
 * MongoDB-wire server: faults.test.ts; an SQLite file on this host: faults-sqlite.test.ts) —
 * under a bounded mixed load of merchants (the merchant client, which retries per spec §7) and payers,
 * while the test SIGKILLs a gateway, then a worker, restarts the other gateway with a drain
 * (SIGTERM: a rolling restart), restarts Redis and hangs the store for a few seconds (MongoDB-wire:
 * the server stopped; SQLite: another process holds the file's write lock). Then the
 * invariant checker (invariants.ts) reads the stores, the regulator simulator's own log and the
 * edge's access log, and proves that nothing was lost, charged twice or answered outside the contract.
 *
 * What a killed process legitimately leaves behind is accounted for, never waved through: a billed
 * sign whose gateway died after the debit is *held* (ARCHITECTURE.md §7.1, docs/billing.md), and the
 * checker proves from nginx's log that its request was on the killed gateway when it died; a Stored
 * invoice frozen by an interrupted pass must have been leased by the killed worker at that step.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createCollectionsClient, createInvoiceGatewayClient, isProblemError } from "../../../client/index.ts";
import { ADMIN_KEY, ALLOWLISTED_KEY, BEARER_DEMO, DEMO_KEY, PASSTHROUGH, STORED, STORED_KEY } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";
import type { SharedStoreKind } from "../../support/shared-store.ts";
import { isTopologySkip, reportTopologySkip, SCALE_OUT_EDGE, startTopology, type Topology } from "../../support/topology.ts";
import { DEMO, STORED_DEMO } from "../../adapters/regulator/simulator/simulator-helpers.ts";
import type { CheckoutSession } from "../../../plugins/collections/payment-links/checkout/session.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import {
  allDocs,
  checkAnswers,
  checkCheckouts,
  checkCollectionWallets,
  checkDeposits,
  checkLedgers,
  checkOneSignPerUnreversedDebit,
  checkOneTransmissionPerClaim,
  checkStoredInvoices,
  chargedSessions,
  excusedCheckout,
  readStores,
  unchargedByStoreHang,
  unfinishedWork,
  type Faults,
  type StoresSnapshot,
} from "./invariants.ts";
import { COLLECTIONS_HOST, startLoad, type Load, type LoadSetup, type OpRecord } from "./load.ts";

/** The load: virtual users, their pause between operations, and a cap (the run is bounded on any machine). */
const LOAD = { users: 6, pauseMs: 40, maxOpsPerUser: 400 };
/** After the load, the workers finish what the faults interrupted; beyond this the test fails and lists what is left. */
const RECOVERY_BOUND_MS = 100_000;
/** How long the store hangs. */
const STORE_PAUSE_MS = 4_000;
/** How slow the regulator's sign is made around a kill. */
const SLOW_SIGN_MS = 3_000;

/** Starts the topology on `store` and runs the suite on it. */
export async function runFaultsSuite(store: SharedStoreKind): Promise<void> {
  const topology = await startTopology({
    name: `topology-${store}`,
    store,
    gateways: 2,
    workers: 2,
    patch(raw) {
      // Quotas and admission out of the way: this test is about processes dying, not about limits.
      raw.limits = {
        quotas: { sign: { limit: 100_000, windowSeconds: 60 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } },
        admission: { perClient: 100_000, windowSeconds: 1 },
      };
      // Stored invoices are signed and transmitted by the workers.
      for (const b of raw.businesses) for (const d of b.gateway?.domains ?? []) if (d.mode === "stored") d.autoTransmit = true;
      // A killed worker's leases expire within the run; collections work a crash left is re-driven within it.
      raw.stored.processor = { pollMs: 100, leaseMs: 12_000, heartbeatMs: 1_000, backoffBaseMs: 200, backoffMaxMs: 2_000, concurrency: 4 };
      raw.collections = { ...raw.collections, sweepIntervalMs: 2_000 };
      raw.webhooks = { pollMs: 500 };
    },
  });
  // The MongoDB run keeps its original name (test/e2e/topology/engines-missing.test.ts reads it).
  if (isTopologySkip(topology)) reportTopologySkip(store === "mongodb" ? "scale-out topology" : `scale-out topology (${store})`, topology.skip);
  else run(topology, store);
}

function run(topo: Topology, store: SharedStoreKind): void {
  const test = suite(`scale-out topology (${store})`);
  let setup: LoadSetup;
  let load: Load;
  const faults: Faults = { gateway: null, worker: null, drained: null, redis: null, store: null };
  let snapshot: StoresSnapshot | undefined;
  /** The stores as the load test left them; read here when it stopped early, so every invariant is still checked. */
  const stores = async (): Promise<StoresSnapshot> => (snapshot ??= await readStores(topo.store, topo.config, await topo.simulator()));
  /** Operations whose client gave up within its budget, sent again after recovery with the same key. */
  const resent: Array<{ first: OpRecord; again: OpRecord }> = [];
  /** What the regulator (through the gateway) told merchants whose sign got no answer. */
  const checks: Array<{ irn: string; answer: string }> = [];

  test.after(async () => {
    await load?.close();
    await topo.close();
  });

  test("nginx is the trusted edge: a gateway refuses what bypasses it; a forged client address does not pass it", async () => {
    const gatewayUrl = `http://${topo.gateways[0]!.address}`;
    // Straight to a gateway (bypassing the edge), even with a forged client address: refused.
    const direct = await httpCall(gatewayUrl, "/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY, [SCALE_OUT_EDGE.clientAddressHeader]: "10.9.9.9" } });
    assert.is(direct.status, 403, direct.text);
    assert.is((direct.json() as { code: string }).code, "GW_EDGE_VERIFICATION_FAILED");
    // Through nginx, a client claiming the allowlisted address (10.9.9.9) in every header it could forge is still 127.0.0.1.
    const forged = await httpCall(topo.url, "/sub-businesses", {
      host: PASSTHROUGH,
      headers: {
        "x-api-key": ALLOWLISTED_KEY,
        [SCALE_OUT_EDGE.clientAddressHeader]: "10.9.9.9",
        [SCALE_OUT_EDGE.secretHeader]: "forged-secret",
        "x-forwarded-for": "10.9.9.9",
        forwarded: "for=10.9.9.9",
        "x-real-ip": "10.9.9.9",
      },
    });
    assert.is(forged.status, 403, forged.text);
    assert.is((forged.json() as { code: string }).code, "GW_AUTH_TENANT_FORBIDDEN");
    // The same request with the key that has no allowlist passes the edge check (the secret nginx sent was right).
    const through = await httpCall(topo.url, "/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY, "x-forwarded-for": "10.9.9.9" } });
    assert.is(through.status, 200, through.text);
  });

  test("setup through nginx: a represented business, payment links, virtual accounts", async () => {
    const common = { baseUrl: topo.url, idempotencyKeyPrefix: "topo-setup" };
    const pt = createInvoiceGatewayClient({ ...common, host: PASSTHROUGH, apiKey: DEMO_KEY });
    const co = createCollectionsClient({ ...common, host: COLLECTIONS_HOST, apiKey: BEARER_DEMO });
    const onboardingKey = "topo-onboard-demo";
    const onboard = await pt.subBusinesses.onboard({ regulatorCredentials: { email: DEMO.email, password: DEMO.password } }, { idempotencyKey: onboardingKey });
    assert.is(onboard.status, 201);
    // The Stored domain is its own business's (one approved domain per business): it represents its own taxpayer.
    const st = createInvoiceGatewayClient({ ...common, host: STORED, apiKey: STORED_KEY });
    const storedOnboard = await st.subBusinesses.onboard({ regulatorCredentials: { email: STORED_DEMO.email, password: STORED_DEMO.password } }, { idempotencyKey: "topo-onboard-stored" });
    assert.is(storedOnboard.status, 201);
    const paymentLinks: string[] = [];
    for (let i = 0; i < 3; i++) {
      const link = await co.paymentLinks.create({ link_name: `Topology link ${i}`, narration: "Scale-out test", fee_bearer: "MERCHANT", source_reference: `topo-link-${i}` });
      paymentLinks.push(link.data.data.reference);
    }
    const accountNumbers: string[] = [];
    for (let i = 0; i < 3; i++) {
      const account = await co.virtualAccounts.create({ account_type: "multi_use", account_name: `Topology ${i}`, source_reference: `topo-va-${i}` });
      accountNumbers.push(account.data.data.accountNumber);
    }
    // A single-use account: its first deposit settles, every later one is refunded (account_used).
    const expiresAt = new Date(Date.now() + 3_600_000).toISOString().slice(0, 19).replace("T", " ");
    const single = await co.virtualAccounts.create({ account_type: "single_use", account_name: "Topology single", source_reference: "topo-va-single", expires_at: expiresAt });
    accountNumbers.push(single.data.data.accountNumber);
    setup = { url: topo.url, subBusinessId: onboard.data.gatewaySubBusinessId, onboardingKey, paymentLinks, accountNumbers };
  });

  test("mixed load through nginx while a gateway is SIGKILLed, then a worker, the other gateway restarts with a drain, Redis restarts and the store hangs", async () => {
    assert.ok(setup, "the setup ran");
    load = startLoad(setup, LOAD);
    await _sleep(5_000);

    // 1. A gateway dies (SIGKILL: no drain) with billed signs in flight: the regulator is made slow
    // for a moment, and the kill waits until the gateway counts 3 Pass-through requests in flight
    // (/health/dependencies). Its signs never reach the regulator (the simulator drops a request
    // whose connection closed while it waited): debited, not signed, held.
    const gw = topo.gateways[0]!;
    await topo.simulatorFault("sign", { kind: "latency", ms: SLOW_SIGN_MS });
    let inFlight = 0;
    await _until(async () => (inFlight = await _passThroughInFlight(topo, gw.address!)) >= 3, 2 * SLOW_SIGN_MS);
    const killAt = Date.now();
    await gw.kill();
    faults.gateway = { name: gw.name, address: gw.address!, inFlight, killAt, killedAt: Date.now(), restartedAt: 0 };
    await topo.simulatorFault("sign", null);
    // It is started again on its port, as a supervisor would.
    await _sleep(3_000);
    await topo.restartGateway(0);
    faults.gateway.restartedAt = Date.now();
    await _sleep(3_000);

    // 2. A worker dies holding an invoice whose sign it dispatched (its lease names the worker's pid):
    // this time the regulator signs at once and answers slowly, so the sign is done and the worker
    // never knew. What it held is read from the store right after (it cannot change anything now).
    const worker = topo.workers[0]!;
    await topo.simulatorFault("sign", { kind: "latency", ms: SLOW_SIGN_MS, afterProcessing: true });
    await _until(async () => (await _leasedBy(topo, worker.pid)).some((l) => l.step === "dispatching"), SLOW_SIGN_MS * 2);
    await worker.kill();
    faults.worker = { name: worker.name, pid: worker.pid, killedAt: Date.now(), leased: await _leasedBy(topo, worker.pid) };
    await topo.simulatorFault("sign", null);
    await _sleep(3_000);

    // 3. A rolling restart of the other gateway (docs/deployment.md): SIGTERM drains it (in-flight
    // requests finish, new ones are refused before any work), it exits 0 and is started again.
    const drainedAt = Date.now();
    assert.is(await topo.gateways[1]!.stop(), 0, "a drained gateway exits 0");
    await topo.restartGateway(1);
    faults.drained = { name: topo.gateways[1]!.name, at: drainedAt, restartedAt: Date.now() };
    await _sleep(2_000);

    // 4. Redis restarts (empty: no persistence), 5. the store hangs for a few seconds.
    const downAt = Date.now();
    await topo.redis.restart();
    faults.redis = { downAt, upAt: Date.now() };
    await _sleep(4_000);
    const pausedAt = Date.now();
    await topo.shared.pause();
    await _sleep(STORE_PAUSE_MS);
    await topo.shared.resume();
    faults.store = { pausedAt, resumedAt: Date.now() };
    await _sleep(5_000);
    await load.stop();

    // What is still owed at the end of the load is visible (pending); the surviving workers finish it.
    const uncharged = unchargedByStoreHang(await chargedSessions(topo.store), topo.logs("gateway"), faults);
    const held = excusedCheckout(load.records, topo.edge.accessLog(), faults, uncharged);
    const pendingAtStop = await unfinishedWork(topo.store, held);
    const left = await _finished(topo, held);
    assert.equal(left, [], `work left unfinished ${RECOVERY_BOUND_MS} ms after the load (pending at the end of the load: ${pendingAtStop.length})\n${_evidence(topo, left)}`);

    // What the client gave up on within its budget but may send again (same key, same content): sent again now.
    for (const first of load.records)
      if (!first.ok && first.resend && (first.stopReason === "attempts_exhausted" || first.stopReason === "time_exhausted")) resent.push({ first, again: await first.resend() });
    // A resent intake whose first attempt never reached the store is a new invoice: the workers finish it too.
    if (resent.length > 0) {
      const after = await _finished(topo, held);
      assert.equal(after, [], `work left unfinished ${RECOVERY_BOUND_MS} ms after the resends\n${_evidence(topo, after)}`);
    }

    // A merchant whose sign got no answer checks the invoice with the regulator, as docs/signing-and-transmission.md says.
    const pt = createInvoiceGatewayClient({ baseUrl: topo.url, host: PASSTHROUGH, apiKey: DEMO_KEY });
    for (const r of load.records)
      if (r.kind === "sign" && r.errorKind === "unexpected") {
        const irn = String(r.facts.irn);
        const answer = await pt.invoices.confirm(setup.subBusinessId, irn).then(
          () => "signed",
          (e: unknown) => (isProblemError(e) ? e.code : String(e)),
        );
        checks.push({ irn, answer });
      }

    snapshot = await readStores(topo.store, topo.config, await topo.simulator());
    const kinds = new Map<string, number>();
    for (const r of load.records) {
      const kind = `${r.kind}:${r.ok ? "ok" : (r.code ?? r.errorKind)}`;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    process.stdout.write(
      `topology: ${load.records.length} operations ${JSON.stringify(Object.fromEntries([...kinds].sort()))}; ` +
        `held by the killed worker ${faults.worker.leased.length}; pending at the end of the load ${pendingAtStop.length}; resent ${resent.length}\n`,
    );
    assert.ok(load.records.length >= 50, `a real load ran (${load.records.length} operations)`);
  });

  test("every client request was answered with a contract status; the edge answered only for the killed gateway", () => {
    const summary = checkAnswers(load.records, resent, topo.edge.accessLog(), faults, topo.logs("gateway"));
    process.stdout.write(`answers: ${JSON.stringify(summary)}\n`);
  });

  test("ledger: balance = opening − debits + reversals + credits for every wallet; one debit per billing identity", async () => {
    const r = checkLedgers(await stores());
    assert.ok(r.debits > 0, "signs were billed");
  });

  test("one regulator sign per unreversed debit (the simulator's log is the witness); held signs are the killed gateway's", async () => {
    const w = checkOneSignPerUnreversedDebit(await stores(), load.records, checks, topo.edge.accessLog(), faults, topo.logs("gateway"));
    process.stdout.write(`signs: ${JSON.stringify(w)}\n`);
  });

  test("one regulator transmission per claim", async () => {
    const t = checkOneTransmissionPerClaim(await stores(), load.records, topo.edge.accessLog(), faults, topo.logs("gateway"));
    process.stdout.write(`transmissions: ${JSON.stringify(t)}\n`);
  });

  test("every 202 Stored invoice is terminal after recovery; a frozen one was held by the killed worker mid-dispatch", async () => {
    const r = checkStoredInvoices(await stores(), load.records, faults, topo.logs("worker"));
    process.stdout.write(`stored: ${JSON.stringify(r)} faults: ${JSON.stringify({ ...faults, worker: { ...faults.worker, leased: faults.worker?.leased.length } })}\n`);
  });

  test("every deposit settled once with one IN_FLOW_SUCCESS_EVENT (or refunded with neither); checkouts credited once", async () => {
    const d = checkDeposits(await stores());
    assert.ok(d.settled > 0, "deposits settled");
    const c = checkCheckouts(await stores(), load.records, topo.edge.accessLog(), faults, topo.logs("gateway"));
    checkCollectionWallets(await stores());
    process.stdout.write(`collections: ${JSON.stringify({ ...d, checkouts: c })}\n`);
  });

  test.run();
}

// --- Internal helpers ---

function _sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls the stores until no work is left unfinished or RECOVERY_BOUND_MS passes; what is still left. */
/** What the gateways' and workers' logs say about each unfinished item (by its id), so a failure shows its cause. */
function _evidence(topo: Topology, left: string[]): string {
  const logs = readdirSync(topo.dir)
    .filter((f) => /^(gateway|worker)-.*\.log$/.test(f))
    .flatMap((f) => readFileSync(join(topo.dir, f), "utf8").split("\n").map((l) => `${f}: ${l}`));
  return left
    .map((item) => {
      const id = item.split(" ")[1] ?? item;
      return `${item}:\n${logs.filter((l) => l.includes(id)).slice(0, 40).join("\n")}`;
    })
    .join("\n");
}

async function _finished(topo: Topology, held: (c: CheckoutSession) => boolean): Promise<string[]> {
  const deadline = Date.now() + RECOVERY_BOUND_MS;
  let left = await unfinishedWork(topo.store, held);
  while (left.length > 0 && Date.now() < deadline) {
    await _sleep(500);
    left = await unfinishedWork(topo.store, held);
  }
  return left;
}

/** Polls `done` until it holds or `boundMs` passes (then the fault goes ahead anyway: a targeting aid, not an assertion). */
async function _until(done: () => Promise<boolean>, boundMs: number): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await done()) && Date.now() < end) await _sleep(50);
}

/** Requests in flight on the Pass-through domain of one gateway, as the gateway counts them. */
async function _passThroughInFlight(topo: Topology, address: string): Promise<number> {
  const res = await httpCall(`http://${address}`, "/health/dependencies", { headers: { "x-admin-api-key": ADMIN_KEY, [SCALE_OUT_EDGE.secretHeader]: topo.edgeSecret } });
  assert.is(res.status, 200, res.text);
  return (res.json() as { inFlight: { perDomain: Record<string, number> } }).inFlight.perDomain[PASSTHROUGH] ?? 0;
}

/** Stored invoices whose lease names this worker process (`<host>:<pid>:<random>`), with the step it left them at. */
async function _leasedBy(topo: Topology, pid: number): Promise<Array<{ invoiceId: string; status: string; step: string }>> {
  const docs = await allDocs<InvoiceDoc>(topo.store, STORED_COLLECTIONS.invoices, { direction: "outbound" });
  return docs.filter((d) => d.lease && d.lease.owner.split(":").at(-2) === String(pid)).map((d) => ({ invoiceId: d._id, status: d.status, step: d.step }));
}
