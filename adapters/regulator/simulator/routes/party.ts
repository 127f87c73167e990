/**
 * The party routes: create a party of a business (`POST /api/v1/invoice/party`, with its postal
 * address or an existing `postal_address_id`) and search a business's parties by name
 * (`GET /api/v1/invoice/party/{business_id}`). Invoices may then name a party or address by id.
 */
import { randomUUID } from "node:crypto";
import { unknownBusiness } from "../state.ts";
import type { SimulatorStore } from "../state.ts";
import type { PartyRecord } from "../types.ts";
import { VALIDATION_FAILED, dataAnswer, errorAnswer, isObject, pageAnswer } from "../views.ts";
import type { Answer } from "../views.ts";

const ADDRESS_FIELDS = ["street_name", "city_name", "postal_zone", "country"] as const;

export function createParty(store: SimulatorStore, body: unknown): Answer {
  const route = "party-create";
  if (!isObject(body)) return errorAnswer(400, route, VALIDATION_FAILED, "request body must be a JSON object");
  const problems: string[] = [];
  const str = (key: string, required: boolean): string | null => _stringField(body, key, required, problems);
  const businessId = str("business_id", true);
  const partyName = str("party_name", true);
  const tin = str("tin", true);
  const email = str("email", true);
  const telephone = str("telephone", false);
  const description = str("business_description", false);
  let addressId = str("postal_address_id", false);
  const address = body.postal_address;
  if (telephone !== null && !telephone.startsWith("+")) problems.push("telephone must start with + (country code)");
  if (addressId !== null && !store.postalAddresses.has(addressId)) problems.push("postal_address_id postal address not found");
  if (addressId === null) {
    if (!isObject(address)) problems.push("postal_address or postal_address_id is required");
    else for (const k of ADDRESS_FIELDS) if (typeof address[k] !== "string" || address[k] === "") problems.push(`postal_address.${k} is required`);
  }
  if (problems.length > 0 || businessId === null || partyName === null || tin === null || email === null) {
    return errorAnswer(400, route, VALIDATION_FAILED, problems.join("; "));
  }
  const refused = unknownBusiness(store, businessId, route);
  if (refused) return refused;
  if (addressId === null) {
    addressId = randomUUID();
    store.postalAddresses.add(addressId);
  }
  const party: PartyRecord = {
    id: randomUUID(),
    business_id: businessId,
    party_name: partyName,
    tin,
    email,
    telephone,
    business_description: description,
    postal_address_id: addressId,
    postal_address: isObject(address) ? { ...address } : null,
    created_at: new Date().toISOString(),
  };
  store.parties.set(party.id, party);
  return dataAnswer(party, 201);
}

/** A business's parties whose name contains `party_name` (case-insensitive), paged by creation time. */
export function searchParties(store: SimulatorStore, businessId: string, q: URLSearchParams): Answer {
  const route = "party-search";
  const refused = unknownBusiness(store, businessId, route);
  if (refused) return refused;
  const name = q.get("party_name")?.toLowerCase() ?? "";
  const items = [...store.parties.values()].filter((p) => p.business_id === businessId && (name === "" || p.party_name.toLowerCase().includes(name)));
  return pageAnswer(items, q, route, "created_at");
}

// --- Internal helpers ---

/** A string field of the body, or null when absent/empty (a problem when required) or not a string. */
function _stringField(body: Record<string, unknown>, key: string, required: boolean, problems: string[]): string | null {
  const v = body[key];
  if (v === undefined || v === null || v === "") {
    if (required) problems.push(`${key} is required`);
    return null;
  }
  if (typeof v !== "string") {
    problems.push(`${key} must be a string`);
    return null;
  }
  return v;
}
