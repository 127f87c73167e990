/**
 * A document-store outage behind every invoice-gateway route (Pass-through and Stored domains), every
 * operator route under /admin and the health routes: each answer is a contract answer (spec §7.11:
 * a structured 503 with a GW_* code of the catalog, problem+json, Retry-After when the code carries
 * one), never 500 GW_INTERNAL_ERROR, never a stack trace. Routes that can answer without the store
 * (liveness, readiness, the cached dependency snapshot, a regulator resource list) keep answering.
 *
 * The gateway is the production composition (composeGateway) with every plugin, on the embedded
 * memory store behind a fault switch, the regulator simulator over real HTTP, and the demo taxpayer
 * onboarded through the gateway before the outage (so routes have data: a represented business, a
 * Pass-through signed IRN, a Stored invoice).
 *
 * Only what the handlers use goes away. The tenant directory lives in the same store and the auth
 * stage reads it on every request (a key check is a count on the credential's record, then a read
 * when it changed), so those calls — `count`/`countNow`/`get` on `directory_credentials` — keep
 * answering, and domain records are cached (warmed before the outage) for the whole file; every
 * other call (plugin collections, the ledger, the outbox, the directory's other collections the
 * Admin API reads and writes) fails. Otherwise the auth stage would answer 503
 * GW_TENANT_AUTHORIZATION_UNAVAILABLE before any handler ran, and the test would prove nothing about
 * the handlers: an auth-stage code is therefore a failure here. The circuit's thresholds are raised
 * so that the failures do not open the document store's circuit (an open circuit refuses the
 * directory's calls too, which again stops requests before the handlers).
 *
 * Three outages, one gateway each:
 * - "fails": every call throws at once (the guard turns it into DependencyUnavailableError), on the
 *   embedded store's own kind (its synchronous fast path included);
 * - "hangs": every call hangs; the store is declared remote so the per-call deadline
 *   (`dependencies.storeTimeoutMs`) applies, and the guard answers DependencyUnavailableError
 *   ("timeout") when it passes;
 * - "mid-request": the store goes down after the route's k-th store call, for every k up to the
 *   number of calls the route makes (calls are attributed to the request by async context, so the
 *   background workers are unaffected); every answer is a success or a catalog problem, never 500.
 *
 * Diagnostics: OUTAGE_REPORT=1 prints one line per route and outage at the end, OUTAGE_TRACE=1 each
 * mid-request answer, SIM_LOG=1 the simulator's calls.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { createPolicyRegistry } from "../../adapters/policies.ts";
import type { Doc, DocumentStore } from "../../adapters/ports.ts";
import { signDelivery } from "../../adapters/regulator/simulator/inbound.ts";
import type { RegulatorSimulator } from "../../adapters/regulator/simulator/server.ts";
import { DIRECTORY_COLLECTIONS } from "../../core/directory-store.ts";
import { CATALOG, type CatalogEntry, type GwCode } from "../../core/errors/catalog.ts";
import { plugins } from "../../plugins/index.ts";
import { REQUEST_ID_UUID } from "../support/assertions.ts";
import { ADMIN_KEY, DEMO_KEY, OTHER, PASSTHROUGH, STORED, startTestGateway, type TestGateway } from "../support/gateway.ts";
import { callOverHttp } from "../support/over-http.ts";
import { DEMO, STORED_DEMO, demoInvoice, startDemoSimulator, storedDemoInvoice } from "../adapters/regulator/simulator/simulator-helpers.ts";

const SUB = DEMO.businessId;
const STORED_SUB = STORED_DEMO.businessId;
/** The represented business of the demo business owning `host` (one approved domain per business). */
const subOf = (host: string) => (host === STORED ? STORED_SUB : SUB);
const ADMIN_HOST = "localhost";
const REGULATOR_SECRET = "test_api_secret";
const STORE_TIMEOUT_MS = 300;
const irnOf = (no: string) => `${no}-${DEMO.serviceId}-20240611`;

// ---------------------------------------------------------------------------
// The fault switch
// ---------------------------------------------------------------------------

type Outage = "off" | "fail" | "hang";

/** The calls the auth stage makes on every request (core/directory.ts `authenticate`). */
const AUTH_CALLS = new Set(["count", "countNow", "get"]);

