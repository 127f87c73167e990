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
 * The fields the gateway needs, checked one by one; "invalid" wins over "unsupported". The real answer
 * (`id, reference, custom_settings, created_at, updated_at, businesses[], is_active, app_reference`;
 * per business `id, reference, name?, …, tin, sector, annual_turnover, support_peppol, …, irn_template,
 * is_active`) carries no `service_id`: it is derived from the template.
 */
export function parseEntity(d: Record<string, unknown>, requestedId: string): RegulatorEntity | "invalid" | "unsupported" {
  const L = ENTITY_LIMITS;
  let invalid = false;
  let unsupported = false;
  const str = (v: unknown, max: number, nonEmpty: boolean): string => {
    if (typeof v !== "string" || (nonEmpty && v === "")) {
      invalid = true;
      return "";
    }
    if (v.length > max) unsupported = true;
    return v;
  };
  const bool = (v: unknown): boolean => {
    if (typeof v !== "boolean") invalid = true;
    return v === true;
  };

  const id = str(d.id, L.idLength, true);
  if (id !== "" && id !== requestedId) invalid = true;
  const reference = str(d.reference, L.referenceLength, false);
  const active = bool(d.is_active);
  const businesses: RegulatorBusiness[] = [];
  if (!Array.isArray(d.businesses)) invalid = true;
  else if (d.businesses.length > L.businesses) unsupported = true;
  else {
    const seen = new Set<string>();
    for (const b of d.businesses) {
      if (!isObject(b)) {
        invalid = true;
        continue;
      }
      const bid = str(b.id, L.businessIdLength, true);
      if (seen.has(bid)) invalid = true;
      seen.add(bid);
      let irnTemplate: string | null = null;
      let serviceId: string | null = null;
      if (b.irn_template !== undefined && b.irn_template !== null && b.irn_template !== "") {
        irnTemplate = str(b.irn_template, L.irnTemplateLength, true);
        // The service ID lives in the template: one without it where the IRN format needs it is malformed
        // metadata (an over-long one is already "unsupported").
        serviceId = serviceIdOfTemplate(irnTemplate);
        if (serviceId === null && irnTemplate.length <= L.irnTemplateLength) invalid = true;
      }
      businesses.push({
        id: bid,
        name: b.name === undefined || b.name === null ? "" : str(b.name, L.businessNameLength, false),
        tin: str(b.tin, L.tinLength, true),
        irnTemplate,
        serviceId,
        active: bool(b.is_active),
      });
    }
  }
  if (invalid) return "invalid";
  if (unsupported) return "unsupported";
  return { id, reference, active, businesses };
}
