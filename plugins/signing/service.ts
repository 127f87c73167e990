/**
 * Pass-through signing (spec §3.2) with billing, plus the unbilled validation and direct regulator
 * routes. Sees only ports: the document store (SigningStore), the billing ledger and the regulator.
 * One use case per file: sign.ts (the billed sign: records, then dispatch.ts), validate.ts,
 * relay.ts; records.ts holds the sign record's writes.
 */
import { byIrn, resource } from "./relay.ts";
import { sign } from "./sign.ts";
import type { SigningService, SigningServiceOptions } from "./types.ts";
import { validateInvoice, validateIrn } from "./validate.ts";

export { SIGN_ROUTE, type IrnCall, type PassThrough, type SignCaller, type SigningService, type SigningServiceOptions, type SignRequest } from "./types.ts";
export { checkInvoice, checkReference } from "../invoice/checks.ts";

export function createSigningService(o: SigningServiceOptions): SigningService {
  return {
    sign: (caller, r) => sign(o, caller, r),
    validateInvoice: (caller, subBusinessId, document) => validateInvoice(o, caller, subBusinessId, document),
    validateIrn: (caller, subBusinessId, body) => validateIrn(o, caller, subBusinessId, body),
    byIrn: (caller, subBusinessId, irn, call) => byIrn(o, caller, subBusinessId, irn, call),
    resource: (caller, name) => resource(o, caller, name),
  };
}
