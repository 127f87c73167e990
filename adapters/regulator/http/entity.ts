/**
 * The entity answer (`GET /api/v1/entity/{id}`): the fields the gateway needs, checked one by one
 * against ENTITY_LIMITS. A coherent answer with a missing or malformed field is "invalid"
 * (GW_REG_BUSINESS_METADATA_INVALID); one over a limit is "unsupported" (GW_REG_ENTITY_METADATA_UNSUPPORTED);
 * "invalid" wins over "unsupported". Neither counts against the circuit: it is one taxpayer's data.
 */
import { ENTITY_LIMITS, type RegulatorBusiness, type RegulatorEntity } from "../port.ts";
import { serviceIdOfTemplate } from "../irn.ts";
import { any2xx, errorFailure, isObject, successEnvelope, type Interpreted } from "./interpret.ts";
import type { RawResponse } from "./transport.ts";

/** What is wrong with an entity answer (or one of its businesses). */
export type EntityProblem = "invalid" | "unsupported";

/** The entity read: its envelope, then its fields (`requestedId` must be the id it answers with). */
export function interpretEntity(raw: RawResponse, requestedId: string): Interpreted<RegulatorEntity> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: errorFailure(raw, "other") };
  const env = successEnvelope(raw, any2xx);
  if (!env.ok) return env;
  const parsed = parseEntity(env.data, requestedId);
  if (typeof parsed === "string") return { ok: false, failure: { kind: "entity_metadata", problem: parsed } };
  return { ok: true, value: parsed };
}

/**
 * The fields the gateway needs, checked one by one. The real answer (`id, reference, custom_settings,
 * created_at, updated_at, businesses[], is_active, app_reference`; per business `id, reference, name?,
 * …, tin, sector, annual_turnover, support_peppol, …, irn_template, is_active`) carries no
 * `service_id`: it is derived from the template.
 */
export function parseEntity(d: Record<string, unknown>, requestedId: string): RegulatorEntity | EntityProblem {
  const fields = new _Fields();
  const id = fields.str(d.id, ENTITY_LIMITS.idLength, true);
  if (id !== "" && id !== requestedId) fields.invalid = true;
  const reference = fields.str(d.reference, ENTITY_LIMITS.referenceLength, false);
  const active = fields.bool(d.is_active);
  const businesses = _parseBusinesses(d.businesses, fields);
  return fields.problem() ?? { id, reference, active, businesses };
}

// --- Internal helpers ---

/**
 * The entity's businesses. Each business's own problem is kept on it (`metadataProblem`), not made
 * the entity's: only the business an operation selects must be sound, so a malformed sibling never
 * blocks a valid one. An item that is not an object at all is skipped (nothing could select it);
 * an entity with no sound business at all is the entity's problem (as before).
 */
function _parseBusinesses(list: unknown, entity: _Fields): RegulatorBusiness[] {
  if (!Array.isArray(list)) {
    entity.invalid = true;
    return [];
  }
  if (list.length > ENTITY_LIMITS.businesses) {
    entity.unsupported = true;
    return [];
  }
  const seen = new Set<string>();
  const businesses: RegulatorBusiness[] = [];
  const problems: EntityProblem[] = [];
  for (const item of list) {
    const { business, problem } = _parseBusiness(item, seen);
    if (problem !== null) problems.push(problem);
    if (business === null) continue;
    businesses.push(problem === null ? business : { ...business, metadataProblem: problem });
  }
  // Not one sound business: nothing could be selected, so the entity itself is unusable.
  if (problems.length > 0 && businesses.every((b) => b.metadataProblem)) for (const p of problems) entity.record(p);
  return businesses;
}

/** One business of the entity, and its own problem (a repeated id is one); `seen` collects the ids. */
function _parseBusiness(b: unknown, seen: Set<string>): { business: RegulatorBusiness | null; problem: EntityProblem | null } {
  if (!isObject(b)) return { business: null, problem: "invalid" };
  const L = ENTITY_LIMITS;
  const fields = new _Fields();
  const id = fields.str(b.id, L.businessIdLength, true);
  if (seen.has(id)) fields.invalid = true;
  seen.add(id);
  let irnTemplate: string | null = null;
  let serviceId: string | null = null;
  if (b.irn_template !== undefined && b.irn_template !== null && b.irn_template !== "") {
    irnTemplate = fields.str(b.irn_template, L.irnTemplateLength, true);
    // The service ID lives in the template: one without it where the IRN format needs it is malformed
    // metadata (an over-long one is already "unsupported").
    serviceId = serviceIdOfTemplate(irnTemplate);
    if (serviceId === null && irnTemplate.length <= L.irnTemplateLength) fields.invalid = true;
  }
  const business: RegulatorBusiness = {
    id,
    name: b.name === undefined || b.name === null ? "" : fields.str(b.name, L.businessNameLength, false),
    tin: fields.str(b.tin, L.tinLength, true),
    irnTemplate,
    serviceId,
    active: fields.bool(b.is_active),
  };
  return { business, problem: fields.problem() };
}

/** Reads fields, remembering whether any was malformed ("invalid") or over its limit ("unsupported"). */
class _Fields {
  invalid = false;
  unsupported = false;

  /** A string field ("" when it is not a string, or empty where `nonEmpty`). */
  str(v: unknown, max: number, nonEmpty: boolean): string {
    if (typeof v !== "string" || (nonEmpty && v === "")) {
      this.invalid = true;
      return "";
    }
    if (v.length > max) this.unsupported = true;
    return v;
  }

  bool(v: unknown): boolean {
    if (typeof v !== "boolean") this.invalid = true;
    return v === true;
  }

  record(problem: EntityProblem): void {
    if (problem === "invalid") this.invalid = true;
    else this.unsupported = true;
  }

  /** "invalid" wins over "unsupported"; null when every field was fine. */
  problem(): EntityProblem | null {
    if (this.invalid) return "invalid";
    if (this.unsupported) return "unsupported";
    return null;
  }
}
