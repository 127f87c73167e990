/**
 * Money of the collections service: limits, fees and the split between merchant and customer, in
 * integer kobo (conversions from core/money.ts).
 */

export const CURRENCY = "NGN";
/** Minimum payment into a link without a fixed amount (spec §8), and minimum fixed amount. */
export const MIN_AMOUNT_KOBO = 100_00;
/** Largest amount a link or a payment may carry: NGN 100,000,000.00. */
export const MAX_AMOUNT_KOBO = 100_000_000_00;

// The conversions are the project's own (core/money.ts); collections adds its limits and fees.
export { formatNgn, koboToNgn, ngnTextToKobo, ngnToKobo, parseNgnText } from "../../../core/money.ts";

export interface FeePolicy {
  /** Percent of the amount, e.g. 1.5. */
  percent: number;
  /** Cap in kobo. */
  capKobo: number;
}

/** The fee of an amount: `percent` of it, rounded half-up to the kobo, capped at `capKobo`. */
export function feeKobo(amountKobo: number, policy: FeePolicy): number {
  const basisPoints = Math.round(policy.percent * 100);
  return Math.min(Math.floor((amountKobo * basisPoints + 5_000) / 10_000), policy.capKobo);
}

export type FeeBearer = "MERCHANT" | "CUSTOMER";

export interface Split {
  /** The amount the link asks for (what the transaction's `amount` shows). */
  amountKobo: number;
  feeKobo: number;
  /** What the customer is charged: amount (MERCHANT) or amount + fee (CUSTOMER). */
  chargeKobo: number;
  /** What the business wallet receives: amount − fee (MERCHANT) or amount (CUSTOMER). */
  netKobo: number;
}

export function split(amountKobo: number, bearer: FeeBearer, policy: FeePolicy): Split {
  const fee = feeKobo(amountKobo, policy);
  return bearer === "CUSTOMER"
    ? { amountKobo, feeKobo: fee, chargeKobo: amountKobo + fee, netKobo: amountKobo }
    : { amountKobo, feeKobo: fee, chargeKobo: amountKobo, netKobo: amountKobo - fee };
}
