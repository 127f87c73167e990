/** pending: the regulator validates the invoice (valid → signing; a rejection → rejected; an outage → backoff). */
import { mapRegulatorFailure, type ValidationOutcome } from "../../../../adapters/regulator/port.ts";
import { isGatewayError } from "../../../../core/errors/gateway-error.ts";
import { outage, reject } from "../transitions.ts";
import type { Pass, StepResult } from "../types.ts";
import { statusFields, write } from "../writes.ts";

export async function validate(p: Pass): Promise<StepResult> {
  const d = p.cur;
  p.worked = true;
  let outcome: ValidationOutcome;
  try {
    outcome = await p.rt.o.regulator.validateInvoice(d.state, d.document, { requestId: d.operationId });
  } catch (e) {
    return outage(p, thrownCode(e), {});
  }
  if (outcome.kind === "valid") {
    return write(p, { ...statusFields(d, "validated", "signing"), step: "bill", outages: 0, lastError: null });
  }
  return reject(p, mapRegulatorFailure(outcome, "validateInvoice").code, outcome.message, "validation_failed");
}

/** The code of a regulator call that threw (it did not perform the operation). */
export function thrownCode(e: unknown): string {
  return isGatewayError(e) ? e.code : "GW_UPSTREAM_UNAVAILABLE";
}
