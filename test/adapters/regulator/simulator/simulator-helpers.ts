/**
 * Shared helpers of the simulator tests: start a simulator on a free port with the demo (or test)
 * fixtures, call it over real HTTP, and build a valid regulator invoice document.
 */
import { fileURLToPath } from "node:url";
import { loadFixtures } from "../../../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
import type { RegulatorSimulator, RegulatorSimulatorOptions } from "../../../../adapters/regulator/simulator/server.ts";

export const DEMO_FIXTURES_PATH = fileURLToPath(new URL("../../../../config/regulator-fixtures.json", import.meta.url));
export const TEST_FIXTURES_PATH = fileURLToPath(new URL("../../../fixtures/regulator-fixtures.test.json", import.meta.url));

export const CREDENTIALS = { apiKey: "test_api_key", apiSecret: "test_api_secret" };
export const AUTH_HEADERS: Record<string, string> = {
  "x-api-key": CREDENTIALS.apiKey,
  "x-api-secret": CREDENTIALS.apiSecret,
};

/** The demo taxpayer's identifiers (config/regulator-fixtures.json). */
export const DEMO = {
  email: "taxpayer@demo.ng",
  password: "demo-password-1",
  entityId: "0b4e6f2a-5c1d-4e8b-9a3f-7d2c1e0f9a11",
  businessId: "7f3a9c2e-1b4d-4e6f-8a0b-2c3d4e5f6a01",
  tin: "12345678-0001",
  serviceId: "94ND90NR",
} as const;

export function startDemoSimulator(options: Partial<RegulatorSimulatorOptions> = {}): Promise<RegulatorSimulator> {
  return startRegulatorSimulator({
    port: 0,
    fixtures: loadFixtures(DEMO_FIXTURES_PATH),
    credentials: CREDENTIALS,
    ...options,
  });
}

export function startTestSimulator(options: Partial<RegulatorSimulatorOptions> = {}): Promise<RegulatorSimulator> {
  return startDemoSimulator({ fixtures: loadFixtures(TEST_FIXTURES_PATH), ...options });
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, or undefined when it is not JSON. */
  json: any;
}

export interface CallOptions {
  body?: unknown;
  /** Send this exact text as the body instead of JSON-encoding `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
  /** Omit the deployment credentials. */
  noAuth?: boolean;
  signal?: AbortSignal;
}

export async function call(sim: RegulatorSimulator, method: string, path: string, opts: CallOptions = {}): Promise<CallResult> {
  const headers: Record<string, string> = { ...(opts.noAuth ? {} : AUTH_HEADERS), ...(opts.headers ?? {}) };
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  const res = await fetch(sim.url + path, { method, headers, body, signal: opts.signal });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * A valid regulator invoice document of the demo business: every field the realistic simulator
 * requires (docs/Invoice_Schema.md and the annotated MBS examples of mukhtar-github/taxpoynt-platform:
 * supplier and customer `tin` + `email`, `tax_currency_code`, a listed `invoice_type_code` — 381 is
 * "Commercial Invoice" in the recorded list —, complete invoice lines and monetary totals).
 */
/**
 * The fixture taxpayer the Stored demo business (`demo-stored`) represents: a taxpayer is
 * represented under one top-level business, and the Pass-through business `demo` represents DEMO.
 */
export const STORED_DEMO = {
  email: "example-template@demo.ng",
  password: "demo-password-6",
  businessId: "d3a05c8e-7b1d-4e2f-8a6b-8c9d0e1f2a07",
  tin: "66666666-0001",
  serviceId: "3F7A2C1E",
} as const;

/** demoInvoice issued by the STORED_DEMO taxpayer (its business, TIN and IRN service ID). */
export function storedDemoInvoice(invoiceNo = "INV001", overrides: Record<string, unknown> = {}): Record<string, any> {
  const doc = demoInvoice(invoiceNo, overrides);
  doc.business_id = STORED_DEMO.businessId;
  doc.irn = String(doc.irn).replace(`-${DEMO.serviceId}-`, `-${STORED_DEMO.serviceId}-`);
  doc.accounting_supplier_party = { ...doc.accounting_supplier_party, party_name: "Example Template Ltd", tin: STORED_DEMO.tin };
  return doc;
}

export function demoInvoice(invoiceNo = "INV001", overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    business_id: DEMO.businessId,
    irn: `${invoiceNo}-${DEMO.serviceId}-20240611`,
    issue_date: "2024-06-11",
    due_date: "2024-07-11",
    issue_time: "17:59:04",
    invoice_type_code: "381",
    payment_status: "PENDING",
    note: "dummy note",
    document_currency_code: "NGN",
    tax_currency_code: "NGN",
    accounting_supplier_party: {
      party_name: "Demo Trading Ltd",
      tin: DEMO.tin,
      email: "billing@demo.ng",
      telephone: "+2348012345678",
      postal_address: { street_name: "32, Owonikoko Street", city_name: "Gwarikpa", postal_zone: "023401", country: "NG" },
    },
    accounting_customer_party: {
      party_name: "Acme Buyers Ltd",
      tin: "99999999-0001",
      email: "accounts@acme.ng",
      postal_address: { street_name: "1 Marina", city_name: "Lagos", postal_zone: "101001", country: "NG" },
    },
    tax_total: [
      {
        tax_amount: 22.5,
        tax_subtotal: [{ taxable_amount: 300, tax_amount: 22.5, tax_category: { id: "STANDARD_VAT", percent: 7.5 } }],
      },
    ],
    legal_monetary_total: {
      line_extension_amount: 300,
      tax_exclusive_amount: 300,
      tax_inclusive_amount: 322.5,
      payable_amount: 322.5,
    },
    invoice_line: [
      {
        hsn_code: "8471.30",
        product_category: "Computers",
        invoiced_quantity: 3,
        line_extension_amount: 300,
        item: { name: "USB keyboard", description: "Wired keyboard" },
        price: { price_amount: 100, base_quantity: 1, price_unit: "NGN per 1" },
      },
    ],
    ...overrides,
  };
}
