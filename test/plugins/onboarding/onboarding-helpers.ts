/**
 * Shared helpers of the onboarding tests: a gateway with the onboarding plugin on the embedded
 * memory stores (the document store is kept so tests can read every stored document raw), the
 * regulator simulator over real HTTP, a real-HTTP client for `listen()`, and fault bodies that make
 * the simulator serve a changed regulator identity (drift).
 */
import { request } from "node:http";
import * as assert from "uvu/assert";
import { CATALOG, type GwCode } from "../../../core/errors/catalog.ts";
import { expectProblem as supportExpectProblem } from "../../support/assertions.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { Doc, DocumentStore, IdentityAttestor } from "../../../adapters/ports.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import type { GatewayPlugin } from "../../../core/plugin.ts";
import { plugins } from "../../../plugins/index.ts";
import { createOnboardingPlugin, type OnboardingOptions } from "../../../plugins/onboarding/plugin.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { withStoreFaults, type StoreFaultHook } from "../../support/store-faults.ts";
import { startDemoSimulator, startTestSimulator } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export { ADMIN_KEY, DEMO_KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED } from "../../support/gateway.ts";

/** The demo taxpayers (config/regulator-fixtures.json). */
export const TAXPAYER = {
  email: "taxpayer@demo.ng",
  password: "demo-password-1",
  entityId: "0b4e6f2a-5c1d-4e8b-9a3f-7d2c1e0f9a11",
  entityReference: "ENT-000001",
  businessId: "7f3a9c2e-1b4d-4e6f-8a0b-2c3d4e5f6a01",
  businessName: "Demo Trading Ltd",
  tin: "12345678-0001",
  serviceId: "94ND90NR",
  irnTemplate: "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}",
} as const;

export const MULTI = {
  email: "multi@demo.ng",
  password: "demo-password-2",
  entityId: "1c5f7a3b-6d2e-4f9c-8b4a-8e3d2f1a0b22",
  entityReference: "ENT-000002",
  retail: { id: "8a4b0d3f-2c5e-4f7a-9b1c-3d4e5f6a7b02", name: "Multi Holdings Retail", tin: "22222222-0001", serviceId: "5A7B9C1D" },
  logistics: { id: "9b5c1e4a-3d6f-4a8b-8c2d-4e5f6a7b8c03", name: "Multi Holdings Logistics", tin: "22222222-0002", serviceId: "6B8C0D2E" },
} as const;

/** Every demo and test-fixture taxpayer password and e-mail: none may ever be stored or logged. */
export const ALL_TAXPAYER_SECRETS = [
  "taxpayer@demo.ng", "demo-password-1", "multi@demo.ng", "demo-password-2", "inactive@demo.ng", "demo-password-3",
  "notemplate@demo.ng", "demo-password-4", "unlinked@demo.ng", "demo-password-5",
  "solo@test.ng", "test-password-solo", "multi@test.ng", "test-password-multi", "dup-tin@test.ng", "test-password-dup",
  "noactive@test.ng", "test-password-noactive", "inactive@test.ng", "test-password-inactive",
  "missing-template@test.ng", "test-password-missing", "null-template@test.ng", "test-password-null",
  "long-metadata@test.ng", "test-password-long", "bad-metadata@test.ng", "test-password-bad",
  "unlinked@test.ng", "test-password-unlinked", "ghost@test.ng", "test-password-ghost",
];

/** Quotas high enough for a test file (the management default is 30/60 s per credential). */
export const HIGH_QUOTAS = { limits: { quotas: { management: { limit: 100_000, windowSeconds: 60 } } } };

export interface OnboardingHarness {
  tg: TestGateway;
  sim: RegulatorSimulator;
  /** The raw document store behind the gateway (before the resilience guard). */
  store: DocumentStore;
  /** Names of every collection any plugin opened. */
  collections: Set<string>;
  /** POST/GET with x-api-key (demo by default) on the Pass-through host. */
  post(path: string, body: unknown, key: string | null, init?: { apiKey?: string; host?: string; headers?: Record<string, string> }): Promise<Response>;
  get(path: string, init?: { apiKey?: string; host?: string }): Promise<Response>;
  admin(path: string, body: unknown, key: string, init?: { adminKey?: string | null; host?: string }): Promise<Response>;
  /** Every stored document of every collection, as JSON text. */
  dumpStore(): Promise<string>;
  close(): Promise<void>;
}


export interface HarnessOptions {
  fixtures?: "demo" | "test";
  /** The raw document store (default: the embedded memory store). */
  documentStore?: () => Promise<DocumentStore>;
  storeFault?: StoreFaultHook;
  onboarding?: OnboardingOptions;
  patch?: Record<string, unknown>;
  extraPlugins?: GatewayPlugin[];
  /** The attestation port (default: the one the composition root builds from config). */
  attestation?: IdentityAttestor;
}

