/**
 * Billed signing under failure, across processes (issue 11; ARCHITECTURE.md §6–§7): two gateway
 * processes share one Redis and one document store (the MongoDB-wire server, then an SQLite file on
 * this host) and reach the regulator simulator over HTTP.
 * Bursts of distinct invoices (each also sent to the other process with the same key) are driven to
 * a final answer by retrying with the same key, as a merchant's software would; then, straight from
 * the stored documents and the simulator:
 *   - the ledger invariant holds (balance = opening + credits − debits + reversals, never negative,
 *     nothing left pending);
 *   - every invoice has exactly one debit, the regulator was asked to sign each IRN at most once,
 *     and the money matches each final answer (201 → confirmed; a frozen or unrecoverable outcome →
 *     held, never charged twice; nothing charged that no answer accounts for).
 * Scenarios: a clean burst; the store hung mid-burst (the MongoDB-wire server SIGSTOPped; the SQLite
 * file's write lock held by another process past the deadline); a gateway process killed mid-burst.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { billingEntryId } from "../../adapters/billing/ledger.ts";
import { REFUSED_BEFORE_WORK } from "../../client/retry.ts";
import { loadFixtures } from "../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import type { DocumentStore } from "../../adapters/ports.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { assertLedgerInvariant } from "../support/ledger-invariant.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { httpCall } from "../support/raw-http.ts";
import { isRedisSkip, reportRedisSkip, startRedisServer, type RedisServerHandle } from "../support/redis-server.ts";
import { sharedStores, type SharedStore } from "../support/shared-store.ts";
import { demoInvoice } from "../adapters/regulator/simulator/simulator-helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const FEE_KOBO = 5_000;
const BURST = 30;
/**
 * Answers after which the same key is retried (spec §7.9: same key) or waited out (a claim still held),
 * and the refusals before any work (capacity, admission, domain registry, authorization: the merchant
 * client's REFUSED_BEFORE_WORK) that a slow store produces too; none of them is a billed sign's final answer.
 */
const RETRY = new Set<string>([
  "GW_BILLING_SERVICE_UNAVAILABLE",
  "GW_MANAGEMENT_SERVICE_UNAVAILABLE",
  "GW_SIGN_ATTEMPT_ALREADY_PROCESSED",
  "GW_UPSTREAM_UNAVAILABLE",
  ...REFUSED_BEFORE_WORK,
]);

const redis = await startRedisServer();
if (isRedisSkip(redis)) reportRedisSkip("cross-process billing e2e", redis.skip);
else {
  const stores = await sharedStores("cross-process billing e2e");
  stores.forEach((shared, i) => run(redis, shared, i === stores.length - 1));
}

interface Final {
  irn: string;
  status: number;
  code: string | null;
}