/** Whether a store call is part of the outage: everything except the auth stage's key checks. */
function inOutage(collection: string, method: string): boolean {
  if (collection === DIRECTORY_COLLECTIONS.credentials && AUTH_CALLS.has(method)) return false;
  return true;
}

interface Switch {
  outage: Outage;
  /** Store calls failed or hung since the switch was last reset, by `collection.method`. */
  hit: Map<string, number>;
  /** Hung calls, released (rejected) when the outage ends. */
  hung: Array<(e: Error) => void>;
}

function newSwitch(): Switch {
  return { outage: "off", hit: new Map(), hung: [] };
}

/**
 * A request during which the store goes down mid-way: its first `failFrom` outage-eligible store
 * calls are served, every later one fails (until `done`). Calls are attributed to the request by
 * async context, so the background workers' calls are not counted or failed.
 */
interface MidRequestOutage {
  failFrom: number;
  count: number;
  done: boolean;
  /** `collection.method` of the calls failed. */
  failed: string[];
}

const requestScope = new AsyncLocalStorage<MidRequestOutage>();

/** Whether this call fails: a whole-store outage, or a mid-request one that has started. */
function faulted(sw: Switch, collection: string, method: string): boolean {
  if (!inOutage(collection, method)) return false;
  if (sw.outage !== "off") return true;
  const scope = requestScope.getStore();
  if (!scope || scope.done) return false;
  scope.count += 1;
  if (scope.count <= scope.failFrom) return false;
  scope.failed.push(`${collection}.${method}`);
  return true;
}

function setOutage(sw: Switch, outage: Outage): void {
  sw.outage = outage;
  if (outage === "off") for (const release of sw.hung.splice(0)) release(new Error("store outage over"));
}

/**
 * The raw store behind a switch. `kind` overrides the store's kind: a kind the composition root does
 * not know as in-process gets the configured per-call deadline (a hang then ends as a timeout).
 */
function switchedStore(raw: DocumentStore, sw: Switch, kind?: string): DocumentStore {
  const note = (collection: string, method: string) => {
    const k = `${collection}.${method}`;
    sw.hit.set(k, (sw.hit.get(k) ?? 0) + 1);
  };
  return {
    kind: kind ?? raw.kind,
    collection<T extends Doc>(name: string, spec?: Parameters<DocumentStore["collection"]>[1]) {
      const inner = raw.collection<T>(name, spec);
      return new Proxy(inner, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== "function" || typeof prop !== "string") return value;
          if (prop.endsWith("Now")) {
            // The embedded store's synchronous fast path: fails as its operation does (never hangs).
            return (...args: unknown[]) => {
              if (faulted(sw, name, prop)) {
                note(name, prop);
                throw new Error("injected store failure");
              }
              return (value as (...a: unknown[]) => unknown).apply(target, args);
            };
          }
          return (...args: unknown[]) => {
            if (faulted(sw, name, prop)) {
              note(name, prop);
              if (sw.outage !== "hang") return Promise.reject(new Error("injected store failure"));
              return new Promise((_, reject) => sw.hung.push(reject));
            }
            return (value as (...a: unknown[]) => unknown).apply(target, args);
          };
        },
      });
    },
    ping: () => (sw.outage === "off" ? raw.ping() : Promise.reject(new Error("injected store failure"))),
    close: () => raw.close(),
  };
}

// ---------------------------------------------------------------------------
// The gateway and its data
// ---------------------------------------------------------------------------

interface World {
  tg: TestGateway;
  sw: Switch;
  /** A Stored invoice handed over before the outage. */
  invoiceId: string;
  /** An IRN signed in Pass-through before the outage. */
  irn: string;
  /** This world's invoice number for `n`. */
  no(n: string): string;
}

const sim: RegulatorSimulator = await startDemoSimulator(process.env.SIM_LOG ? { log: (e, f) => console.error(e, JSON.stringify(f)) } : {});

