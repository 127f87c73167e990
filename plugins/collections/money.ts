/**
 * Money of the collections service: held as integer kobo, shown as NGN numbers (two decimals at
 * most). Conversions never go through floating-point arithmetic on the kobo side.
 */

export const CURRENCY = "NGN";
/** Minimum payment into a link without a fixed amount (spec §8), and minimum fixed amount. */
export const MIN_AMOUNT_KOBO = 100_00;
/** Largest amount a link or a payment may carry: NGN 100,000,000.00. */
export const MAX_AMOUNT_KOBO = 100_000_000_00;

/** A JSON number of NGN → kobo; null when it has more than two decimals or is not finite. */
export function ngnToKobo(amount: number): number | null {
  if (!Number.isFinite(amount)) return null;
  const kobo = Math.round(amount * 100);
  return Math.abs(amount * 100 - kobo) < 1e-6 ? kobo : null;
}

/** "1,500.5" / "1500" / "1500.50" (a form field) → kobo; null when not such a number. */
export function parseNgnText(text: string): number | null {
  const t = text.trim().replaceAll(",", "");
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
}

/** Config amounts ("2000.00") → kobo. */
export function configNgnToKobo(text: string): number {
  const kobo = parseNgnText(text);
  if (kobo === null) throw new RangeError("not an NGN amount");
  return kobo;
}

/** kobo → the NGN number shown in JSON (1500.5 for 150050). */
export function koboToNgn(kobo: number): number {
  return kobo / 100;
}

/** kobo → "1,500.50" (pages, e-mails). */
export function formatNgn(kobo: number): string {
  const whole = Math.floor(kobo / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${whole}.${String(kobo % 100).padStart(2, "0")}`;
}

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
