/**
 * Shared helpers of the Stored-mode tests: the production composition (composeGateway) listening on
 * a free port and called over real HTTP, the embedded memory store (optionally behind a
 * fault-injecting proxy), the real document ledger behind the fault-injecting wrapper, the regulator
 * simulator over HTTP, a webhook receiver, and the demo taxpayer onboarded through the gateway.
 * Invoice documents come from `demoInvoice()` only (test/adapters/regulator/simulator/simulator-helpers.ts).
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as assert from "uvu/assert";
import { ledgerBalanced } from "../../support/ledger.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import { createFaultInjectingLedger, type FaultInjectingLedger } from "../../../adapters/billing/faults.ts";
import type { DocumentStore } from "../../../adapters/ports.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { CATALOG, type GwCode } from "../../../core/errors/catalog.ts";
import type { RunningServer } from "../../../core/server.ts";
import { plugins } from "../../../plugins/index.ts";
import { createStoredProcessingPlugin, type StoredProcessingOptions } from "../../../plugins/stored-processing/plugin.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import { expectProblem as supportExpectProblem } from "../../support/assertions.ts";
import { DEMO_KEY, DEMO_RAW, STORED, STORED_BUSINESS, startTestGateway, withHostKey, type TestGateway } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";
import { withStoreFaults, type StoreFaultHook } from "../../support/store-faults.ts";
import { DEMO, demoInvoice, startDemoSimulator } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export { ADMIN_KEY, DEMO_KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED, STORED_BUSINESS, STORED_KEY } from "../../support/gateway.ts";
export { DEMO, demoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export const SUB = DEMO.businessId;
export const OPENING_KOBO = 100_000_000; // NGN 1,000,000.00
export const FEE_KOBO = 5_000; // NGN 50.00
export const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;

/** A Stored intake document: demoInvoice(), optionally leaving business_id and irn to the gateway. */
export function intakeInvoice(no: string, options: { gatewayIds?: boolean; overrides?: Record<string, unknown> } = {}): Record<string, any> {
  const doc = demoInvoice(no, options.overrides);
  if (options.gatewayIds) {
    delete doc.business_id;
    delete doc.irn;
    doc.invoice_reference = no;
  }
  return doc;
}

export type StoreFault = StoreFaultHook;

export interface StoredHarnessOptions {
  stored?: StoredProcessingOptions;
  patch?: Record<string, unknown>;
  openingKobo?: number;
  storeFault?: StoreFault;
  /** Configure a webhook receiver as the Stored demo business's gateway.webhook. */
  webhooks?: boolean;
  /** Start the processor (default true). */
  processor?: boolean;
  /** Processor settings over the harness's fast ones (`stored.processor` of the config: leaseMs, backoff…). */
  processorConfig?: Record<string, unknown>;
}

export interface Received {
  headers: Record<string, string>;
  body: string;
  json: { type: string; data: Record<string, any> };
}