async function startWorld(label: string, kind?: string): Promise<World> {
  const sw = newSwitch();
  // Invoice numbers of this world (the simulator is shared and signs an IRN once).
  const no = (n: string) => `${label.slice(0, 1).toUpperCase()}${n}`;
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  const tg = await startTestGateway({
    plugins,
    // Failures must not open the document store's circuit: it guards the directory's calls too.
    policies: createPolicyRegistry({ minimumCalls: 1_000_000 }),
    patch: {
      limits: {
        quotas: {
          management: { limit: 100_000, windowSeconds: 60 },
          sign: { limit: 100_000, windowSeconds: 60 },
          default: { limit: 100_000, windowSeconds: 60 },
        },
      },
      regulator: { apiKey: "test_api_key", apiSecret: REGULATOR_SECRET, timeoutMs: 2_000 },
      dependencies: { storeTimeoutMs: STORE_TIMEOUT_MS },
      // Domain records stay cached for the whole file (warmed before the outage).
      directory: { domainCacheTtlMs: 3_600_000 },
      stored: { processor: { pollMs: 20, backoffBaseMs: 20, backoffMaxMs: 200, heartbeatMs: 100 } },
    },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
    ports: { documentStore: switchedStore(raw, sw, kind) },
  });
  // Every call goes over a real socket: the answers below are what a merchant's client reads.
  await callOverHttp(tg);

  // Onboard the demo taxpayer through the gateway.
  const onboard = await tg.call("/sub-businesses", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": `onboard-${label}-0001` },
    body: { regulatorCredentials: { email: DEMO.email, password: DEMO.password } },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());
  // The Stored demo host is its own business's: it represents its own taxpayer.
  const onboardStored = await tg.call("/sub-businesses", {
    method: "POST",
    host: STORED,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": `onboard-stored-${label}-0001` },
    body: { regulatorCredentials: { email: STORED_DEMO.email, password: STORED_DEMO.password } },
  });
  assert.is(onboardStored.status, 201, await onboardStored.clone().text());

  // A Pass-through sign: an IRN bound to the represented business.
  const signed = await tg.call("/api/v1/invoice/sign", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": SUB, "x-idempotency-key": `sign-${label}-0001` },
    body: demoInvoice(no("PT001")),
  });
  assert.ok(signed.status >= 200 && signed.status < 300, `Pass-through sign: ${signed.status} ${await signed.clone().text()}`);

  // A Stored invoice, processed to a final state.
  const intake = await tg.call("/api/v1/invoice/sign", {
    method: "POST",
    host: STORED,
    headers: { "x-api-key": DEMO_KEY, "x-sub-business-id": STORED_SUB, "x-idempotency-key": `intake-${label}-0001` },
    body: storedDemoInvoice(no("ST001")),
  });
  assert.is(intake.status, 202, await intake.clone().text());
  const invoiceId = ((await intake.json()) as { invoiceId: string }).invoiceId;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await tg.call(`/invoices/${invoiceId}`, { host: STORED, headers: { "x-api-key": DEMO_KEY } });
    const inv = (await res.json()) as { status: string };
    if (["signed", "transmitted", "rejected", "frozen"].includes(inv.status)) break;
    if (Date.now() > deadline) assert.unreachable(`the Stored invoice did not settle: ${inv.status}`);
    await new Promise((r) => setTimeout(r, 25));
  }

  // Warm the domain cache of every host the routes are called on (and prove the reads work).
  for (const host of [PASSTHROUGH, STORED]) {
    assert.is((await tg.call("/sub-businesses", { host, headers: { "x-api-key": DEMO_KEY } })).status, 200);
  }
  assert.is((await tg.call("/admin/businesses", { host: ADMIN_HOST, headers: { "x-admin-api-key": ADMIN_KEY } })).status, 200);

  return { tg, sw, invoiceId, irn: irnOf(no("PT001")), no };
}

// ---------------------------------------------------------------------------
// The routes
// ---------------------------------------------------------------------------

interface RouteCall {
  /** "METHOD /path on host": the test's name. */
  name: string;
  method: string;
  path: string;
  host: string;
  headers?: Record<string, string>;
  body?: unknown;
  /** A raw body (already serialised). */
  rawBody?: string;
  /** Statuses the route may answer without the store (default: none, it must answer 503). */
  without?: number[];
  /** The codes the contract gives this route when its store is down (default: DEPENDENCY_503). */
  codes?: readonly GwCode[];
}

