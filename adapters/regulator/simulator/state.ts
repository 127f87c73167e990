/**
 * The simulator's state: the fixture indexes and pre-serialised answers built once at startup, the
 * mutable records of what it has done (signed invoices, parties, postal addresses, call counts), the
 * read-only view tests inspect, and the business lookup the invoice routes share. Route handlers read
 * and write one `SimulatorStore`; nothing else holds state.
 */
import type { FixtureBusiness, FixtureEntity, FixtureTaxpayer, SimulatorFixtures } from "./fixtures.ts";
import { createInvoiceChecker, uuidProblem } from "./invoice-schema.ts";
import type { InvoiceChecker } from "./invoice-schema.ts";
import { RESOURCES } from "./resources.ts";
import { SIMULATOR_ROUTES } from "./router.ts";
import type { SimulatorRoute } from "./router.ts";
import type { PartyRecord, SignedInvoiceRecord, SimulatorState } from "./types.ts";
import { VALIDATION_FAILED, entityView, errorAnswer, isObject } from "./views.ts";
import type { Answer } from "./views.ts";

/** A fixture business with its entity and compiled IRN template. */
export interface BusinessRecord {
  business: FixtureBusiness;
  entity: FixtureEntity;
  /** Compiled IRN template, or null when the business has none. */
  template: RegExp | null;
}

/** What the fixtures say, indexed once; never changed after startup. */
export interface FixtureIndex {
  /** Taxpayers by lower-cased e-mail. */
  taxpayers: ReadonlyMap<string, FixtureTaxpayer>;
  /** The serialised GetEntity answer by entity id. */
  entityAnswers: ReadonlyMap<string, string>;
  /** Every entity as GetEntity shows it, in fixture order (for SearchEntity). */
  entityViews: readonly Record<string, unknown>[];
  businesses: ReadonlyMap<string, BusinessRecord>;
  /** The first business of each TIN. */
  businessesByTin: ReadonlyMap<string, BusinessRecord>;
  /** The serialised answer of each resource list by name. */
  resourceAnswers: ReadonlyMap<string, string>;
  /** The invoice schema's checks, with the resource lists' type and currency codes. */
  checkInvoice: InvoiceChecker;
}

/** The fixture index and the mutable records; route handlers take it as their first argument. */
export interface SimulatorStore {
  readonly fixtures: FixtureIndex;
  /** Signed invoices by IRN, in order of signing. */
  readonly signed: Map<string, SignedInvoiceRecord>;
  /** Parties by id, in order of creation. */
  readonly parties: Map<string, PartyRecord>;
  /** Postal address ids created with parties. */
  readonly postalAddresses: Set<string>;
  /** Calls per route (every call that matched the route, whatever its outcome). */
  calls: Record<SimulatorRoute, number>;
}

export function createSimulatorStore(fixtures: SimulatorFixtures): SimulatorStore {
  return {
    fixtures: _indexFixtures(fixtures),
    signed: new Map(),
    parties: new Map(),
    postalAddresses: new Set(),
    calls: zeroCalls(),
  };
}

/** Forget signed invoices, parties, postal addresses and call counts (the fixtures stay). */
export function resetRecords(store: SimulatorStore): void {
  store.signed.clear();
  store.parties.clear();
  store.postalAddresses.clear();
  store.calls = zeroCalls();
}

export function zeroCalls(): Record<SimulatorRoute, number> {
  const calls = {} as Record<SimulatorRoute, number>;
  for (const r of SIMULATOR_ROUTES) calls[r] = 0;
  return calls;
}

/** The read-only view of `store` (copies out, never hands out a live record). */
export function createStateView(store: SimulatorStore): SimulatorState {
  const { signed, parties } = store;
  return {
    signedIrns: () => [...signed.keys()],
    transmittedIrns: () => [...signed.values()].filter((r) => r.transmitted_at !== null).map((r) => r.irn),
    isSigned: (irn) => signed.has(irn),
    isTransmitted: (irn) => (signed.get(irn)?.transmitted_at ?? null) !== null,
    isReceiptConfirmed: (irn) => (signed.get(irn)?.receipt_confirmed_at ?? null) !== null,
    invoice: (irn) => {
      const r = signed.get(irn);
      return r ? { ...r } : undefined;
    },
    parties: () => [...parties.values()].map((p) => ({ ...p })),
    calls: (route) => store.calls[route],
    callCounts: () => ({ ...store.calls }),
    totalCalls: () => Object.values(store.calls).reduce((a, b) => a + b, 0),
  };
}