export interface StoredHarness {
  tg: TestGateway;
  server: RunningServer;
  sim: RegulatorSimulator;
  store: DocumentStore;
  billing: FaultInjectingLedger;
  /** Deliveries to the webhook receiver (when enabled). */
  received: Received[];
  webhookSecret: string;
  call(method: string, path: string, init?: { body?: unknown; host?: string; headers?: Record<string, string>; apiKey?: string | null }): Promise<Response>;
  intake(doc: unknown, init?: { key?: string | null; sub?: string | null; host?: string; headers?: Record<string, string> }): Promise<Response>;
  invoice(id: string): Promise<Record<string, any>>;
  /** Polls GET /invoices/{id} until `done` holds (bounded). */
  waitFor(id: string, done: (inv: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  raw(id: string): Promise<InvoiceDoc | null>;
  /** The ledger balances (opening − debits + reversals + credits = balance); returns counts. */
  ledger(): Promise<{ balanceKobo: number; debits: number; reversals: number }>;
  close(): Promise<void>;
}

export const HIGH_QUOTAS = {
  limits: {
    quotas: {
      management: { limit: 100_000, windowSeconds: 60 },
      sign: { limit: 100_000, windowSeconds: 60 },
      default: { limit: 100_000, windowSeconds: 60 },
    },
  },
};

export async function startStoredHarness(options: StoredHarnessOptions = {}): Promise<StoredHarness> {
  const sim = await startDemoSimulator();
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const store = options.storeFault ? withStoreFaults(raw, options.storeFault) : raw;
  const opening = options.openingKobo ?? OPENING_KOBO;
  const billing = createFaultInjectingLedger(createDocumentLedger({ store: raw, openingBalances: { demo: opening, [STORED_BUSINESS]: opening, other: 0 } }));
  const received: Received[] = [];
  const webhookSecret = "whsec_" + Buffer.from("stored-webhook-secret-0001").toString("base64");
  let receiver: Server | null = null;
  let receiverUrl = "";
  if (options.webhooks) {
    receiver = createServer((req, res) => {
      void _body(req).then((body) => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(req.headers)) headers[k] = String(v);
        received.push({ headers, body, json: JSON.parse(body) });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver!.listen(0, "127.0.0.1", r));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  }
  const demoGateway = options.webhooks ? { gateway: { ..._demoGateway(), webhook: { url: receiverUrl, secret: webhookSecret } } } : {};
  const tg = await startTestGateway({
    plugins: [...plugins.filter((p) => p.name !== "stored-processing"), createStoredProcessingPlugin(options.stored)],
    patch: {
      ...HIGH_QUOTAS,
      regulator: { apiKey: "test_api_key", apiSecret: "test_api_secret", timeoutMs: 1_500 },
      webhooks: { pollMs: 20 },
      stored: {
        processor: { enabled: options.processor ?? true, pollMs: 20, backoffBaseMs: 20, backoffMaxMs: 200, heartbeatMs: 100, concurrency: 4, ...options.processorConfig },
      },
      ...(options.webhooks ? { businesses: _businessesWith(demoGateway) } : {}),
      ...(options.patch ?? {}),
    },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
    ports: { documentStore: store, billing },
  });
  const server = await tg.listen();

  const call: StoredHarness["call"] = async (method, path, init = {}) => {
    const host = init.host ?? STORED;
    const headers: Record<string, string> = withHostKey(host, { ...(init.apiKey === null ? {} : { "x-api-key": init.apiKey ?? DEMO_KEY }), ...init.headers });
    let body: string | undefined;
    if (init.body !== undefined) {
      body = typeof init.body === "string" ? init.body : JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    const r = await httpCall(server.url, path, { method, host, headers, body });
    const h = new Headers();
    for (const [k, v] of Object.entries(r.headers)) h.set(k, v);
    return new Response(r.text === "" ? null : r.text, { status: r.status, headers: h });
  };

  const onboard = await call("POST", "/sub-businesses", {
    headers: { "x-idempotency-key": "onboard-stored-0001" },
    body: { regulatorCredentials: { email: DEMO.email, password: DEMO.password } },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());

  const h: StoredHarness = {
    tg,
    server,
    sim,
    store: raw,
    billing,
    received,
    webhookSecret,
    call,
    intake(doc, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.key !== null) headers["x-idempotency-key"] = init.key ?? "stored-key-0001";
      if (init.sub !== null) headers["x-sub-business-id"] = init.sub ?? SUB;
      return call("POST", "/api/v1/invoice/sign", { host: init.host ?? STORED, headers, body: doc });
    },
    async invoice(id) {
      const res = await call("GET", `/invoices/${id}`);
      assert.is(res.status, 200, await res.clone().text());
      return (await res.json()) as Record<string, any>;
    },
    async waitFor(id, done, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const inv = await h.invoice(id);
        if (done(inv)) return inv;
        if (Date.now() > deadline) throw new Error(`invoice ${id} did not reach the expected state; last: ${inv.status} ${JSON.stringify(inv.lastError)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    raw: (id) => raw.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices).get(id),
    ledger: () => ledgerBalanced(billing, STORED_BUSINESS, opening, FEE_KOBO),
    async close() {
      await tg.close();
      await sim.close();
      if (receiver) await new Promise((r) => receiver!.close(r));
    },
  };
  return h;
}

/** `expectProblem` with the catalog's retry strategy for `code`; returns the body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<any> {
  return supportExpectProblem(res, status, code, CATALOG[code as GwCode].strategy);
}

export async function accepted(res: Response): Promise<Record<string, any>> {
  assert.is(res.status, 202, await res.clone().text());
  return (await res.json()) as Record<string, any>;
}

// --- Internal helpers ---

function _demoGateway(): Record<string, unknown> {
  return structuredClone((DEMO_RAW.businesses as Array<Record<string, any>>).find((b) => b.id === STORED_BUSINESS)!.gateway) as Record<string, unknown>;
}

function _businessesWith(demoPatch: Record<string, unknown>): unknown[] {
  const businesses = structuredClone(DEMO_RAW.businesses as Array<Record<string, unknown>>);
  const i = businesses.findIndex((b) => b.id === STORED_BUSINESS);
  businesses[i] = { ...businesses[i], ...demoPatch };
  return businesses;
}

function _body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = "";
    req.setEncoding("utf8");
    req.on("data", (c: string) => (s += c));
    req.on("end", () => resolve(s));
  });
}

/** Every collection method of `inner` goes through `fault` first ("before" fails it, "after" fails it after it ran). */
