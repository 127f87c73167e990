/**
 * Fixtures of the regulator simulator: taxpayers (portal logins), entities and their businesses,
 * optionally resource lists. Loaded from a JSON file and validated; an invalid file stops startup
 * with every problem listed.
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";

// ---------------------------------------------------------------------------
// Types (what a fixtures file or a test writes)
// ---------------------------------------------------------------------------

export interface FixtureBusiness {
  /** The regulator business id (UUID-like). Any non-empty length, so tests can serve over-long ids. */
  id: string;
  name: string;
  tin: string;
  /** 8 letters or digits; the middle part of every IRN of this business. */
  service_id: string;
  /** e.g. "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}"; null or absent = the business has no IRN template. */
  irn_template?: string | null;
  is_active: boolean;
  reference?: string;
  /** Merged over this business in the entity answer (after validation), to serve malformed metadata. */
  overrides?: Record<string, unknown>;
}

export interface FixtureEntity {
  id: string;
  reference: string;
  name?: string;
  is_active: boolean;
  businesses: FixtureBusiness[];
  /** Merged over the entity answer (after validation), to serve malformed metadata. */
  overrides?: Record<string, unknown>;
}

export interface FixtureTaxpayer {
  /** Portal login (matched case-insensitively). */
  email: string;
  password: string;
  name?: string;
  entity_id: string;
  /** Whether the taxpayer linked this access point provider; false → login answers 403 app_not_linked. Default true. */
  app_linked?: boolean;
  /** Allow `entity_id` to name no fixture entity (to test "entity not found"). Default false. */
  allow_missing_entity?: boolean;
}

export interface SimulatorFixtures {
  version: 1;
  description?: string;
  taxpayers: FixtureTaxpayer[];
  entities: FixtureEntity[];
  /** Resource lists by name; replace (or add to) the built-in DEFAULT_RESOURCES. */
  resources?: Record<string, unknown[]>;
}

/** Raised for invalid fixtures; `problems` lists each one as "<JSON pointer>: <message>". */
export class SimulatorFixturesError extends Error {
  readonly isSimulatorFixturesError = true;
  readonly problems: string[];
  constructor(source: string, problems: string[]) {
    super(
      `Invalid regulator simulator fixtures (${source}): ${problems.length} problem(s)\n` +
        problems.map((p) => `  - ${p}`).join("\n"),
    );
    this.name = "SimulatorFixturesError";
    this.problems = problems;
  }
}

export function isSimulatorFixturesError(e: unknown): e is SimulatorFixturesError {
  return typeof e === "object" && e !== null && (e as { isSimulatorFixturesError?: unknown }).isSimulatorFixturesError === true;
}

// ---------------------------------------------------------------------------
// Loading and validation
// ---------------------------------------------------------------------------

/** Read, parse and validate a fixtures JSON file (synchronous: it runs once at startup). */
export function loadFixtures(path: string): SimulatorFixtures {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new SimulatorFixturesError(path, [`cannot read the file: ${(e as Error).message}`]);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new SimulatorFixturesError(path, [`not valid JSON: ${(e as Error).message}`]);
  }
  return parseFixtures(data, path);
}

/** Validate fixtures given as data (a parsed file or an object built by a test). */
export function parseFixtures(data: unknown, source = "fixtures"): SimulatorFixtures {
  const result = v.safeParse(FIXTURES_SCHEMA, data);
  if (!result.success) {
    throw new SimulatorFixturesError(
      source,
      result.issues.map((issue) => `${_pointer(issue.path)}: ${issue.message}`),
    );
  }
  const fixtures: SimulatorFixtures = result.output;
  const problems = _crossCheck(fixtures);
  if (problems.length > 0) throw new SimulatorFixturesError(source, problems);
  return fixtures;
}

const NON_EMPTY = v.pipe(v.string("must be a string"), v.minLength(1, "must not be empty"));
const OVERRIDES = v.optional(v.record(v.string(), v.unknown(), "must be an object"));

const BUSINESS_SCHEMA = v.strictObject({
  id: NON_EMPTY,
  name: v.string("must be a string"),
  tin: NON_EMPTY,
  service_id: v.pipe(v.string("must be a string"), v.regex(/^[A-Za-z0-9]{8}$/, "must be exactly 8 letters or digits")),
  irn_template: v.optional(v.nullable(v.string("must be a string or null"))),
  is_active: v.boolean("must be true or false"),
  reference: v.optional(v.string("must be a string")),
  overrides: OVERRIDES,
});