/** 503 codes that say "a dependency of this operation is unavailable" (spec §7.6, §7.9, §7.10). */
const DEPENDENCY_503: readonly GwCode[] = [
  "GW_MANAGEMENT_SERVICE_UNAVAILABLE",
  "GW_BILLING_SERVICE_UNAVAILABLE",
  "GW_INVOICE_INTAKE_UNAVAILABLE",
  "GW_ONBOARDING_SERVICE_INVALID_RESPONSE",
  "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE",
  "GW_INVOICE_OPERATION_UNAVAILABLE",
];

/** Codes of the stages before the handler: seeing one means the handler was never reached. */
const STAGE_CODES: readonly GwCode[] = [
  "GW_TENANT_AUTHORIZATION_UNAVAILABLE",
  "GW_AUTH_CONTEXT_UNAVAILABLE",
  "GW_DOMAIN_REGISTRY_UNAVAILABLE",
  "GW_TENANT_MODE_UNAVAILABLE",
];

/** Ids of things that do not exist (the same for every request, so each route keeps its name). */
const REVIEW_ID = randomUUID();
const ALERT_ID = randomUUID();
const OPERATION_ID = randomUUID();

let keySeq = 0;
const key = (what: string) => `outage-${what}-${++keySeq}-${randomUUID().slice(0, 8)}`;