function run(redisServer: RedisServerHandle, shared: SharedStore, last: boolean): void {
  const test = suite(`cross-process billing e2e (${shared.kind})`);
  let procs: GatewayProcesses | undefined;
  let sim: _RecordingSimulator;
  let store: DocumentStore;
  let sub = "";
  let dir = "";

  test.before(async () => {
    sim = await _recordingSimulator();
    dir = mkdtempSync(join(tmpdir(), "gatehouse-xbill-"));
    const raw = structuredClone(DEMO_RAW) as Record<string, any>;
    raw.storage = shared.storage;
    raw.coordination = { driver: "redis", url: redisServer.url, keyPrefix: `xbill${process.pid}${shared.kind}:` };
    raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: sim.url, LIVE: sim.url }, timeoutMs: 2_000 };
    raw.email = { driver: "folder", dir: join(dir, "mail") };
    raw.dependencies = { storeTimeoutMs: 1_000 };
    raw.limits = {
      admission: { perClient: 100_000, windowSeconds: 1 },
      quotas: { sign: { limit: 100_000, windowSeconds: 60 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } },
    };
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify(raw));
    // A claim whose holder died (or lost its store) is taken over, or frozen, after 5 s instead of 34 s.
    process.env.GATEHOUSE_TEST_SIGNING = JSON.stringify({ staleAfterMs: 5_000, inFlightWaitMs: 500 });
    procs = await startGatewayProcesses(path, 2);
    delete process.env.GATEHOUSE_TEST_SIGNING;
    store = await shared.open();
    const onboard = await httpCall(procs.urls[0]!, "/sub-businesses", {
      method: "POST",
      host: PASSTHROUGH,
      headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "xbill-onboard-1", "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } }),
    });
    assert.is(onboard.status, 201, onboard.text);
    sub = (onboard.json() as { gatewaySubBusinessId: string }).gatewaySubBusinessId;
  });

  test.after(async () => {
    await shared.resume().catch(() => {});
    await procs?.stop();
    await store?.close();
    await sim?.close();
    await shared.stop();
    if (last) await redisServer.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** One sign request; a connection that fails (a killed process) is status 0. */
  const sign = async (url: string, no: string): Promise<Final> => {
    try {
      const res = await httpCall(url, "/api/v1/invoice/sign", {
        method: "POST",
        host: PASSTHROUGH,
        headers: {
          "x-api-key": DEMO_KEY,
          "x-sub-business-id": sub,
          "x-idempotency-key": `xbill-${no}`,
          "x-attempt-number": "1",
          "content-type": "application/json",
        },
        body: JSON.stringify(demoInvoice(no)),
      });
      const code = res.status >= 400 ? ((JSON.parse(res.text) as { code?: string }).code ?? null) : null;
      return { irn: demoInvoice(no).irn as string, status: res.status, code };
    } catch {
      return { irn: demoInvoice(no).irn as string, status: 0, code: null };
    }
  };

  /** Sends every invoice to both processes at once, runs `during` meanwhile, then retries (same key) until each answer is final. */
  const burst = async (prefix: string, urls: () => string[], during: () => Promise<void>): Promise<Final[]> => {
    const nos = Array.from({ length: BURST }, (_, i) => `${prefix}${i}`);
    const [first] = await Promise.all([
      Promise.all(nos.map((no, i) => Promise.all([sign(urls()[i % 2]!, no), sign(urls()[(i + 1) % 2]!, no)]))),
      during(),
    ]);
    const finals = new Map<string, Final>();
    // 409 GW_SIGN_ATTEMPT_ALREADY_PROCESSED is final once the key's attempt is no longer in progress
    // (it was processed: its own answer went to a twin or a killed process); while it runs, wait.
    const final = async (f: Final): Promise<boolean> =>
      f.code === "GW_SIGN_ATTEMPT_ALREADY_PROCESSED" ? (await _attempt(f.irn))?.status !== "in_progress" : !_retry(f);
    let open: string[] = [];
    for (const [i, no] of nos.entries()) {
      // The twin that held the claim answers the attempt; the other learns it was processed (409).
      const twins = first[i]!;
      const a = twins.find((r) => r.status === 201) ?? twins.find((r) => !_retry(r));
      if (a) finals.set(no, a);
      else open.push(no);
    }
    const deadline = Date.now() + 60_000;
    while (open.length > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      const live = urls();
      const again = await Promise.all(open.map((no, i) => sign(live[i % live.length]!, no)));
      const done = await Promise.all(again.map(final));
      open = open.filter((no, i) => {
        if (!done[i]) return true;
        finals.set(no, again[i]!);
        return false;
      });
    }
    assert.equal(open, [], "every invoice reached a final answer");
    return nos.map((no) => finals.get(no)!);
  };

  /** The sign record of an invoice's attempt 1 (the signing plugin's own, read from the shared store). */
  const _attempt = (irn: string) =>
    store.collection<{ _id: string; status: string }>("signing_idempotency").findOne({ attemptKey: `TEST|${PASSTHROUGH}|${sub}|${irn}|1` });

  /** The money of a burst, checked against its final answers, the stored documents and the simulator. */
  const checkMoney = async (finals: Final[], balanceBefore: number): Promise<void> => {
    const { balanceKobo, entries } = await assertLedgerInvariant(store, "demo");
    const byId = new Map(entries.map((e) => [e._id, e]));
    let charged = 0;
    for (const f of finals) {
      const debit = byId.get(billingEntryId("debit", "demo", { subBusinessId: sub, domain: PASSTHROUGH, irn: f.irn, attemptNumber: 1 }));
      const signed = sim.state.isSigned(f.irn);
      const what = `${f.irn} answered ${f.status} ${f.code ?? ""}`;
      if (f.status === 201) {
        assert.is(debit?.state, "confirmed", `${what}: its one debit is confirmed`);
        assert.ok(signed, `${what}: the regulator signed it`);
      } else if (f.code === "GW_SIGN_OUTCOME_UNCONFIRMED" || f.code === "GW_SIGN_RECOVERY_UNAVAILABLE") {
        // Held: the debit stays; a confirmation sent before the store hung may still have landed.
        assert.ok(debit?.state === "debited" || debit?.state === "confirmed", `${what}: the fee is held, once (${debit?.state})`);
      } else if (f.code === "GW_SIGN_ATTEMPT_ALREADY_PROCESSED") {
        // Processed under this key (its own answer lost to a killed process): its one debit, confirmed (signed) or held.
        assert.ok(debit?.state === "debited" || debit?.state === "confirmed", `${what}: the attempt's one debit (${debit?.state})`);
      } else if (f.code === "GW_SIGN_REJECTED") {
        assert.is(debit?.state, "reversed", `${what}: the fee was reversed`);
      } else {
        assert.unreachable(`${what}: not a final answer of a billed sign`);
      }
      if (debit && debit.state !== "reversed") charged += 1;
    }
    for (const f of finals) assert.ok((sim.signRequests.get(f.irn) ?? 0) <= 1, `${f.irn}: the regulator was asked to sign it at most once`);
    assert.is(balanceBefore - balanceKobo, charged * FEE_KOBO, "the wallet moved by exactly the fees the answers account for");
  };

  const balance = async (): Promise<number> => {
    const res = await httpCall(procs!.urls[0]!, "/admin/wallets/demo?limit=1", { host: PASSTHROUGH, headers: { "x-admin-api-key": ADMIN_KEY } });
    assert.is(res.status, 200, res.text);
    return Math.round((res.json() as { balance: number }).balance * 100);
  };

  test("a burst through two processes: every invoice signed once and charged once", async () => {
    const before = await balance();
    const finals = await burst("XB", () => procs!.urls, async () => {});
    assert.ok(finals.every((f) => f.status === 201), JSON.stringify(finals.filter((f) => f.status !== 201)));
    await checkMoney(finals, before);
  });

  // A server we did not start (MONGODB_URI) cannot be paused: that case is a visible skip.
  if (!shared.pausable) console.log("SKIPPED store outage case: MONGODB_URI points at a server this test cannot pause");
  const hang = shared.kind === "mongodb" ? "MongoDB-wire server paused 3 s" : "another process holds the SQLite file's write lock 3 s";
  (shared.pausable ? test : test.skip)(`the store hangs mid-burst (${hang}): after retries nothing is lost or charged twice`, async () => {
    const [before, signs] = [await balance(), sim.state.calls("sign")];
    // The regulator answers in 150 ms, so requests are spread over every step when the store stops:
    // reading records, debiting (inserts, wallet batches), marking dispatch, confirming, finishing.
    sim.faults.set("sign", { kind: "latency", ms: 150 });
    const finals = await burst("XO", () => procs!.urls, async () => {
      await _until(() => sim.state.calls("sign") > signs);
      await shared.pause();
      await new Promise((r) => setTimeout(r, 3_000));
      await shared.resume();
    });
    sim.faults.clear();
    // Signed after the outage: answered 201, or 409 "processed" to a same-key retry whose first answer was a 503.
    const wentOn = finals.some((f) => f.status === 201 || (f.code === "GW_SIGN_ATTEMPT_ALREADY_PROCESSED" && sim.state.isSigned(f.irn)));
    if (!wentOn) {
      // Every sign of the burst had passed its debit when the store hung (each is then held): a new
      // one after the outage must go through, through either process.
      const answers = finals.map((f) => f.code ?? String(f.status)).join(", ");
      for (const [i, url] of procs!.urls.entries()) {
        const after = await sign(url, `XO${BURST + i}`);
        assert.is(after.status, 201, `a sign after the outage answered ${after.status} ${after.code ?? ""}; the burst's answers: ${answers}`);
        finals.push(after);
      }
    }
    await checkMoney(finals, before);
  });

  test("a gateway process killed mid-burst: the other one finishes every invoice; nothing is lost or charged twice", async () => {
    const [before, signs] = [await balance(), sim.state.calls("sign")];
    sim.faults.set("sign", { kind: "latency", ms: 150 });
    let killed = false;
    const finals = await burst("XK", () => (killed ? [procs!.urls[0]!] : procs!.urls), async () => {
      await _until(() => sim.state.calls("sign") >= signs + 3);
      await procs!.kill(1);
      killed = true;
    });
    sim.faults.clear();
    await checkMoney(finals, before);
  });

  test.run();
}

// --- Internal helpers ---

interface _RecordingSimulator {
  url: string;
  state: RegulatorSimulator["state"];
  faults: RegulatorSimulator["faults"];
  /** Sign requests received (whole body read), per IRN. */
  signRequests: Map<string, number>;
  close(): Promise<void>;
}

/**
 * The regulator simulator behind a recording proxy: each sign request is read whole, counted per IRN,
 * then forwarded; a client that goes away mid-request cancels the forwarded one.
 */
async function _recordingSimulator(): Promise<_RecordingSimulator> {
  const sim = await startRegulatorSimulator({
    fixtures: loadFixtures(join(ROOT, "config/regulator-fixtures.json")),
    credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" },
  });
  const target = new URL(sim.url);
  const signRequests = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method === "POST" && (req.url ?? "").startsWith("/api/v1/invoice/sign")) {
        const irn = (JSON.parse(body.toString("utf8")) as { irn?: string }).irn ?? "";
        signRequests.set(irn, (signRequests.get(irn) ?? 0) + 1);
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: { ...req.headers, "content-length": String(body.length) } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on("error", () => res.destroy());
      res.on("close", () => upstream.destroy());
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    state: sim.state,
    faults: sim.faults,
    signRequests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await sim.close();
    },
  };
}

async function _until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not reached in 30 s");
    await new Promise((r) => setTimeout(r, 2));
  }
}

function _retry(f: Final): boolean {
  return f.status === 0 || (f.code !== null && RETRY.has(f.code));
}
