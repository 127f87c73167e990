/**
 * What the invoice plugins offer each other through the plugin kit (core/plugin.ts `OfferKey`), so
 * none imports another's folder.
 */
import { defineOffer } from "../../core/plugin.ts";

/** An operator's (or the recovery jobs') decision on a frozen Stored invoice. */
export type FrozenInvoiceOutcome = "signed" | "not_signed" | "transmitted" | "not_transmitted";

export interface FrozenInvoiceResolver {
  /**
   * Resolves a frozen Stored invoice after checking the regulator; wakes the processor when the
   * invoice has work again. Throws the catalog's errors (not found, state conflict), or the store's
   * DependencyUnavailableError when it cannot answer.
   */
  resolve(operator: { requestId: string; credentialId: string; actor?: string }, invoiceId: string, outcome: FrozenInvoiceOutcome): Promise<unknown>;
}

/** Offered by stored-processing; used by recovery to settle frozen Stored signs it can prove. */
export const FROZEN_INVOICE_RESOLVER = defineOffer<FrozenInvoiceResolver>("frozenInvoiceResolver");

/** Who records a decision on a frozen operation: `operator:<credentialId>`, and the request. */
export interface OperatorDecider {
  actor: string;
  requestId: string;
}

/**
 * The operator's decisions on frozen Pass-through operations, as the Admin API routes
 * `POST /admin/sign-attempts/{operationId}/resolution` and `POST /admin/transmissions/{operationId}/resolution`
 * make them (same settlement, same record, same audit entry). Throws the ledger's BillingError when
 * it refuses a settlement, or the store's DependencyUnavailableError.
 */
export interface FrozenOperationResolver {
  resolveSignAttempt(
    operationId: string,
    outcome: "signed" | "not_signed",
    by: OperatorDecider,
  ): Promise<{ operationId: string; businessId: string; status: string; money: string } | "not_found" | "not_held">;
  resolveTransmission(
    operationId: string,
    outcome: "transmitted" | "not_transmitted",
    by: OperatorDecider,
  ): Promise<{ operationId: string; businessId: string; claimState: string } | "not_found" | "not_unknown">;
}

/** Offered by recovery (which owns the Admin API resolution routes); used by the operator console. */
export const FROZEN_OPERATION_RESOLVER = defineOffer<FrozenOperationResolver>("frozenOperationResolver");