export async function startOnboardingHarness(options: HarnessOptions = {}): Promise<OnboardingHarness> {
  const sim = options.fixtures === "test" ? await startTestSimulator() : await startDemoSimulator();
  const raw = options.documentStore ? await options.documentStore() : await createSqliteDocumentStore({ file: ":memory:" });
  const store = withStoreFaults(raw, options.storeFault);
  const collections = store.collections;
  const tg = await startTestGateway({
    // The default list may already hold the onboarding plugin: this harness mounts its own instance.
    plugins: [...plugins.filter((p) => p.name !== "onboarding"), createOnboardingPlugin(options.onboarding), ...(options.extraPlugins ?? [])],
    patch: {
      ...HIGH_QUOTAS,
      regulator: { apiKey: "test_api_key", apiSecret: "test_api_secret" },
      ...(options.patch ?? {}),
    },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
    ports: { documentStore: store, ...(options.attestation ? { attestation: options.attestation } : {}) },
  });
  return {
    tg,
    sim,
    store,
    collections,
    post(path, body, key, init = {}) {
      const headers: Record<string, string> = { "x-api-key": init.apiKey ?? DEMO_KEY, ...init.headers };
      if (key !== null) headers["x-idempotency-key"] = key;
      return tg.call(path, { method: "POST", host: init.host ?? PASSTHROUGH, headers, body });
    },
    get(path, init = {}) {
      return tg.call(path, { host: init.host ?? PASSTHROUGH, headers: { "x-api-key": init.apiKey ?? DEMO_KEY } });
    },
    admin(path, body, key, init = {}) {
      const headers: Record<string, string> = { "x-idempotency-key": key };
      if (init.adminKey !== null) headers["x-admin-api-key"] = init.adminKey ?? ADMIN_KEY;
      return tg.call(path, { method: "POST", host: init.host ?? "localhost", headers, body });
    },
    async dumpStore() {
      const out: Record<string, unknown[]> = {};
      for (const name of collections) {
        const items: unknown[] = [];
        let cursor: string | null = null;
        do {
          const page = await raw.collection<Doc>(name).find({}, { limit: 1000, cursor });
          items.push(...page.items);
          cursor = page.nextCursor;
        } while (cursor);
        out[name] = items;
      }
      return JSON.stringify(out);
    },
    async close() {
      await tg.close();
      await sim.close();
    },
  };
}

/** `expectProblem` of test/support with the catalog's retry strategy for `code`; returns the body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<any> {
  return supportExpectProblem(res, status, code, CATALOG[code as GwCode].strategy);
}

export async function expectJson(res: Response, status: number): Promise<any> {
  const text = await res.text();
  assert.is(res.status, status, `expected ${status}, got ${res.status}: ${text}`);
  assert.ok((res.headers.get("content-type") ?? "").startsWith("application/json"), "JSON answer");
  return JSON.parse(text);
}

export const credentials = (email: string, password: string) => ({ regulatorCredentials: { email, password } });

/**
 * A regulator entity answer in the real GetEntity shape (no `service_id`: it lives in the template),
 * for a `custom` fault on route "entity".
 */
export function entityAnswer(entity: {
  id: string;
  reference: string;
  active?: boolean;
  businesses: Array<{ id: string; name: string; tin: string; serviceId: string; irnTemplate?: string | null; active?: boolean }>;
}) {
  return {
    kind: "custom" as const,
    status: 200,
    body: {
      code: 200,
      data: {
        id: entity.id,
        reference: entity.reference,
        custom_settings: null,
        created_at: "2025-01-01T00:00:00Z",
        updated_at: "2025-01-01T00:00:00Z",
        businesses: entity.businesses.map((b) => ({
          id: b.id,
          reference: b.id.slice(0, 8),
          name: b.name,
          tin: b.tin,
          sector: "General Commerce",
          annual_turnover: "1 million - 50 million",
          support_peppol: false,
          irn_template: b.irnTemplate === undefined ? `{{invoice_id}}-${b.serviceId}-{{YYYYMMDD}}` : b.irnTemplate,
          is_active: b.active ?? true,
        })),
        is_active: entity.active ?? true,
        app_reference: "gatehouse",
      },
    },
  };
}

/** The demo taxpayer's entity, with changes (drift). */
export function demoEntity(changes: Partial<{ id: string; reference: string; active: boolean; businessId: string; name: string; tin: string; irnTemplate: string | null; businessActive: boolean }> = {}) {
  return entityAnswer({
    id: changes.id ?? TAXPAYER.entityId,
    reference: changes.reference ?? TAXPAYER.entityReference,
    active: changes.active ?? true,
    businesses: [
      {
        id: changes.businessId ?? TAXPAYER.businessId,
        name: changes.name ?? TAXPAYER.businessName,
        tin: changes.tin ?? TAXPAYER.tin,
        serviceId: TAXPAYER.serviceId,
        irnTemplate: changes.irnTemplate === undefined ? TAXPAYER.irnTemplate : changes.irnTemplate,
        active: changes.businessActive ?? true,
      },
    ],
  });
}

/** A regulator authentication answer naming another entity (entity-ID drift). */
export function authAnswer(entityId: string) {
  return {
    kind: "custom" as const,
    status: 200,
    body: { code: 200, data: { entity_id: entityId, id: "812ac36c-8677-4e8b-bcb9-4c432ed7858f", message: "User logged in", received_at: "2025-01-01T00:00:00Z", status: "200 OK" } },
  };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A real HTTP request to a listening gateway (node:http, so the Host header can be the approved domain). */
export function httpRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        headers: {
          ...headers,
          ...(data !== undefined ? { "content-type": "application/json", "content-length": String(Buffer.byteLength(data)) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
