/**
 * Times of the collections service: every `YYYY-MM-DD HH:MM:SS` value is UTC (DECISIONS.md
 * "Times"). Link windows (`start_date`, `end_date`) accept ISO 8601 dates or date-times.
 */

/**
 * epoch ms → `YYYY-MM-DD HH:MM:SS` (UTC): `toISOString()`'s first 19 characters with a space for the
 * `T`, written from the calendar arithmetic for years 0000–9999 (a list of 1 000 accounts formats
 * 2 000 times; building a Date and its ISO string each time was a tenth of the list's CPU).
 */
export function formatTime(ms: number): string {
  if (!(ms >= 0 && ms < _YEAR_10000)) return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
  const days = Math.floor(ms / 86_400_000);
  const secs = Math.floor((ms - days * 86_400_000) / 1000);
  // Civil date from days since 1970-01-01 (H. Hinnant's days_from_civil, inverted), years ≥ 0.
  const z = days + 719_468;
  const era = Math.floor(z / 146_097);
  const doe = z - era * 146_097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36_524) - Math.floor(doe / 146_096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  const h = Math.floor(secs / 3600);
  const mi = Math.floor((secs % 3600) / 60);
  return `${_pad4(y)}-${_2[m]}-${_2[d]} ${_2[h]}:${_2[mi]}:${_2[secs % 60]}`;
}

export function formatTimeOrNull(ms: number | null | undefined): string | null {
  return typeof ms === "number" ? formatTime(ms) : null;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const FULL_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 date (`2025-03-01`, a whole UTC day) or date-time (`2025-03-01T09:30:00Z`,
 * `…+01:00`; without an offset it is UTC; a space instead of `T` is accepted) → the instant the
 * window starts (`edge` "start": the first millisecond) or ends (`edge` "end": a date means the
 * last millisecond of that day). Null when the text is not such a value or not a real calendar
 * date/time.
 */
export function parseWindowEdge(text: string, edge: "start" | "end"): number | null {
  const d = DATE.exec(text);
  if (d) {
    const start = _utc(Number(d[1]), Number(d[2]), Number(d[3]), 0, 0, 0, 0);
    if (start === null) return null;
    return edge === "start" ? start : start + 86_400_000 - 1;
  }
  const m = DATE_TIME.exec(text);
  if (!m) return null;
  const ms = m[7] ? Number(m[7].slice(0, 3).padEnd(3, "0")) : 0;
  const base = _utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6] ?? "0"), ms);
  if (base === null) return null;
  const zone = m[8];
  if (!zone || zone.toUpperCase() === "Z") return base;
  const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
  const hours = Number(z[2]);
  const minutes = Number(z[3]);
  if (hours > 23 || minutes > 59) return null;
  const offset = (hours * 60 + minutes) * 60_000;
  return z[1] === "+" ? base - offset : base + offset;
}

/** `YYYY-MM-DD HH:MM:SS` (UTC) → epoch ms; null when not exactly that format or not a real time. */
export function parseFullTime(text: string): number | null {
  const m = FULL_TIME.exec(text);
  if (!m) return null;
  return _utc(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6]), 0);
}

/**
 * A virtual-account list date filter: `YYYY-MM-DD` (a whole UTC day: `start` → its first
 * millisecond, `end` → its last) or `YYYY-MM-DD HH:MM:SS` (`start` → that second, `end` → the last
 * millisecond of that second, so an account shown with that `createdAt` is included). Null when
 * neither.
 */
export function parseDateFilter(text: string, edge: "start" | "end"): number | null {
  if (DATE.test(text)) return parseWindowEdge(text, edge);
  const t = parseFullTime(text);
  if (t === null) return null;
  return edge === "start" ? t : t + 999;
}

// --- Internal helpers ---

/** 10000-01-01T00:00:00Z: from there `toISOString()` writes a six-digit year with a sign. */
const _YEAR_10000 = 253_402_300_800_000;
/** "00" … "59". */
const _2 = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, "0"));

function _pad4(n: number): string {
  return n >= 1000 ? String(n) : String(n).padStart(4, "0");
}

function _utc(y: number, mo: number, d: number, h: number, mi: number, s: number, ms: number): number | null {
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || s > 59) return null;
  const t = Date.UTC(y, mo - 1, d, h, mi, s, ms);
  const back = new Date(t);
  if (back.getUTCFullYear() !== y || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return null;
  return t;
}
