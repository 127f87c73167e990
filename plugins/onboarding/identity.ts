/**
 * Regulator identity of a represented business: the snapshot the gateway stores, how onboarding
 * selects a business from the regulator's entity (spec §1.3, §7.6), how reverification finds the
 * same business again, and how two snapshots differ (spec §3.1: additive vs protected drift).
 * Pure functions; no I/O.
 */
import { gwError } from "../../core/errors/gateway-error.ts";
import { isValidSubBusinessId } from "../../core/validation.ts";
import type { RegulatorBusiness, RegulatorEntity } from "../../adapters/regulator/port.ts";
import type { RegulatorIdentity } from "../invoice/represented-businesses.ts";

export type { RegulatorIdentity };

export type IdentityField = keyof RegulatorIdentity;

/** Order of `changedFields` in answers. */
export const IDENTITY_FIELDS: readonly IdentityField[] = [
  "entityId",
  "entityReference",
  "regulatorBusinessId",
  "businessName",
  "tin",
  "irnTemplate",
  "active",
];

/** A change of these is never applied by the public route (spec §3.1): operator migration only. */
export const PROTECTED_FIELDS: ReadonlySet<IdentityField> = new Set(["entityId", "regulatorBusinessId", "tin"]);

export type DriftClass = "initial" | "none" | "additive" | "protected";

export interface IdentityDiff {
  changedFields: IdentityField[];
  driftClass: "none" | "additive" | "protected";
  requiresProtectedMigration: boolean;
}

export function identityOf(entity: RegulatorEntity, business: RegulatorBusiness): RegulatorIdentity {
  return {
    entityId: entity.id,
    entityReference: entity.reference,
    regulatorBusinessId: business.id,
    businessName: business.name,
    tin: business.tin,
    irnTemplate: business.irnTemplate,
    active: entity.active && business.active,
  };
}

/**
 * Onboarding's choice of business (spec §1.3: the TIN is needed only when the entity has several
 * active businesses). Checks, in order: entity active, at least one sound active business, the TIN
 * (when given) names a business, exactly one active candidate, the selected business's own metadata
 * sound, the business active, its IRN template present, its id publishable unchanged as a
 * gatewaySubBusinessId. Only the selected business must be sound: a malformed sibling blocks nothing.
 */
export function selectForOnboarding(entity: RegulatorEntity, tin: string | undefined): RegulatorBusiness {
  if (!entity.active) throw gwError("GW_REG_ENTITY_INACTIVE", { detail: "The taxpayer entity is inactive at the regulator." });
  // A business whose own fields are malformed is no candidate unless the caller names it by TIN;
  // when nothing sound is active, a malformed business is why (its metadata error, not "none active").
  const active = entity.businesses.filter((b) => b.active && !b.metadataProblem);
  if (active.length === 0) {
    const malformed = entity.businesses.find((b) => b.metadataProblem);
    if (malformed) checkBusinessMetadata(malformed);
    throw gwError("GW_REG_ACTIVE_BUSINESS_NOT_FOUND", { detail: "The taxpayer entity has no active business at the regulator." });
  }
  let selected: RegulatorBusiness;
  if (tin !== undefined) {
    const matches = entity.businesses.filter((b) => b.tin === tin);
    if (matches.length === 0)
      throw gwError("GW_REG_BUSINESS_TIN_NOT_FOUND", { detail: "No business of the taxpayer entity has that TIN." });
    const activeMatches = matches.filter((b) => b.active);
    if (activeMatches.length > 1)
      throw gwError("GW_REG_BUSINESS_SELECTION_AMBIGUOUS", {
        detail: "Several active businesses of the taxpayer entity have that TIN; the regulator must make it unique.",
      });
    selected = activeMatches[0] ?? matches[0]!;
  } else {
    if (active.length > 1)
      throw gwError("GW_REG_BUSINESS_SELECTION_AMBIGUOUS", {
        detail: "The taxpayer entity has several active businesses; send the TIN of the one to onboard.",
      });
    selected = active[0]!;
  }
  checkBusinessMetadata(selected);
  if (!selected.active) throw gwError("GW_REG_BUSINESS_INACTIVE", { detail: "The selected business is inactive at the regulator." });
  if (selected.irnTemplate === null)
    throw gwError("GW_REG_IRN_TEMPLATE_MISSING", { detail: "The selected business has no IRN template at the regulator." });
  if (!isValidSubBusinessId(selected.id))
    throw gwError("GW_REG_BUSINESS_METADATA_INVALID", {
      detail: "The regulator's business id cannot be published unchanged as a gatewaySubBusinessId.",
    });
  return selected;
}

/**
 * The selected business's own fields are sound (spec §9: only what the gateway needs, of the business
 * it uses): malformed → 502 GW_REG_BUSINESS_METADATA_INVALID, over a limit → GW_REG_ENTITY_METADATA_UNSUPPORTED.
 */
export function checkBusinessMetadata(b: RegulatorBusiness): RegulatorBusiness {
  if (b.metadataProblem === "invalid")
    throw gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail: "The regulator's metadata of the selected business is missing or malformed." });
  if (b.metadataProblem === "unsupported")
    throw gwError("GW_REG_ENTITY_METADATA_UNSUPPORTED", { detail: "The regulator's details of the selected business exceed the accepted limits." });
  return b;
}

/**
 * Reverification finds the represented business again: by its current regulator business id, else
 * by its TIN, else the entity's only business. Inactivity is not an error here: it is drift.
 */
export function selectForReverification(entity: RegulatorEntity, stored: RegulatorIdentity): RegulatorBusiness {
  const byId = entity.businesses.find((b) => b.id === stored.regulatorBusinessId);
  if (byId) return byId;
  const byTin = entity.businesses.filter((b) => b.tin === stored.tin);
  if (byTin.length === 1) return byTin[0]!;
  if (byTin.length > 1)
    throw gwError("GW_REG_BUSINESS_SELECTION_AMBIGUOUS", {
      detail: "Several businesses of the taxpayer entity match the stored TIN; contact support.",
    });
  if (entity.businesses.length === 1) return entity.businesses[0]!;
  throw gwError("GW_REG_BUSINESS_TIN_NOT_FOUND", {
    detail: "No business of the taxpayer entity matches the stored business id or TIN.",
  });
}

export function diffIdentity(stored: RegulatorIdentity, observed: RegulatorIdentity): IdentityDiff {
  const changedFields = IDENTITY_FIELDS.filter((f) => stored[f] !== observed[f]);
  const requiresProtectedMigration = changedFields.some((f) => PROTECTED_FIELDS.has(f));
  const driftClass = changedFields.length === 0 ? "none" : requiresProtectedMigration ? "protected" : "additive";
  return { changedFields, driftClass, requiresProtectedMigration };
}

/** A copy holding exactly the identity fields (stored documents never carry stray fields). */
export function cleanIdentity(i: RegulatorIdentity): RegulatorIdentity {
  return {
    entityId: i.entityId,
    entityReference: i.entityReference,
    regulatorBusinessId: i.regulatorBusinessId,
    businessName: i.businessName,
    tin: i.tin,
    irnTemplate: i.irnTemplate,
    active: i.active,
  };
}