const ENTITY_SCHEMA = v.strictObject({
  id: NON_EMPTY,
  reference: v.string("must be a string"),
  name: v.optional(v.string("must be a string")),
  is_active: v.boolean("must be true or false"),
  businesses: v.array(BUSINESS_SCHEMA, "must be an array"),
  overrides: OVERRIDES,
});

const TAXPAYER_SCHEMA = v.strictObject({
  email: v.pipe(v.string("must be a string"), v.email("must be an email address")),
  password: NON_EMPTY,
  name: v.optional(v.string("must be a string")),
  entity_id: NON_EMPTY,
  app_linked: v.optional(v.boolean("must be true or false")),
  allow_missing_entity: v.optional(v.boolean("must be true or false")),
});

const FIXTURES_SCHEMA = v.strictObject({
  version: v.literal(1, "must be 1"),
  description: v.optional(v.string("must be a string")),
  taxpayers: v.array(TAXPAYER_SCHEMA, "must be an array"),
  entities: v.array(ENTITY_SCHEMA, "must be an array"),
  resources: v.optional(v.record(v.string(), v.array(v.unknown(), "must be an array"), "must be an object")),
});

// ---------------------------------------------------------------------------
// Built-in resource lists (GET /api/v1/invoice/resources/{name})
// ---------------------------------------------------------------------------

export const DEFAULT_RESOURCES: Readonly<Record<string, readonly unknown[]>> = {
  currencies: [
    { code: "NGN", name: "Nigerian Naira", symbol: "₦", symbol_native: "₦", decimal_digits: 2 },
    { code: "USD", name: "US Dollar", symbol: "$", symbol_native: "$", decimal_digits: 2 },
    { code: "EUR", name: "Euro", symbol: "€", symbol_native: "€", decimal_digits: 2 },
    { code: "GBP", name: "British Pound Sterling", symbol: "£", symbol_native: "£", decimal_digits: 2 },
    { code: "GHS", name: "Ghanaian Cedi", symbol: "GH₵", symbol_native: "GH₵", decimal_digits: 2 },
    { code: "XOF", name: "CFA Franc BCEAO", symbol: "CFA", symbol_native: "CFA", decimal_digits: 0 },
    { code: "ZAR", name: "South African Rand", symbol: "R", symbol_native: "R", decimal_digits: 2 },
    { code: "CNY", name: "Chinese Yuan", symbol: "CN¥", symbol_native: "CN¥", decimal_digits: 2 },
  ],
  "invoice-types": [
    { code: "380", value: "Commercial Invoice" },
    { code: "381", value: "Credit Note" },
    { code: "383", value: "Debit Note" },
    { code: "384", value: "Corrected Invoice" },
    { code: "386", value: "Prepayment Invoice" },
    { code: "389", value: "Self-billed Invoice" },
    { code: "390", value: "Delcredere Invoice" },
    { code: "393", value: "Factored Invoice" },
    { code: "396", value: "Factored Credit Note" },
  ],
  "tax-categories": [
    { code: "STANDARD_VAT", value: "Standard Value-Added Tax", percent: "7.5" },
    { code: "REDUCED_VAT", value: "Reduced Value-Added Tax", percent: "Not Available" },
    { code: "ZERO_VAT", value: "Zero Value-Added Tax", percent: "0.0" },
    { code: "STANDARD_GST", value: "Standard Goods and Services Tax", percent: "Not Available" },
    { code: "STATE_SALES_TAX", value: "State Sales Tax", percent: "Not Available" },
    { code: "LOCAL_SALES_TAX", value: "Local Sales Tax", percent: "Not Available" },
    { code: "ALCOHOL_EXCISE_TAX", value: "Alcohol Excise Tax", percent: "Not Available" },
    { code: "CUSTOM_DUTY", value: "Custom Duty", percent: "Not Available" },
  ],
  "payment-means": [
    { code: "10", value: "In cash" },
    { code: "20", value: "Cheque" },
    { code: "30", value: "Credit transfer" },
    { code: "42", value: "Payment to bank account" },
    { code: "48", value: "Bank card" },
    { code: "49", value: "Direct debit" },
    { code: "68", value: "Online payment service" },
  ],
  "services-codes": [
    { code: "4611", value: "Agents involved in the sale of agricultural raw materials" },
    { code: "4719", value: "Other retail sale in non-specialized stores" },
    { code: "5610", value: "Restaurants and mobile food service activities" },
    { code: "6201", value: "Computer programming activities" },
    { code: "6920", value: "Accounting, bookkeeping and auditing activities; tax consultancy" },
    { code: "8620", value: "Medical and dental practice activities" },
  ],
  "vat-exemptions": [
    { code: "VEX-001", heading: "Basic food items", description: "Basic food items, unprocessed", tariff: "0101.21" },
    { code: "VEX-002", heading: "Medical and pharmaceutical products", description: "Medicaments for therapeutic use", tariff: "3004.90" },
    { code: "VEX-003", heading: "Books and educational materials", description: "Printed books and brochures", tariff: "4901.99" },
    { code: "VEX-004", heading: "Baby products", description: "Preparations for infant use", tariff: "1901.10" },
    { code: "VEX-005", heading: "Agricultural equipment", description: "Agricultural tractors", tariff: "8701.91" },
  ],
  "hs-codes": [
    { hscode: "0101.21", description: "Live horses, pure-bred breeding animals" },
    { hscode: "1006.30", description: "Semi-milled or wholly milled rice" },
    { hscode: "2523.29", description: "Portland cement, other than white" },
    { hscode: "3004.90", description: "Other medicaments, packaged for retail sale" },
    { hscode: "8471.30", description: "Portable automatic data-processing machines, weighing not more than 10 kg" },
    { hscode: "8517.13", description: "Smartphones" },
  ],
  countries: [
    { alpha_2: "NG", alpha_3: "NGA", name: "Nigeria" },
    { alpha_2: "GH", alpha_3: "GHA", name: "Ghana" },
    { alpha_2: "BJ", alpha_3: "BEN", name: "Benin" },
    { alpha_2: "CM", alpha_3: "CMR", name: "Cameroon" },
    { alpha_2: "ZA", alpha_3: "ZAF", name: "South Africa" },
    { alpha_2: "GB", alpha_3: "GBR", name: "United Kingdom" },
    { alpha_2: "US", alpha_3: "USA", name: "United States of America" },
    { alpha_2: "CN", alpha_3: "CHN", name: "China" },
  ],
  states: [
    { code: "NG-LA", name: "Lagos" },
    { code: "NG-FC", name: "Federal Capital Territory" },
    { code: "NG-KN", name: "Kano" },
    { code: "NG-RI", name: "Rivers" },
    { code: "NG-OY", name: "Oyo" },
    { code: "NG-EN", name: "Enugu" },
  ],
  lgas: [
    { code: "LA-IKJ", name: "Ikeja", state_code: "NG-LA" },
    { code: "LA-ETO", name: "Eti-Osa", state_code: "NG-LA" },
    { code: "LA-LAI", name: "Lagos Island", state_code: "NG-LA" },
    { code: "FC-AMA", name: "Abuja Municipal", state_code: "NG-FC" },
    { code: "KN-NAS", name: "Nassarawa", state_code: "NG-KN" },
    { code: "RI-PHC", name: "Port Harcourt", state_code: "NG-RI" },
    { code: "OY-IBN", name: "Ibadan North", state_code: "NG-OY" },
    { code: "EN-ENN", name: "Enugu North", state_code: "NG-EN" },
  ],
};