function routes(w: World, tag = ""): RouteCall[] {
  /** This world's invoice number for `n`, fresh per `tag` (the regulator signs an IRN once). */
  const no = (n: string) => w.no(`${n}${tag}`);
  const api = (host: string, extra: Record<string, string> = {}) => ({ "x-api-key": DEMO_KEY, ...extra });
  const admin = (extra: Record<string, string> = {}) => ({ "x-admin-api-key": ADMIN_KEY, ...extra });
  const list: RouteCall[] = [];
  const add = (r: Omit<RouteCall, "name">) => list.push({ ...r, name: `${r.method} ${r.path} on ${r.host}` });

  // --- Invoice gateway, both modes: represented businesses ---
  for (const host of [PASSTHROUGH, STORED]) {
    add({
      method: "POST", path: "/sub-businesses", host,
      headers: api(host, { "x-idempotency-key": key("onboard") }),
      body: { regulatorCredentials: { email: "multi@demo.ng", password: "demo-password-2" }, tin: "22222222-0001" },
      codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE", "GW_ONBOARDING_SERVICE_INVALID_RESPONSE"],
    });
    add({ method: "GET", path: "/sub-businesses", host, headers: api(host), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
    const SUB = subOf(host);
    add({ method: "GET", path: `/sub-businesses/${SUB}`, host, headers: api(host), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
    add({ method: "GET", path: `/sub-businesses/${SUB}/identity-versions`, host, headers: api(host), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
    add({
      method: "POST", path: `/sub-businesses/${SUB}/identity-reverification`, host,
      headers: api(host, { "x-idempotency-key": key("reverify") }),
      body: { regulatorCredentials: { email: DEMO.email, password: DEMO.password } },
      codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
    });
    add({
      method: "POST", path: `/sub-businesses/${SUB}/reg-crypto-material`, host,
      headers: api(host, { "x-idempotency-key": key("rotate") }),
      body: { publicKey: "cHVibGljLWtleQ==", certificate: "Y2VydGlmaWNhdGU=" },
      codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE", "GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE"],
    });
    // Always 503 GW_INVOICE_OPERATION_UNAVAILABLE (spec §4.2 rule 1), with or without the store.
    add({ method: "GET", path: `/api/v1/invoice/inbound/${w.irn}/download`, host, headers: api(host, { "x-sub-business-id": SUB }), codes: ["GW_INVOICE_OPERATION_UNAVAILABLE"] });
    add({
      method: "POST", path: `/api/v1/invoice/inbound/${w.irn}/acknowledge`, host,
      headers: api(host, { "x-sub-business-id": SUB, "x-idempotency-key": key("ack") }), body: {},
      codes: ["GW_INVOICE_OPERATION_UNAVAILABLE"],
    });
  }

  // --- Invoice gateway, Pass-through ---
  const pt = (extra: Record<string, string> = {}) => api(PASSTHROUGH, { "x-sub-business-id": SUB, ...extra });
  add({
    method: "POST", path: "/api/v1/invoice/sign", host: PASSTHROUGH,
    headers: pt({ "x-idempotency-key": key("sign") }), body: demoInvoice(no("PT002")),
    codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE", "GW_BILLING_SERVICE_UNAVAILABLE"],
  });
  add({ method: "POST", path: "/api/v1/invoice/validate", host: PASSTHROUGH, headers: pt({ "x-idempotency-key": key("validate") }), body: demoInvoice(no("PT003")), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({
    method: "POST", path: "/api/v1/invoice/irn/validate", host: PASSTHROUGH,
    headers: pt({ "x-idempotency-key": key("irn-validate") }),
    body: { invoice_reference: no("PT004"), business_id: SUB, irn: irnOf(no("PT004")) },
    codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
  });
  add({
    method: "POST", path: `/api/v1/invoice/transmit/${w.irn}`, host: PASSTHROUGH,
    headers: pt({ "x-idempotency-key": key("transmit") }), body: {},
    codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
  });
  // A resource list concerns no represented business: the regulator answers it without the store.
  add({ method: "GET", path: "/api/v1/invoice/resources/currencies", host: PASSTHROUGH, headers: api(PASSTHROUGH), without: [200] });
  add({ method: "GET", path: `/api/v1/invoice/confirm/${w.irn}`, host: PASSTHROUGH, headers: pt(), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({ method: "GET", path: `/api/v1/invoice/download/${w.irn}`, host: PASSTHROUGH, headers: pt(), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({
    method: "PATCH", path: `/api/v1/invoice/update/${w.irn}`, host: PASSTHROUGH,
    headers: pt({ "x-idempotency-key": key("update") }), body: { payment_status: "PAID" },
    codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
  });

  // --- Invoice gateway, Stored ---
  const st = (extra: Record<string, string> = {}) => api(STORED, extra);
  add({
    method: "POST", path: "/api/v1/invoice/sign", host: STORED,
    headers: st({ "x-sub-business-id": STORED_SUB, "x-idempotency-key": key("intake") }), body: storedDemoInvoice(no("ST002")),
    codes: ["GW_INVOICE_INTAKE_UNAVAILABLE", "GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
  });
  add({ method: "GET", path: "/invoices", host: STORED, headers: st(), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({ method: "GET", path: `/invoices/${w.invoiceId}`, host: STORED, headers: st(), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({ method: "POST", path: `/invoices/${w.invoiceId}/transmit`, host: STORED, headers: st({ "x-idempotency-key": key("st-transmit") }), body: {}, codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  add({ method: "POST", path: `/invoices/${w.invoiceId}/cancel`, host: STORED, headers: st({ "x-idempotency-key": key("st-cancel") }), body: {}, codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  // The regulator's inbound delivery (HMAC-signed, any host).
  {
    const text = JSON.stringify({
      delivery_id: key("delivery"),
      environment: "TEST",
      buyer_tin: DEMO.tin,
      irn: irnOf(no("IN001")),
      invoice: demoInvoice(no("IN001"), { accounting_customer_party: { ...demoInvoice(no("IN001")).accounting_supplier_party, tin: DEMO.tin } }),
    });
    const ts = Math.floor(Date.now() / 1000);
    add({
      method: "POST", path: "/regulator/inbound-invoices", host: "127.0.0.1",
      headers: { "x-regulator-timestamp": String(ts), "x-regulator-signature": signDelivery(REGULATOR_SECRET, ts, text), "content-type": "application/json" },
      rawBody: text,
      codes: ["GW_INVOICE_INTAKE_UNAVAILABLE", "GW_MANAGEMENT_SERVICE_UNAVAILABLE"],
    });
  }

  // --- Admin API ---
  const a = (method: string, path: string, init: Partial<RouteCall> = {}) =>
    add({ method, path, host: ADMIN_HOST, headers: method === "GET" ? admin() : admin({ "x-idempotency-key": key("admin") }), codes: ["GW_MANAGEMENT_SERVICE_UNAVAILABLE"], ...init });
  // onboarding
  a("GET", "/admin/identity-reviews");
  a("POST", `/admin/sub-businesses/${SUB}/identity-reviews/${REVIEW_ID}/decision`, { body: { decision: "approve" } });
  a("POST", `/admin/sub-businesses/${SUB}/identity-migrations`, { body: { reviewId: REVIEW_ID } });
  // stored-processing
  a("GET", "/admin/invoices");
  a("POST", `/admin/invoices/${w.invoiceId}/resolution`, { body: { outcome: "signed" } });
  // directory
  a("GET", "/admin/businesses");
  a("GET", "/admin/businesses/demo");
  a("GET", "/admin/domains");
  a("GET", `/admin/domains/${PASSTHROUGH}`);
  a("PATCH", `/admin/domains/${OTHER}`, { body: { signFee: 60 } });
  a("POST", `/admin/domains/${OTHER}/mode-change`, { body: { mode: "stored" } });
  a("POST", `/admin/domains/${OTHER}/approval`, { body: {} });
  a("GET", "/admin/keys");
  a("POST", "/admin/keys", { body: { scheme: "gateway", businessId: "demo" } });
  a("GET", "/admin/keys/demo-allowlisted");
  a("POST", "/admin/keys/demo-allowlisted/roll", { body: { oldKeyExpiresAt: new Date(Date.now() + 3_600_000).toISOString() } });
  a("POST", "/admin/keys/demo-allowlisted/revoke", { body: {} });
  a("GET", "/admin/audit");
  // wallets (the ledger is on the document store: 7.11 "billing")
  a("GET", "/admin/wallets/demo", { codes: ["GW_BILLING_SERVICE_UNAVAILABLE", "GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  a("POST", "/admin/wallets/demo/credits", { body: { amount: 10, reference: key("credit") }, codes: ["GW_BILLING_SERVICE_UNAVAILABLE", "GW_MANAGEMENT_SERVICE_UNAVAILABLE"] });
  // frozen operations, alert dead letters, resolutions
  a("GET", "/admin/invoices/frozen");
  a("GET", "/admin/alerts/dead-letters");
  a("POST", `/admin/alerts/dead-letters/${ALERT_ID}/replay`, { body: {} });
  a("POST", `/admin/sign-attempts/${OPERATION_ID}/resolution`, { body: { outcome: "signed" } });
  a("POST", `/admin/transmissions/${OPERATION_ID}/resolution`, { body: { outcome: "transmitted" } });

  // --- Health ---
  add({ method: "GET", path: "/health", host: ADMIN_HOST, without: [200] });
  add({ method: "GET", path: "/health/live", host: ADMIN_HOST, without: [200] });
  // Readiness is local readiness plus the coordination store (up here): not the document store.
  add({ method: "GET", path: "/health/ready", host: ADMIN_HOST, without: [200] });
  // The dependency snapshot is cached and never fans out per request.
  add({ method: "GET", path: "/health/dependencies", host: ADMIN_HOST, headers: admin(), without: [200] });
  add({ method: "GET", path: "/metrics", host: ADMIN_HOST, headers: admin(), without: [200] });
  return list;
}

// ---------------------------------------------------------------------------
// The contract
// ---------------------------------------------------------------------------

async function call(w: World, r: RouteCall): Promise<Response> {
  const headers: Record<string, string> = { ...r.headers };
  let body: unknown = r.rawBody;
  if (body === undefined && r.body !== undefined) body = r.body;
  return w.tg.call(r.path, { method: r.method, host: r.host, headers, body });
}

/** A stack frame, a source position or Node's internals: never in an answer. */
const STACK = /\n\s+at |\bat [\w.<>$]+ \(|node:internal|\.[cm]?[tj]s:\d+/;
/** The store's own failure text: never in an error answer (docs/errors.md: nothing internal). */
const INTERNAL = /injected store failure|DependencyUnavailableError|failed: |Error:/;

function noStackTrace(text: string, summary: string): void {
  const m = STACK.exec(text);
  assert.is(m, null, `no stack trace (${m ? text.slice(Math.max(0, m.index - 120), m.index + 120) : ""}): ${summary}`);
}

function noInternalMessage(text: string, summary: string): void {
  const m = INTERNAL.exec(text);
  assert.is(m, null, `no internal message (${m ? text.slice(Math.max(0, m.index - 120), m.index + 120) : ""}): ${summary}`);
}

/** Asserts `res` is the contract's answer to `r` during the outage; returns a one-line summary. */
async function expectContractAnswer(w: World, r: RouteCall, res: Response): Promise<string> {
  const text = await res.text();
  const summary = `${res.status} ${text.slice(0, 300)}`;
  const ctype = res.headers.get("content-type") ?? "";
  noStackTrace(text, summary);
  if (r.without?.includes(res.status)) {
    assert.ok(res.status < 500, `${summary}`);
    return summary;
  }
  noInternalMessage(text, summary);
  assert.is(res.status, 503, `expected 503 (spec §7.11), got ${summary}`);
  assert.is(ctype, "application/problem+json", `problem+json: ${summary}`);
  assert.is(res.headers.get("cache-control"), "no-store");
  const problem = JSON.parse(text) as Record<string, any>;
  const code = problem.code as GwCode;
  assert.ok(code in CATALOG, `a catalog code: ${code}`);
  assert.is.not(code, "GW_INTERNAL_ERROR");
  assert.not.ok(STAGE_CODES.includes(code), `${code} is a pipeline stage's answer: the handler was not reached (the test's outage is too wide)`);
  assert.is(CATALOG[code].status, 503, `${code} is a 503 code`);
  assert.is(problem.status, 503);
  assert.is(problem.retry?.strategy, CATALOG[code].strategy, "retry.strategy is the catalog's");
  assert.ok((r.codes ?? DEPENDENCY_503).includes(code), `${code} is one of ${(r.codes ?? DEPENDENCY_503).join(", ")}`);
  assert.match(res.headers.get("x-request-id") ?? "", REQUEST_ID_UUID);
  assert.is(problem.requestId, res.headers.get("x-request-id"), "X-Request-ID equals requestId");
  const after = problem.retry?.afterSeconds ?? (CATALOG[code] as CatalogEntry).afterSeconds;
  if (after !== undefined) assert.is(res.headers.get("retry-after"), String(after), "Retry-After header with retry.afterSeconds");
  if (res.headers.has("retry-after")) assert.is(String(problem.retry?.afterSeconds), res.headers.get("retry-after"), "Retry-After repeats retry.afterSeconds");
  const internal = w.tg.logs.find((l) => l.event === "gateway_internal_error" && l.requestId === problem.requestId);
  assert.not.ok(internal, "not logged as an internal error");
  return summary;
}

// ---------------------------------------------------------------------------
// The suites
// ---------------------------------------------------------------------------

const results: Array<{ outage: Outage | "mid"; route: string; summary: string; ok: boolean }> = [];

function defineOutageSuite(outage: Exclude<Outage, "off">, w: World, last: boolean): void {
  const s = suite(`store ${outage === "fail" ? "fails" : "hangs"}`);
  const list = routes(w);

  s.before(() => {
    w.sw.hit.clear();
    setOutage(w.sw, outage);
  });
  s.after(async () => {
    setOutage(w.sw, "off");
    await w.tg.close();
    if (last) await finish();
  });

  s("the outage is real: a handler's store call fails, the auth stage's do not", async () => {
    w.sw.hit.clear();
    const res = await w.tg.call("/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
    await res.text();
    assert.ok(w.sw.hit.size > 0, "the request reached the store and the switch failed it");
    assert.not.ok([...w.sw.hit.keys()].some((k) => k.startsWith(`${DIRECTORY_COLLECTIONS.credentials}.count`)), "key checks are not failed");
  });

  for (const r of list) {
    s(`${outage}: ${r.name}`, async () => {
      const started = Date.now();
      const res = await call(w, r);
      try {
        const summary = await expectContractAnswer(w, r, res);
        results.push({ outage, route: r.name, summary, ok: true });
      } catch (e) {
        results.push({ outage, route: r.name, summary: (e as Error).message, ok: false });
        throw e;
      }
      if (outage === "hang") assert.ok(Date.now() - started < STORE_TIMEOUT_MS * 20, "answered within a bounded time after the deadline");
    });
  }

  s.run();
}

/** Mid-request outages tried per route at most (a route making more store calls is reported). */
const MAX_STEPS = 60;

/**
 * The store goes down in the middle of a request: for k = 0, 1, 2…, the route's first k store calls
 * are served and every later one fails, until k covers every call the route makes. Each answer is a
 * contract answer: a success, or problem+json with a catalog code (the status the catalog gives it)
 * that is not GW_INTERNAL_ERROR, without a stack trace or the store's message. Every request is new
 * (fresh idempotency keys, references and invoice numbers).
 */
function defineMidRequestSuite(w: World, last: boolean): void {
  const s = suite("store goes down mid-request");
  const names = routes(w, "M0").map((r) => r.name);
  s.after(async () => {
    await w.tg.close();
    if (last) await finish();
  });
  let attempt = 0;
  names.forEach((name, i) => {
    s(`mid-request: ${name}`, async () => {
      const seen: string[] = [];
      for (let k = 0; k <= MAX_STEPS; k++) {
        const r = routes(w, `M${++attempt}`)[i]!;
        assert.is(r.name, name);
        const scope: MidRequestOutage = { failFrom: k, count: 0, done: false, failed: [] };
        const res = await requestScope.run(scope, () => call(w, r));
        const text = await res.text();
        scope.done = true;
        const summary = `k=${k} after ${scope.failed[0] ?? "(no failure)"}: ${res.status} ${text.slice(0, 240)}`;
        if (process.env.OUTAGE_TRACE) console.log(`${name} ${summary}`);
        seen.push(`${res.status}${res.headers.get("content-type") === "application/problem+json" ? ` ${(JSON.parse(text) as { code: string }).code}` : ""}`);
        try {
          expectMidRequestAnswer(w, r, res, text, summary);
        } catch (e) {
          results.push({ outage: "mid", route: name, summary: (e as Error).message, ok: false });
          throw e;
        }
        if (scope.failed.length === 0) {
          results.push({ outage: "mid", route: name, summary: `${k} store calls; answers ${[...new Set(seen)].join(", ")}`, ok: true });
          return;
        }
      }
      assert.unreachable(`${name} made more than ${MAX_STEPS} store calls`);
    });
  });
  s.run();
}

function expectMidRequestAnswer(w: World, r: RouteCall, res: Response, text: string, summary: string): void {
  noStackTrace(text, summary);
  if (res.status < 400) return;
  if (r.without?.includes(res.status)) return;
  assert.is(res.headers.get("content-type"), "application/problem+json", `problem+json: ${summary}`);
  const problem = JSON.parse(text) as Record<string, any>;
  const code = problem.code as GwCode;
  assert.ok(code in CATALOG, `a catalog code: ${summary}`);
  assert.is.not(code, "GW_INTERNAL_ERROR", `not an internal error: ${summary}`);
  assert.is(res.status, CATALOG[code].status, `the catalog's status for ${code}: ${summary}`);
  noInternalMessage(text, summary);
  assert.is(problem.requestId, res.headers.get("x-request-id"), "X-Request-ID equals requestId");
  const after = problem.retry?.afterSeconds ?? (CATALOG[code] as CatalogEntry).afterSeconds;
  if (after !== undefined) assert.is(res.headers.get("retry-after"), String(after), `Retry-After with retry.afterSeconds: ${summary}`);
  assert.not.ok(w.tg.logs.some((l) => l.event === "gateway_internal_error" && l.requestId === problem.requestId), `not logged as an internal error: ${summary}`);
}

async function finish(): Promise<void> {
  await sim.close();
  if (process.env.OUTAGE_REPORT)
    for (const r of results) console.log(`${r.ok ? "ok  " : "FAIL"} ${r.outage} ${r.route} :: ${r.summary.replace(/\s+/g, " ").slice(0, 400)}`);
}

// Every world is built before any suite runs (uvu starts running at the first run()).
const failing = await startWorld("fail");
const hanging = await startWorld("hang", "test-remote-store");
const midway = await startWorld("mid");
defineOutageSuite("fail", failing, false);
defineOutageSuite("hang", hanging, false);
defineMidRequestSuite(midway, true);
