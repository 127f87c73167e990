/**
 * The regulator port's inputs: the state that selects the regulator environment, the contract
 * versions this release implements, the resource lists, and what callers hand to the client.
 * Re-exported by ../port.ts, the one file other folders import.
 */
import { REGULATOR_CONTRACT_VERSIONS, type RegulatorContractVersion } from "../../../config/schema.ts";

/** The regulator environment; selected by the business state, never by a request (spec §1.2 rule 4). */
export type RegulatorState = "TEST" | "LIVE";

export const REGULATOR_STATES: readonly RegulatorState[] = ["TEST", "LIVE"];

/** Regulator interface documentation version the adapter implements (spec §9). */
export const REGULATOR_CONTRACT_VERSION = "1.1.6";

/**
 * Contract adapter versions this release implements (spec §9: "the regulator contract adapter is
 * version v1; test and live select their versions independently"), each with the interface
 * documentation version it follows. A state configured with any other version cannot start.
 */
export const REGULATOR_ADAPTERS: Readonly<Record<string, { interfaceVersion: string }>> = {
  v1: { interfaceVersion: REGULATOR_CONTRACT_VERSION },
} satisfies Record<RegulatorContractVersion, { interfaceVersion: string }>;
/** The versions the config accepts (config/schema.ts): the map above must have an adapter for each. */
export const REGULATOR_ADAPTER_VERSIONS: readonly string[] = REGULATOR_CONTRACT_VERSIONS;

/**
 * Resource lists the regulator serves at `GET /api/v1/invoice/resources/{name}` (no credentials needed).
 * countries, currencies, invoice-types, services-codes, vat-exemptions: recorded answers in
 * FIRS-MBS_E-Invoicing_Documentation.md; tax-categories, payment-means: E_Invoice_Collection.md (the
 * Postman collection); hs-codes: DECISIONS.md's direct routes. Any other name is a path the regulator's
 * router does not know (its un-enveloped 404), so the gateway refuses it before calling.
 */
export const REGULATOR_RESOURCES: ReadonlySet<string> = new Set([
  "countries",
  "currencies",
  "invoice-types",
  "services-codes",
  "vat-exemptions",
  "tax-categories",
  "payment-means",
  "hs-codes",
]);

/** Correlation for logs: the gateway's authoritative request id. */
export interface RegulatorCallContext {
  requestId: string;
}

/** Transient taxpayer portal credentials (never persisted, never logged). */
export interface TaxpayerLogin {
  email: string;
  password: string;
}

/** Body of the regulator's IRN validation. */
export interface IrnValidationRequest {
  invoice_reference: string;
  business_id: string;
  irn: string;
}

/**
 * A regulator invoice document: the caller's exact bytes (Uint8Array or string, sent unchanged, which
 * is what Pass-through should do) or a JSON value the client serialises.
 */
export type InvoiceDocument = Uint8Array | string | Record<string, unknown>;

export type RelayMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type RelayQueryValue = string | number | boolean;

/** A direct-route call: resources, IRN validation, confirm, download, payment update. */
export interface RelayRequest {
  method: RelayMethod;
  /**
   * Regulator path starting with "/api/v1/", path parameters already percent-encoded
   * (`/api/v1/invoice/confirm/${encodeURIComponent(irn)}`). No query, fragment, "." / ".." segments,
   * "//" or encoded "." / "/" (a wiring error otherwise: RangeError).
   */
  path: string;
  query?: URLSearchParams | Record<string, RelayQueryValue | readonly RelayQueryValue[] | undefined>;
  /** POST/PUT/PATCH only. Uint8Array/string are sent unchanged; anything else is JSON-encoded. */
  body?: Uint8Array | string | Record<string, unknown> | unknown[];
  /** Content type of `body`; default "application/json". */
  contentType?: string;
  /** Name for the `operation` log field; default derived from the path ("relay.confirm", …). */
  operation?: string;
}
