/**
 * The gateway's own checks of an invoice (the represented business of the caller, then spec §4.2
 * rule 4), and the unbilled validations at the regulator that follow them.
 */
import { mapRegulatorFailure } from "../../adapters/regulator/port.ts";
import { checkBusinessId, checkInvoice, checkIrn, checkReference, type ParsedIrn } from "../invoice/checks.ts";
import { checkNoPendingMigration, ownedBusiness, type SubBusinessDoc } from "../invoice/represented-businesses.ts";
import type { IrnValidationInput } from "./schemas.ts";
import type { PassThrough, SignCaller, SigningServiceOptions } from "./types.ts";

/** An invoice checked for its represented business, before anything is claimed or billed. */
export interface CheckedInvoice {
  sub: SubBusinessDoc;
  irn: ParsedIrn;
}

export async function checkedInvoice(o: SigningServiceOptions, caller: SignCaller, subBusinessId: string, document: Record<string, unknown>): Promise<CheckedInvoice> {
  const sub = await ownedBusiness(o.store.subBusinesses, caller, subBusinessId);
  await checkNoPendingMigration(o.store.reviews, sub);
  return { sub, irn: checkInvoice(sub, document) };
}

export async function validateInvoice(o: SigningServiceOptions, caller: SignCaller, subBusinessId: string, document: Record<string, unknown>): Promise<PassThrough> {
  await checkedInvoice(o, caller, subBusinessId, document);
  const outcome = await o.regulator.validateInvoice(caller.state, document, { requestId: caller.requestId });
  if (outcome.kind === "valid") return outcome.response;
  throw mapRegulatorFailure(outcome, "validateInvoice");
}

export async function validateIrn(o: SigningServiceOptions, caller: SignCaller, subBusinessId: string, body: IrnValidationInput): Promise<PassThrough> {
  const sub = await ownedBusiness(o.store.subBusinesses, caller, subBusinessId);
  checkBusinessId(sub, body.business_id, false);
  const irn = checkIrn(body.irn, sub.identity.irnTemplate, "body");
  checkReference(irn, body.invoice_reference, "body");
  const outcome = await o.regulator.validateIrn(caller.state, body, { requestId: caller.requestId });
  if (outcome.kind === "valid") return outcome.response;
  throw mapRegulatorFailure(outcome, "validateIrn");
}
