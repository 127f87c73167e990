/**
 * Naira amounts, for every service: held as integer kobo, shown as NGN numbers (two decimals at
 * most). Conversions never go through floating-point arithmetic on the kobo side.
 */

/** A JSON number of NGN → kobo; null when it has more than two decimals or is not finite. */
export function ngnToKobo(amount: number): number | null {
  if (!Number.isFinite(amount)) return null;
  const kobo = Math.round(amount * 100);
  return Math.abs(amount * 100 - kobo) < 1e-6 ? kobo : null;
}

/** "1,500.5" / "1500" / "1500.50" (config values, form fields) → kobo; null when not such a number. */
export function parseNgnText(text: string): number | null {
  const t = text.trim().replaceAll(",", "");
  const m = /^(\d{1,12})(?:\.(\d{1,2}))?$/.exec(t);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? "").padEnd(2, "0"));
}

/** Config amounts ("2000.00", already validated by the schema) → kobo. */
export function ngnTextToKobo(text: string): number {
  const kobo = parseNgnText(text);
  if (kobo === null) throw new RangeError("not an NGN amount");
  return kobo;
}

/** kobo → the NGN number shown in JSON (1500.5 for 150050). */
export function koboToNgn(kobo: number): number {
  return Number((kobo / 100).toFixed(2));
}

/** kobo → "1,500.50" (pages, e-mails). */
export function formatNgn(kobo: number): string {
  const whole = Math.floor(kobo / 100).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  return `${whole}.${String(kobo % 100).padStart(2, "0")}`;
}
