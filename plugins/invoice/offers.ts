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
