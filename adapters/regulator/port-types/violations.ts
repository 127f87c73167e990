/**
 * The regulator's reasons for rejecting an invoice document, as `errors` items (spec §7.3): its
 * free-text `error.details` ("invoice_line[0].price.price_amount must be greater than 0; …") read
 * into a body JSON Pointer and a fixed detail of the gateway's own. The regulator's words are never
 * passed on (they may repeat the document): a phrase the gateway knows gives its code and fixed
 * detail, any other reason one item without a pointer. At most 20 items.
 */
import type { Violation } from "../../../core/errors/gateway-error.ts";

const MAX = 20;

/** A document field path: `issue_date`, `accounting_supplier_party.tin`, `invoice_line[0].price`. */
const FIELD_PATH = /^([a-z][a-z0-9_]*(?:\[\d{1,4}\])?(?:\.[a-z][a-z0-9_]*(?:\[\d{1,4}\])?)*)\s+(.+)$/;

/** The reasons the gateway knows, and what it says for them. */
const KNOWN: ReadonlyArray<readonly [RegExp, Violation["code"], string]> = [
  [/^is required$/, "REQUIRED", "required by the regulator"],
  [/^must be (a|an) (string|object|number|array)$/, "TYPE", "wrong type for the regulator"],
  [/^must be a date YYYY-MM-DD$/, "FORMAT", "must be a date YYYY-MM-DD"],
  [/^must be a time HH:MM:SS$/, "FORMAT", "must be a time HH:MM:SS"],
  [/^must be an email address$/, "FORMAT", "must be an email address"],
  [/^must start with \+/, "FORMAT", "must start with + and the country code"],
  [/^is not a known code$/, "FORMAT", "not one of the regulator's codes (see its resource lists)"],
  [/^must be greater than 0$/, "RANGE", "must be greater than 0"],
  [/^must not be negative$/, "RANGE", "must not be negative"],
  [/^must have at least one/, "RANGE", "must not be empty"],
];

const UNKNOWN_REASON: Violation = {
  location: "body",
  code: "FORMAT",
  detail: "rejected by the regulator; check the document against the regulator's schema",
};

/** The violations the regulator's message names; empty when it names none (or sends no message). */
export function regulatorViolations(message: string | undefined): Violation[] {
  if (!message) return [];
  const out: Violation[] = [];
  const seen = new Set<string>();
  for (const part of message.split(/;\s*/)) {
    const v = _violation(part.trim());
    if (!v) continue;
    const key = `${v.pointer ?? ""}|${v.code}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(v);
    if (out.length === MAX) break;
  }
  return out;
}

// --- Internal helpers ---

function _violation(part: string): Violation | null {
  if (part === "") return null;
  const m = FIELD_PATH.exec(part);
  if (!m) return UNKNOWN_REASON;
  const known = KNOWN.find(([re]) => re.test(m[2]!));
  if (!known) return { ...UNKNOWN_REASON, pointer: _pointer(m[1]!) };
  return { location: "body", pointer: _pointer(m[1]!), code: known[1], detail: known[2] };
}

/** `invoice_line[0].price` → `/invoice_line/0/price`. */
function _pointer(path: string): string {
  return "/" + path.replace(/\[(\d+)\]/g, ".$1").split(".").join("/");
}
