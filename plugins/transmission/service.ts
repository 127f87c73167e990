/**
 * Pass-through transmission with durable claims (spec §3.3): the service behind
 * `POST /api/v1/invoice/transmit/:irn`; transmit.ts is its one use case.
 */
import { deriveKey } from "../../core/keyed-hash.ts";
import { openRepresentedBusinesses } from "../invoice/represented-businesses.ts";
import { openTransmissionClaims } from "../invoice/transmission-claims.ts";
import { transmit } from "./transmit.ts";
import type { TransmissionOptions, TransmissionService } from "./types.ts";

export { TRANSMISSION_CLAIMS_COLLECTION as TRANSMISSION_COLLECTION, type ClaimDoc, type ClaimState } from "../invoice/transmission-claims.ts";
export type { TransmissionOptions, TransmissionService, TransmitCaller } from "./types.ts";

export function createTransmissionService(o: TransmissionOptions): TransmissionService {
  const deps = {
    ...o,
    claims: openTransmissionClaims(o.store),
    subs: openRepresentedBusinesses(o.store),
    secret: deriveKey(o.deploymentSecret, "transmission-idempotency-v1"),
  };
  return { transmit: (caller, subBusinessId, irn, key) => transmit(deps, caller, subBusinessId, irn, key) };
}
