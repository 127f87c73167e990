/**
 * Shared helpers of the signing and transmission tests: a gateway with the onboarding, signing and
 * transmission plugins on the embedded memory store, the real document ledger behind a
 * fault-injecting wrapper, the regulator simulator over real HTTP, and a represented business
 * onboarded through the gateway (the demo taxpayer).
 */
import * as assert from "uvu/assert";
import { ledgerBalanced } from "../../support/ledger.ts";
import { CATALOG, type GwCode } from "../../../core/errors/catalog.ts";
import { expectProblem as supportExpectProblem } from "../../support/assertions.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import { createFaultInjectingLedger, type FaultInjectingLedger } from "../../../adapters/billing/faults.ts";
import { withStoreFaults, type StoreFaultHook } from "../../support/store-faults.ts";
import type { DocumentStore } from "../../../adapters/ports.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { plugins } from "../../../plugins/index.ts";
import { createOnboardingPlugin } from "../../../plugins/onboarding/plugin.ts";
import { createSigningPlugin, type SigningOptions } from "../../../plugins/signing/plugin.ts";
import { createTransmissionPlugin, type TransmissionPluginOptions } from "../../../plugins/transmission/plugin.ts";
import { DEMO_KEY, PASSTHROUGH, startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { demoInvoice, startDemoSimulator } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export { ADMIN_KEY, DEMO_KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED } from "../../support/gateway.ts";
export { demoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export const SUB = "7f3a9c2e-1b4d-4e6f-8a0b-2c3d4e5f6a01";
export const OPENING_KOBO = 100_000_000; // NGN 1,000,000.00
export const FEE_KOBO = 5_000; // NGN 50.00

export interface SigningHarness {
  tg: TestGateway;
  sim: RegulatorSimulator;
  store: DocumentStore;
  billing: FaultInjectingLedger;
  sign(doc: unknown, init?: { key?: string | null; attempt?: number | string | null; sub?: string | null; host?: string; apiKey?: string }): Promise<Response>;
  transmit(irn: string, body?: unknown, init?: { key?: string; sub?: string | null; host?: string }): Promise<Response>;
  call(method: string, path: string, init?: { body?: unknown; sub?: string | null; host?: string; headers?: Record<string, string> }): Promise<Response>;
  /** Asserts the ledger balances: opening − debits + reversals + credits = balance; returns the wallet. */
  ledgerBalanced(): Promise<{ balanceKobo: number; debits: number; reversals: number }>;
  close(): Promise<void>;
}

export async function startSigningHarness(
  options: { signing?: SigningOptions; transmission?: TransmissionPluginOptions; patch?: Record<string, unknown>; storeFault?: StoreFaultHook } = {},
): Promise<SigningHarness> {
  const sim = await startDemoSimulator();
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  // The gateway's store may fail on purpose (storeFault); the ledger's own store never does.
  const store = withStoreFaults(raw, options.storeFault);
  const billing = createFaultInjectingLedger(createDocumentLedger({ store: raw, openingBalances: { demo: OPENING_KOBO, other: 0 } }));
  const own = new Set(["onboarding", "signing", "transmission"]);
  const tg = await startTestGateway({
    plugins: [
      ...plugins.filter((p) => !own.has(p.name)),
      createOnboardingPlugin(),
      createSigningPlugin(options.signing),
      createTransmissionPlugin(options.transmission),
    ],
    patch: {
      limits: { quotas: { management: { limit: 100_000, windowSeconds: 60 }, sign: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } } },
      regulator: { apiKey: "test_api_key", apiSecret: "test_api_secret", timeoutMs: 1_500 },
      ...(options.patch ?? {}),
    },
    regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url },
    ports: { documentStore: store, billing },
  });
  // Onboard the demo taxpayer through the gateway.
  const onboard = await tg.call("/sub-businesses", {
    method: "POST",
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": "onboard-signing-0001" },
    body: { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } },
  });
  assert.is(onboard.status, 201, await onboard.clone().text());

  const h: SigningHarness = {
    tg,
    sim,
    store,
    billing,
    sign(doc, init = {}) {
      const headers: Record<string, string> = { "x-api-key": init.apiKey ?? DEMO_KEY };
      if (init.key !== null) headers["x-idempotency-key"] = init.key ?? "sign-key-0001";
      if (init.sub !== null) headers["x-sub-business-id"] = init.sub ?? SUB;
      if (init.attempt !== null && init.attempt !== undefined) headers["x-attempt-number"] = String(init.attempt);
      return tg.call("/api/v1/invoice/sign", { method: "POST", host: init.host ?? PASSTHROUGH, headers, body: doc });
    },
    transmit(irn, body = {}, init = {}) {
      const headers: Record<string, string> = { "x-api-key": DEMO_KEY };
      if (init.key) headers["x-idempotency-key"] = init.key;
      if (init.sub !== null) headers["x-sub-business-id"] = init.sub ?? SUB;
      return tg.call(`/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, { method: "POST", host: init.host ?? PASSTHROUGH, headers, body });
    },
    call(method, path, init = {}) {
      const headers: Record<string, string> = { "x-api-key": DEMO_KEY, ...init.headers };
      if (init.sub !== null && init.sub !== undefined) headers["x-sub-business-id"] = init.sub;
      return tg.call(path, { method, host: init.host ?? PASSTHROUGH, headers, body: init.body });
    },
    ledgerBalanced: () => ledgerBalanced(billing, "demo", OPENING_KOBO, FEE_KOBO),
    async close() {
      await tg.close();
      await sim.close();
    },
  };
  return h;
}

/** An invoice of the demo business with that invoice number. */
export function invoice(no: string, overrides: Record<string, unknown> = {}) {
  return demoInvoice(no, overrides);
}

export const irnOf = (no: string) => `${no}-94ND90NR-20240611`;

/** `expectProblem` of test/support with the catalog's retry strategy for `code`; returns the body. */
export async function expectProblem(res: Response, status: number, code: string): Promise<any> {
  return supportExpectProblem(res, status, code, CATALOG[code as GwCode].strategy);
}
