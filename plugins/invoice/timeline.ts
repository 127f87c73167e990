/**
 * A Stored invoice's story in words, for the pages that show one invoice (the operator console's
 * invoice page, the merchant dashboard's): its status timeline with the time spent in each status,
 * the processor's attempts and retry budget, the last error with the catalog's words for its code,
 * the regulator's answers (what it did at each step, and its own explanation of a refusal), what
 * the processor waits for now, and an operator's resolution.
 *
 * Built from the stored document alone (no store read), so a page decides how it loads the
 * invoice. Never the invoice body: `document`, `filled` and the processor's lease stay out, and
 * nothing here is logged.
 */
import { CATALOG, docsUrl, isGwCode } from "../../core/errors/catalog.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import type { Direction, InvoiceDoc, InvoiceStatus, Step } from "./stored-invoices.ts";

/** One status the invoice entered, with how long it stayed there (null for the current one). */
export interface TimelineEntry {
  status: InvoiceStatus;
  at: string;
  /** What the status means, in a few words. */
  meaning: string;
  /** Milliseconds until the next status; null for the status it is in now. */
  lastedMs: number | null;
  current: boolean;
}

/** An error code in words: the catalog's title, meaning and what to do (unknown codes keep their code only). */
export interface CodeInWords {
  code: string;
  title: string;
  meaning: string;
  /** The action the catalog names (CORRECT_REQUEST, CONTACT_SUPPORT, ...); null for an unknown code. */
  action: string | null;
  /** The code's documentation page; null for an unknown code. */
  docs: string | null;
}

/** The last error: the code in words, when it happened and the regulator's own explanation, if it gave one. */
export interface TimelineError extends CodeInWords {
  at: string;
  /** The regulator's free-text explanation of a refusal (at most 500 characters as stored). */
  regulatorMessage: string | null;
  /** Whether the regulator refused (validation, sign or transmit rejection) rather than a dependency failing. */
  fromRegulator: boolean;
}

/** What the regulator answered at one step, as far as the invoice's record shows it. */
export interface RegulatorAnswer {
  at: string;
  step: "validation" | "signing" | "transmission" | "delivery";
  /** "accepted", "refused" or "unconfirmed" (the answer never came: the invoice froze). */
  verdict: "accepted" | "refused" | "unconfirmed";
  /** The answer in words. */
  words: string;
  /** The regulator's explanation of a refusal, when it sent one. */
  regulatorMessage: string | null;
}

export interface InvoiceTimeline {
  invoiceId: string;
  businessId: string;
  state: RegulatorState;
  domain: string | null;
  subBusinessId: string;
  direction: Direction;
  irn: string;
  operationId: string;
  status: InvoiceStatus;
  statusMeaning: string;
  entries: TimelineEntry[];
  /** Processor passes that worked on the invoice. */
  attempts: number;
  /** Billing attempt number of the current sign attempt. */
  signAttempt: number;
  /** Business refusals (wallet declined) it may still meet, out of `budget`. */
  budgetLeft: number;
  budget: number;
  /** Consecutive dependency outages it is backing off from (0 after progress). */
  outages: number;
  lastError: TimelineError | null;
  answers: RegulatorAnswer[];
  /** What the processor does next, in words; null when the invoice is idle. */
  next: { what: string; dueAt: string } | null;
  resolution: { outcome: string; by: string; at: string } | null;
  feeKobo: number;
  createdAt: string;
  updatedAt: string;
}

/** The meaning of each status, as the console and dashboard say it. */
export const STATUS_MEANINGS: Readonly<Record<InvoiceStatus, string>> = {
  pending: "accepted by the gateway, waiting for the regulator's validation",
  validated: "validated by the regulator, waiting to be charged and signed",
  signing: "the sign fee is being charged and the regulator asked to sign",
  signed: "signed by the regulator",
  transmitting: "being transmitted to the regulator",
  transmitted: "transmitted: the regulator has it",
  rejected: "rejected: it will not be signed or transmitted",
  cancelled: "cancelled before it was signed",
  frozen: "frozen: the regulator's answer was lost, an operator decides after checking",
  received: "received from the regulator (an inbound invoice)",
};

/** The catalog's words for a code; a code outside the catalog keeps its code as its title. */
export function codeInWords(code: string): CodeInWords {
  if (!isGwCode(code)) return { code, title: code, meaning: "", action: null, docs: null };
  const row = CATALOG[code];
  return { code, title: row.title, meaning: row.description, action: row.action, docs: docsUrl(code) };
}

