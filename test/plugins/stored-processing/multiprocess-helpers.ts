/**
 * Stored mode across processes: one Redis and one shared document store (a MongoDB-wire server,
 * jongodb or MONGODB_URI, or an SQLite file on this host: test/support/shared-store.ts), the
 * regulator simulator, an intake gateway in this process (the production composition on those
 * engines, processor off) called over real HTTP, and worker processes — `npm run worker`'s entry
 * (boot/worker.ts) or test/support/stored-worker-process.ts (with crash points) — on the same config.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as assert from "uvu/assert";
import { ledgerBalanced } from "../../support/ledger.ts";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import type { DocumentStore } from "../../../adapters/ports.ts";
import { loadFixtures } from "../../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator, type RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { loadConfig } from "../../../config/load.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import { spawnTs, trackChild } from "../../support/child-process.ts";
import { DEMO_RAW, STORED, STORED_BUSINESS, STORED_KEY, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { MongoServerHandle } from "../../support/mongo-server.ts";
import { createInvoiceGatewayClient, type IntakeDocument } from "../../../client/index.ts";
import type { RedisServerHandle } from "../../support/redis-server.ts";
import { mongoSharedStore, type SharedStore } from "../../support/shared-store.ts";
import { DEMO, demoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
export const OPENING_KOBO = 100_000_000;
export const FEE_KOBO = 5_000;

export interface Infra {
  sim: RegulatorSimulator;
  /** The shared config file the workers run on. */
  configPath: string;
  intake: TestGateway;
  url: string;
  /** A connection of this process to the shared store (inspection). */
  store: DocumentStore;
  invoices(): Promise<InvoiceDoc[]>;
  submit(no: string, key: string): Promise<string>;
  /** Ledger totals and the invariant: balance = opening − debits + reversals + credits. */
  ledger(): Promise<{ balanceKobo: number; debits: number; reversals: number }>;
  close(): Promise<void>;
}

export interface InfraOptions {
  autoTransmit?: boolean;
  processor?: Record<string, unknown>;
}

/** The infrastructure on a MongoDB-wire server (a fresh database on it). */
export function startInfra(name: string, redis: RedisServerHandle, mongo: MongoServerHandle, options: InfraOptions = {}): Promise<Infra> {
  return startInfraOn(name, redis, mongoSharedStore(mongo), options);
}

/** The infrastructure on a shared store (MongoDB-wire or an SQLite file). */
export async function startInfraOn(name: string, redis: RedisServerHandle, shared: SharedStore, options: InfraOptions = {}): Promise<Infra> {
  const sim = await startRegulatorSimulator({
    fixtures: loadFixtures(join(ROOT, "config/regulator-fixtures.json")),
    credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" },
  });
  const dir = mkdtempSync(join(tmpdir(), `gatehouse-${name}-`));
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.storage = shared.storage;
  raw.coordination = { driver: "redis", url: redis.url, keyPrefix: `${name}${process.pid}:` };
  // The default regulator timeout: on a loaded machine a shorter one turns slow answers into (correctly) frozen invoices.
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: sim.url, LIVE: sim.url } };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  raw.log = { level: "warn", format: "json" };
  raw.limits = {
    quotas: { sign: { limit: 100_000, windowSeconds: 60 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } },
    admission: { perClient: 100_000, windowSeconds: 1 },
  };
  // The Stored demo domain belongs to its own business (one domain per business): find it by mode.
  if (options.autoTransmit)
    for (const business of raw.businesses)
      if (business.gateway) business.gateway.domains = business.gateway.domains.map((d: Record<string, unknown>) => (d.mode === "stored" ? { ...d, autoTransmit: true } : d));
  raw.stored = { processor: { pollMs: 50, backoffBaseMs: 50, backoffMaxMs: 500, heartbeatMs: 200, concurrency: 4, ...options.processor } };
  const configPath = join(dir, "worker.json");
  writeFileSync(configPath, JSON.stringify(raw));
  // The intake gateway: same engines, no processor (the workers do the processing).
  const intakeConfig = loadConfig({ raw: { ...raw, stored: { processor: { enabled: false } } }, env: {} });
  const intake = await startTestGateway({ config: intakeConfig, regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url } });
  const server = await intake.listen();
  const store = await shared.open();
  const ledger = createDocumentLedger({ store, openingBalances: { [STORED_BUSINESS]: OPENING_KOBO } });

  // The merchant's side goes through the merchant client (docs/client.md).
  const merchant = createInvoiceGatewayClient({ baseUrl: server.url, host: STORED, apiKey: STORED_KEY });
  const onboard = await merchant.subBusinesses.onboard(
    { regulatorCredentials: { email: DEMO.email, password: DEMO.password } },
    { idempotencyKey: `${name}-onboard-0001` },
  );
  assert.is(onboard.status, 201);

  return {
    sim,
    configPath,
    intake,
    url: server.url,
    store,
    async invoices() {
      return (await store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices).find({}, { limit: 1000 })).items;
    },
    async submit(no, key) {
      const res = await merchant.stored.submit(DEMO.businessId, demoInvoice(no) as IntakeDocument, { idempotencyKey: key });
      assert.is(res.status, 202);
      return res.data.invoiceId;
    },
    ledger: () => ledgerBalanced(ledger, STORED_BUSINESS, OPENING_KOBO, FEE_KOBO),
    async close() {
      await intake.close();
      await store.close();
      await sim.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface WorkerChild {
  child: ChildProcess;
  /** Resolves with the worker's first line once its workers run. */
  ready: Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** SIGTERM, then the exit. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `npm run worker` (boot/worker.ts) on the config, or the test entry with a crash point, run as
 * `npm run worker` runs it: one node process (spawnTs), so SIGTERM reaches the worker itself.
 */
export function spawnWorker(configPath: string, crashAt?: "after-debit" | "after-sign" | "none"): WorkerChild {
  const child =
    crashAt === undefined ? spawnTs("boot/worker.ts", ["--config", configPath]) : spawnTs("test/support/stored-worker-process.ts", [configPath, crashAt]);
  trackChild(child);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  // "close": the exit and all of the output, so a failed assertion can show the whole of it.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("close", (code, signal) => resolve({ code, signal })));
  const ready = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker did not start:\n${out}`)), 30_000);
    const check = () => {
      const line = out.split("\n").find((l) => l.startsWith("WORKER ") || l.startsWith("Gatehouse worker running"));
      if (line) {
        clearTimeout(timer);
        resolve(line);
      }
    };
    child.stdout.on("data", check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before it started:\n${out}`));
    });
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    exited,
    output: () => out,
    stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}

/** Polls until `check` holds (bounded); `state` describes what was seen when it did not. */
export async function eventually(what: string, check: () => Promise<boolean>, timeoutMs = 60_000, state?: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs} ms${state ? `; ${await state()}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Invoice statuses and last error codes, counted (what a stuck wait reports). */
export async function statusSummary(infra: Infra): Promise<string> {
  const counts: Record<string, number> = {};
  for (const d of await infra.invoices()) {
    const k = `${d.status}${d.lastError ? `:${d.lastError.code}` : ""}`;
    counts[k] = (counts[k] ?? 0) + 1;
  }
  return JSON.stringify(counts);
}
