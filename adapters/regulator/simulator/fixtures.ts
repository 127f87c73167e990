/**
 * Fixtures of the regulator simulator: taxpayers (portal logins), entities and their businesses,
 * optionally resource lists. Loaded from a JSON file and validated; an invalid file stops startup
 * with every problem listed. Businesses are described with the real entity answer's field names
 * (docs/regulator-simulator.md); there is no `service_id`: as at the real regulator, it lives in the
 * IRN template.
 */
import { readFileSync } from "node:fs";
import * as v from "valibot";

// ---------------------------------------------------------------------------
// Types (what a fixtures file or a test writes)
// ---------------------------------------------------------------------------

export interface FixtureBusiness {
  /** The regulator business id (a UUID; invoice routes refuse others). Any non-empty length, so tests can serve over-long ids. */
  id: string;
  name: string;
  tin: string;
  /**
   * e.g. "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}" or the real answer's form
   * "{{invoice_id(e.g:INV00XXX)}}-59854B81-{{YYYYMMDD(e.g:20250629)}}"; the middle part is the service ID.
   * null or absent = the business has no IRN template.
   */
  irn_template?: string | null;
  is_active: boolean;
  /**
   * Where the regulator notifies transmissions for this business. Absent or null = not set up:
   * transmit answers 400 "webhook url is not setup" (FIRS_Sandbox_Testing_Results.md).
   */
  webhook_url?: string | null;
  reference?: string;
  /** Descriptive fields of the real answer (defaults in docs/regulator-simulator.md). */
  sector?: string;
  annual_turnover?: string;
  support_peppol?: boolean;
  is_realtime_reporting?: boolean;
  notification_channels?: string;
  erp_system?: string;
  /** Merged over this business in the entity answer (after validation), to serve malformed metadata. */
  overrides?: Record<string, unknown>;
}

export interface FixtureEntity {
  id: string;
  reference: string;
  is_active: boolean;
  app_reference?: string;
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
  /** Resource lists by name; replace the built-in lists of ./resources.ts of the same name. */
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

const OPTIONAL_STRING = v.optional(v.string("must be a string"));
const OPTIONAL_BOOLEAN = v.optional(v.boolean("must be true or false"));

const BUSINESS_SCHEMA = v.strictObject({
  id: NON_EMPTY,
  name: v.string("must be a string"),
  tin: NON_EMPTY,
  irn_template: v.optional(v.nullable(v.string("must be a string or null"))),
  is_active: v.boolean("must be true or false"),
  webhook_url: v.optional(v.nullable(v.pipe(v.string("must be a string or null"), v.url("must be a URL")))),
  reference: OPTIONAL_STRING,
  sector: OPTIONAL_STRING,
  annual_turnover: OPTIONAL_STRING,
  support_peppol: OPTIONAL_BOOLEAN,
  is_realtime_reporting: OPTIONAL_BOOLEAN,
  notification_channels: OPTIONAL_STRING,
  erp_system: OPTIONAL_STRING,
  overrides: OVERRIDES,
});

const ENTITY_SCHEMA = v.strictObject({
  id: NON_EMPTY,
  reference: v.string("must be a string"),
  is_active: v.boolean("must be true or false"),
  app_reference: OPTIONAL_STRING,
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