// --- Internal helpers ---

function _pointer(path: ReadonlyArray<{ key: unknown }> | undefined): string {
  if (!path || path.length === 0) return "/";
  return path.map((p) => "/" + String(p.key).replace(/~/g, "~0").replace(/\//g, "~1")).join("");
}

function _crossCheck(f: SimulatorFixtures): string[] {
  const problems: string[] = [];
  const entityIds = new Map<string, number>();
  const businessIds = new Map<string, string>();
  f.entities.forEach((entity, ei) => {
    if (entityIds.has(entity.id)) {
      problems.push(`/entities/${ei}/id: duplicate entity id "${entity.id}" (also /entities/${entityIds.get(entity.id)})`);
    } else entityIds.set(entity.id, ei);
    entity.businesses.forEach((business, bi) => {
      const here = `/entities/${ei}/businesses/${bi}`;
      const seen = businessIds.get(business.id);
      if (seen) problems.push(`${here}/id: duplicate business id "${business.id}" (also ${seen})`);
      else businessIds.set(business.id, here);
    });
  });
  const emails = new Map<string, number>();
  f.taxpayers.forEach((t, ti) => {
    const key = t.email.toLowerCase();
    if (emails.has(key)) problems.push(`/taxpayers/${ti}/email: duplicate email "${t.email}" (also /taxpayers/${emails.get(key)})`);
    else emails.set(key, ti);
    if (!entityIds.has(t.entity_id) && t.allow_missing_entity !== true) {
      problems.push(
        `/taxpayers/${ti}/entity_id: no entity has id "${t.entity_id}" (set "allow_missing_entity": true to test a missing entity)`,
      );
    }
  });
  return problems;
}