/** The invoice's timeline (durations run between recorded statuses, so it reads no clock). */
export function invoiceTimeline(doc: InvoiceDoc): InvoiceTimeline {
  return {
    invoiceId: doc._id,
    businessId: doc.businessId,
    state: doc.state,
    domain: doc.domain,
    subBusinessId: doc.subBusinessId,
    direction: doc.direction,
    irn: doc.irn,
    operationId: doc.operationId,
    status: doc.status,
    statusMeaning: STATUS_MEANINGS[doc.status] ?? doc.status,
    entries: timelineEntries(doc),
    attempts: doc.attempts,
    signAttempt: doc.signAttempt,
    budgetLeft: doc.budgetLeft,
    budget: doc.budget,
    outages: doc.outages,
    lastError: _lastError(doc),
    answers: regulatorAnswers(doc),
    next: _next(doc),
    resolution: doc.resolution ?? null,
    feeKobo: doc.feeKobo,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

/** The status history, oldest first, with how long each status lasted. */
export function timelineEntries(doc: Pick<InvoiceDoc, "statusHistory" | "status">): TimelineEntry[] {
  const h = doc.statusHistory ?? [];
  return h.map((e, i) => {
    const next = h[i + 1];
    const lastedMs = next ? Math.max(0, Date.parse(next.at) - Date.parse(e.at)) : null;
    return { status: e.status, at: e.at, meaning: STATUS_MEANINGS[e.status] ?? e.status, lastedMs: Number.isFinite(lastedMs) ? lastedMs : null, current: !next };
  });
}

/**
 * What the regulator answered, read from the statuses the invoice went through and its last error:
 * validated / signed / transmitted / received are its acceptances; a rejection names the step that
 * was refused (with the regulator's message); frozen means the answer never came.
 */
export function regulatorAnswers(doc: Pick<InvoiceDoc, "statusHistory" | "lastError" | "direction">): RegulatorAnswer[] {
  const answers: RegulatorAnswer[] = [];
  const history = doc.statusHistory ?? [];
  for (const [i, e] of history.entries()) {
    const accepted = _ACCEPTED[e.status];
    if (accepted) {
      answers.push({ at: e.at, step: accepted.step, verdict: "accepted", words: accepted.words, regulatorMessage: null });
      continue;
    }
    if (e.status !== "rejected" && e.status !== "frozen") continue;
    const err = doc.lastError && history.slice(i + 1).every((later) => later.status === e.status) ? doc.lastError : null;
    const code = err?.code ?? "";
    if (e.status === "frozen") {
      const step = code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmission" : "signing";
      answers.push({ at: e.at, step, verdict: "unconfirmed", words: `No answer to the ${step} request: it may or may not have happened at the regulator.`, regulatorMessage: null });
      continue;
    }
    const step = _refusedStep(code, history[i - 1]?.status);
    if (!step) continue; // rejected by the business side (wallet), not by the regulator
    answers.push({ at: e.at, step, verdict: "refused", words: `The regulator refused the ${step}${code ? ` (${codeInWords(code).title})` : ""}.`, regulatorMessage: err?.regulatorMessage ?? null });
  }
  return answers;
}

// --- Internal helpers ---

const _ACCEPTED: Partial<Record<InvoiceStatus, { step: RegulatorAnswer["step"]; words: string }>> = {
  validated: { step: "validation", words: "The regulator validated the invoice." },
  signed: { step: "signing", words: "The regulator signed the invoice." },
  transmitted: { step: "transmission", words: "The regulator accepted the transmission." },
  received: { step: "delivery", words: "The regulator delivered this invoice to the gateway." },
};

/** Codes that say the regulator itself refused (as opposed to the wallet or a dependency). */
const _REGULATOR_REFUSALS: ReadonlySet<string> = new Set(["GW_SIGN_REJECTED", "GW_INVOICE_NOT_TRANSMITTABLE"]);

/** Which regulator step a rejection came from, or null when the regulator did not refuse. */
function _refusedStep(code: string, before: InvoiceStatus | undefined): RegulatorAnswer["step"] | null {
  if (code.startsWith("GW_BILLING_")) return null;
  if (code === "GW_SIGN_REJECTED" || before === "signing") return "signing";
  if (before === "transmitting") return "transmission";
  if (before === "pending" || before === undefined) return "validation";
  return _REGULATOR_REFUSALS.has(code) ? "signing" : null;
}

function _lastError(doc: InvoiceDoc): TimelineError | null {
  const e = doc.lastError;
  if (!e) return null;
  const fromRegulator = e.regulatorMessage !== undefined || _REGULATOR_REFUSALS.has(e.code) || (doc.status === "rejected" && !e.code.startsWith("GW_BILLING_"));
  return { ...codeInWords(e.code), at: e.at, regulatorMessage: e.regulatorMessage ?? null, fromRegulator };
}

const _NEXT: Readonly<Record<Step, string>> = {
  validate: "ask the regulator to validate it",
  bill: "charge the sign fee",
  dispatching: "find out whether the interrupted sign request reached the regulator",
  reverse: "give the sign fee back",
  transmit: "transmit it to the regulator",
  transmitting: "find out whether the interrupted transmission reached the regulator",
  done: "send the webhooks and settle what is owed",
};

function _next(doc: InvoiceDoc): InvoiceTimeline["next"] {
  if (doc.dueAt === null || doc.dueAt === undefined) return null;
  const what = doc.outages > 0 ? `${_NEXT[doc.step] ?? doc.step} (after ${doc.outages} dependency outage${doc.outages === 1 ? "" : "s"})` : (_NEXT[doc.step] ?? doc.step);
  return { what, dueAt: new Date(doc.dueAt).toISOString() };
}
