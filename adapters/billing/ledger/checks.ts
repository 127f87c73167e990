/** Argument checks of the ledger's operations, and the translation of store outages into billing outages. */
import { DependencyUnavailableError, isDependencyUnavailableError, type BillingIdentity } from "../../ports.ts";

export function checkBusiness(businessId: string): void {
  if (typeof businessId !== "string" || businessId === "" || businessId.length > 128) throw new TypeError("businessId must be 1 to 128 characters");
}

export function checkIdentity(i: BillingIdentity): void {
  if (typeof i !== "object" || i === null) throw new TypeError("billing identity required");
  for (const k of ["subBusinessId", "domain", "irn"] as const) {
    if (typeof i[k] !== "string" || i[k] === "") throw new TypeError(`billing identity ${k} must be a non-empty string`);
  }
  if (!Number.isSafeInteger(i.attemptNumber) || i.attemptNumber < 1) throw new TypeError("billing identity attemptNumber must be a positive integer");
}

export function checkAmount(amountKobo: number): void {
  if (!Number.isSafeInteger(amountKobo) || amountKobo <= 0) throw new RangeError("amountKobo must be a positive integer");
}

/** The identity's own four fields (nothing else the caller's object carries is stored). */
export function identityFields(i: BillingIdentity): BillingIdentity {
  return { subBusinessId: i.subBusinessId, domain: i.domain, irn: i.irn, attemptNumber: i.attemptNumber };
}

/** Store outages become billing outages (the port's contract); everything else passes through. */
export async function guardBilling<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isDependencyUnavailableError(e) && e.dependency !== "billing") {
      throw new DependencyUnavailableError("billing", `billing store unavailable (${e.dependency}): ${e.message}`, e.failureClass);
    }
    throw e;
  }
}
