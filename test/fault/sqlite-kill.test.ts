/**
 * SIGKILL of a gateway on the SQLite file during a mixed load (billed Pass-through signs, Stored
 * intakes, sandbox deposits), then a restart on the same file (the one-process deployment,
 * docs/deployment.md): every write the gateway acknowledged (201 sign, 202 intake, 201 deposit) is
 * there after the restart — an acknowledgement follows its commit's fsync — the ledger's balance
 * equation holds with one debit per billing identity, every deposit settled once with its one
 * credit (or refunded with none), and the work the kill interrupted is finished by the restarted
 * gateway's own workers.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { billingEntryId, type EntryDoc } from "../../adapters/billing/ledger.ts";
import { openLedgerCollections } from "../../adapters/billing/ledger.ts";
import { createSqliteDocumentStore, type SqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { loadFixtures } from "../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { loadConfig } from "../../config/load.ts";
import { DEPOSITS_COLLECTION, type Deposit } from "../../plugins/collections/virtual-accounts/deposit.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../plugins/stored-processing/store.ts";
import { checkCollectionWallets, checkDeposits, checkLedgers, readStores, unfinishedWork } from "../e2e/topology/invariants.ts";
import { BEARER_DEMO, DEMO_KEY, DEMO_RAW, PASSTHROUGH, STORED, STORED_KEY } from "../support/gateway.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { httpCall } from "../support/raw-http.ts";
import { tempDir } from "../support/temp.ts";
import { DEMO, STORED_DEMO, demoInvoice, storedDemoInvoice } from "../adapters/regulator/simulator/simulator-helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const COLLECTIONS = "collections.demo.localhost";
const USERS = 6;

const dir = tempDir("sqlite-kill");
const file = join(dir, "data", "gatehouse.sqlite");
let sim: RegulatorSimulator;
let procs: GatewayProcesses | null = null;
let inspect: SqliteDocumentStore | null = null;

test.before(async () => {
  sim = await startRegulatorSimulator({
    fixtures: loadFixtures(join(ROOT, "config/regulator-fixtures.json")),
    credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" },
  });
});
test.after(async () => {
  await procs?.stop();
  await inspect?.close();
  await sim?.close();
});

interface Acked {
  signs: string[];
  invoices: string[];
  deposits: Array<{ sessionId: string; status: string }>;
}

test("SIGKILL mid-load, restart on the same file: every acknowledged write is there; the ledger balances; no debit twice", async () => {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.storage = { driver: "sqlite", file };
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: sim.url, LIVE: sim.url } };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  raw.limits = {
    quotas: { sign: { limit: 100_000, windowSeconds: 60 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } },
    admission: { perClient: 100_000, windowSeconds: 1 },
  };
  raw.stored = { processor: { pollMs: 100, leaseMs: 3_000, backoffBaseMs: 100, backoffMaxMs: 1_000, concurrency: 4 } };
  raw.collections = { ...raw.collections, sweepIntervalMs: 1_000 };
  raw.webhooks = { pollMs: 200 };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(raw));
  procs = await startGatewayProcesses(configPath, 1);
  const url = procs.urls[0]!;
  const { sub, storedSub, accounts } = await _setup(url);

  const acked: Acked = { signs: [], invoices: [], deposits: [] };
  let dead = false;
  let n = 0;
  const user = async (u: number): Promise<void> => {
    for (let i = 0; !dead; i++) {
      const no = `K${u}X${i}`;
      const kind = (u + i) % 3;
      try {
        if (kind === 0) {
          const res = await _sign(url, sub, no);
          if (res.status === 201) acked.signs.push(demoInvoice(no).irn as string);
        } else if (kind === 1) {
          const res = await _submit(url, storedSub, no);
          if (res.status === 202) acked.invoices.push((res.json() as { invoiceId: string }).invoiceId);
        } else {
          const res = await _deposit(url, accounts[(u + i) % accounts.length]!, 1000 + (n++ % 50));
          if (res.status === 201) {
            const d = (res.json() as { data: { sessionId: string; status: string } }).data;
            acked.deposits.push({ sessionId: d.sessionId, status: d.status });
          }
        }
      } catch {
        return; // the connection died with the process
      }
    }
  };
  const users = Array.from({ length: USERS }, (_, u) => user(u));
  const deadline = Date.now() + 30_000;
  while (acked.signs.length + acked.invoices.length + acked.deposits.length < 60 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  await procs.kill(0);
  dead = true;
  await Promise.all(users);
  const total = acked.signs.length + acked.invoices.length + acked.deposits.length;
  assert.ok(acked.signs.length > 0 && acked.invoices.length > 0 && acked.deposits.length > 0, `a mixed load was acknowledged: ${JSON.stringify({ signs: acked.signs.length, invoices: acked.invoices.length, deposits: acked.deposits.length })}`);

  // The restart: the same file, a fresh process (its workers finish what the kill interrupted).
  procs = await startGatewayProcesses(configPath, 1);
  inspect = await createSqliteDocumentStore({ file });
  const store = inspect;
  const deadlineWork = Date.now() + 60_000;
  let left = await unfinishedWork(store, () => false);
  while (left.length > 0 && Date.now() < deadlineWork) {
    await new Promise((r) => setTimeout(r, 250));
    left = await unfinishedWork(store, () => false);
  }
  assert.equal(left, [], "the restarted gateway finished the interrupted work");

  // Every acknowledged write is there.
  const { entries } = openLedgerCollections(store);
  for (const irn of acked.signs) {
    const debit = (await entries.get(billingEntryId("debit", "demo", { subBusinessId: sub, domain: PASSTHROUGH, irn, attemptNumber: 1 }))) as EntryDoc | null;
    assert.is(debit?.state, "confirmed", `${irn}: acknowledged 201, its one debit confirmed`);
  }
  const invoices = store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices);
  for (const id of acked.invoices) assert.ok(await invoices.get(id), `Stored invoice ${id} acknowledged 202 is there`);
  const deposits = store.collection<Deposit>(DEPOSITS_COLLECTION);
  for (const d of acked.deposits) {
    const doc = await deposits.get(d.sessionId);
    assert.ok(doc, `deposit ${d.sessionId} acknowledged 201 is there`);
    if (d.status !== "received") assert.is(doc!.status, d.status, `deposit ${d.sessionId} as answered`);
  }

  // The money: balance = opening − debits + reversals + credits, one debit per billing identity; deposits once.
  const config = loadConfig({ raw, env: {} });
  const snapshot = await readStores(store, config, { signed: sim.state.signedIrns(), transmitted: sim.state.transmittedIrns(), calls: {} });
  const ledgers = checkLedgers(snapshot);
  assert.ok(ledgers.debits >= acked.signs.length);
  const collected = checkDeposits(snapshot);
  checkCollectionWallets(snapshot);
  process.stdout.write(`killed mid-load: ${total} acknowledged (${acked.signs.length} signs, ${acked.invoices.length} intakes, ${acked.deposits.length} deposits); ledger ${JSON.stringify(ledgers)}; deposits ${JSON.stringify(collected)}\n`);
});

test.run();

// --- Internal helpers ---

async function _setup(url: string): Promise<{ sub: string; storedSub: string; accounts: string[] }> {
  const onboard = await httpCall(url, "/sub-businesses", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "kill-onboard-0001", "content-type": "application/json" },
    body: JSON.stringify({ regulatorCredentials: { email: DEMO.email, password: DEMO.password } }),
  });
  assert.is(onboard.status, 201, onboard.text);
  // The Stored demo host is its own business's (one approved domain per business), with its own taxpayer.
  const onboardStored = await httpCall(url, "/sub-businesses", {
    method: "POST",
    host: STORED,
    headers: { "x-api-key": STORED_KEY, "x-idempotency-key": "kill-onboard-stored-0001", "content-type": "application/json" },
    body: JSON.stringify({ regulatorCredentials: { email: STORED_DEMO.email, password: STORED_DEMO.password } }),
  });
  assert.is(onboardStored.status, 201, onboardStored.text);
  const accounts: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await httpCall(url, "/api/v1/virtual-account", {
      method: "POST",
      host: COLLECTIONS,
      headers: { authorization: `Bearer ${BEARER_DEMO}`, "x-idempotency-key": `kill-va-${i}-0001`, "content-type": "application/json" },
      body: JSON.stringify({ account_type: "multi_use", account_name: `Kill ${i}`, source_reference: `kill-va-${i}` }),
    });
    assert.is(res.status, 201, res.text);
    accounts.push((res.json() as { data: { accountNumber: string } }).data.accountNumber);
  }
  const idOf = (r: typeof onboard) => (r.json() as { gatewaySubBusinessId: string }).gatewaySubBusinessId;
  return { sub: idOf(onboard), storedSub: idOf(onboardStored), accounts };
}

function _sign(url: string, sub: string, no: string) {
  return httpCall(url, "/api/v1/invoice/sign", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": sub, "x-idempotency-key": `kill-sign-${no}`, "x-attempt-number": "1", "content-type": "application/json" },
    body: JSON.stringify(demoInvoice(no)),
  });
}

function _submit(url: string, sub: string, no: string) {
  return httpCall(url, "/api/v1/invoice/sign", {
    method: "POST",
    host: STORED,
    headers: { "x-api-key": STORED_KEY, "x-sub-business-id": sub, "x-idempotency-key": `kill-intake-${no}`, "content-type": "application/json" },
    body: JSON.stringify(storedDemoInvoice(`S${no}`)),
  });
}

function _deposit(url: string, accountNumber: string, amount: number) {
  return httpCall(url, "/api/v1/sandbox/virtual-account/deposit", {
    method: "POST",
    host: COLLECTIONS,
    headers: { authorization: `Bearer ${BEARER_DEMO}`, "content-type": "application/json" },
    body: JSON.stringify({ account_number: accountNumber, amount, sender_name: "Ada Payer", sender_account_number: "0123456789", sender_bank: "Test Bank" }),
  });
}