/**
 * The business an invoice is issued for, or the refusal: a non-UUID id, an unknown business, an
 * inactive business or entity, a business without an IRN template.
 */
export function activeBusiness(store: SimulatorStore, id: string, route: SimulatorRoute): BusinessRecord | Answer {
  const bad = uuidProblem(id);
  if (bad) return errorAnswer(400, route, VALIDATION_FAILED, bad);
  const found = store.fixtures.businesses.get(id);
  if (!found) return errorAnswer(404, route, "business not found");
  if (!found.business.is_active || !found.entity.is_active) return errorAnswer(400, route, VALIDATION_FAILED, "business is not active");
  if (found.template === null) return errorAnswer(400, route, VALIDATION_FAILED, "business has no irn template");
  return found;
}

/** A refusal for a business id that is not a UUID or names no fixture business; null when it does. */
export function unknownBusiness(store: SimulatorStore, id: string, route: SimulatorRoute): Answer | null {
  const bad = uuidProblem(id);
  if (bad) return errorAnswer(400, route, VALIDATION_FAILED, bad);
  if (!store.fixtures.businesses.has(id)) return errorAnswer(404, route, "business not found");
  return null;
}

// --- Internal helpers ---

function _indexFixtures(fixtures: SimulatorFixtures): FixtureIndex {
  const taxpayers = new Map<string, FixtureTaxpayer>();
  for (const t of fixtures.taxpayers) taxpayers.set(t.email.toLowerCase(), t);
  const entityAnswers = new Map<string, string>();
  const entityViews: Record<string, unknown>[] = [];
  const businesses = new Map<string, BusinessRecord>();
  const businessesByTin = new Map<string, BusinessRecord>();
  for (const entity of fixtures.entities) {
    const view = entityView(entity);
    entityViews.push(view);
    entityAnswers.set(entity.id, JSON.stringify({ code: 200, data: view }));
    for (const business of entity.businesses) {
      const template = typeof business.irn_template === "string" && business.irn_template !== "" ? _compileTemplate(business.irn_template) : null;
      const record: BusinessRecord = { business, entity, template };
      businesses.set(business.id, record);
      if (!businessesByTin.has(business.tin)) businessesByTin.set(business.tin, record);
    }
  }
  const resources: Record<string, readonly unknown[]> = { ...RESOURCES, ...(fixtures.resources ?? {}) };
  const resourceAnswers = new Map<string, string>();
  for (const [name, list] of Object.entries(resources)) resourceAnswers.set(name, JSON.stringify({ code: 200, data: list }));
  const checkInvoice = createInvoiceChecker({
    invoiceTypeCodes: _codes(resources["invoice-types"]),
    currencyCodes: _codes(resources.currencies),
  });
  return { taxpayers, entityAnswers, entityViews, businesses, businessesByTin, resourceAnswers, checkInvoice };
}

/**
 * A template → the regex its IRNs match: `{{invoice_id…}}` letters/digits, `{{YYYYMMDD…}}` 8 digits,
 * the rest literal; a placeholder may carry example text, `{{invoice_id(e.g:INV00XXX)}}`.
 */
function _compileTemplate(template: string): RegExp {
  let src = "^";
  for (const part of template.split(/(\{\{\s*(?:invoice_id|YYYYMMDD)\s*(?:\([^{}()]*\))?\s*\}\})/)) {
    if (/^\{\{\s*invoice_id/.test(part)) src += "[A-Za-z0-9]+";
    else if (/^\{\{\s*YYYYMMDD/.test(part)) src += "\\d{8}";
    else src += part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(src + "$");
}

function _codes(list: readonly unknown[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const item of list ?? []) {
    if (isObject(item) && typeof item.code === "string") out.add(item.code);
  }
  return out;
}
