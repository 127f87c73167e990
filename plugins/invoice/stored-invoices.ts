/**
 * Stored invoices (docs/stored-mode.md "Storage"): the records Stored mode writes, and recovery, the
 * operator's frozen list and the merchant client read; with the merchant's views of them.
 *
 *   stored_invoices   one document per invoice, outbound (intake) and inbound (regulator deliveries).
 *                     `_id` = invoiceId (UUID). Unique sparse indexes: `intakeKey` =
 *                     `${businessId}|${HMAC(x-idempotency-key)}` (one invoice per key), `irnLock` =
 *                     `${state}|${subBusinessId}|${irn}` (one live invoice per IRN; removed when the
 *                     invoice is rejected or cancelled), `inboundKey` =
 *                     `${businessId}|${subBusinessId}|${HMAC(delivery id)}` (one inbound invoice per
 *                     delivery and represented business).
 *
 * Work is expressed by one field: `dueAt` (epoch ms) is set while the processor has something to do
 * (a step of the status model, a settlement, webhooks to enqueue) and null when the invoice is idle.
 * Every write is a compare-and-set on `rev`, which every writer increments.
 */
import type { Collection, Doc, DocumentStore, Lease } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";

export const STORED_INVOICES_COLLECTION = "stored_invoices";

export const INVOICE_STATUSES = [
  "pending",
  "validated",
  "signing",
  "signed",
  "transmitting",
  "transmitted",
  "rejected",
  "cancelled",
  "frozen",
  "received",
] as const;
export type InvoiceStatus = (typeof INVOICE_STATUSES)[number];

export type Direction = "outbound" | "inbound";

/**
 * Where the processor is inside a status (internal):
 *   validate      pending: the regulator validation is next
 *   bill          validated / signing: the debit is next (status signing once the processor started it)
 *   dispatching   signing: the regulator may have been asked to sign: a pass that finds it here was
 *                 interrupted and the outcome cannot be proved → frozen
 *   reverse       signing: a reversal is owed (`reverseFor`), then rejected or back to validated
 *   transmit      transmitting: the regulator transmission is next
 *   transmitting  transmitting: dispatched; found by a later pass → frozen
 *   done          nothing in the status model to do
 */
export type Step = "validate" | "bill" | "dispatching" | "reverse" | "transmit" | "transmitting" | "done";

export type InvoiceEventType =
  | "invoice.accepted"
  | "invoice.signed"
  | "invoice.transmitted"
  | "invoice.rejected"
  | "invoice.frozen"
  | "invoice.inbound.received";

/** A webhook recorded with the transition that caused it, enqueued to the outbox afterwards. */
export interface InvoiceEvent {
  type: InvoiceEventType;
  data: Record<string, unknown>;
}

export interface LastError {
  code: string;
  at: string;
  /**
   * The regulator's own explanation of a refusal (validation failures, sign and transmit rejections):
   * free text, at most 500 characters (the real API sends no field-level violations). Kept on the
   * business's own invoice and its webhooks only, never logged.
   */
  regulatorMessage?: string;
}

/** Why a reversal is owed (step "reverse"). */
export interface ReversalOwed {
  why: "regulator_rejected" | "regulator_not_called";
  code: string;
  regulatorMessage?: string;
}

export interface InvoiceDoc extends Doc {
  businessId: string;
  state: RegulatorState;
  /** The approved domain the invoice came through (outbound); null for inbound invoices. */
  domain: string | null;
  subBusinessId: string;
  direction: Direction;
  irn: string;
  status: InvoiceStatus;
  statusHistory: Array<{ status: InvoiceStatus; at: string }>;
  /** Processor passes that worked on the invoice. */
  attempts: number;
  /** Business refusals (wallet declined) it may still meet before it is rejected. */
  budgetLeft: number;
  /** The retry budget it was accepted with (limits.storedRetryBudget then). */
  budget: number;
  lastError: LastError | null;
  operationId: string;
  /** The last resolution of a frozen invoice: outcome, who ("operator:<key id>" or "recovery"), when. */
  resolution?: { outcome: string; by: string; at: string };
  createdAt: string;
  updatedAt: string;
  createdAtMs: number;
  /** The stored invoice document (intake: with business_id and irn filled in). */
  document: Record<string, unknown>;
  /** Intake: the fields the gateway filled into the document (the rest is the body as sent). */
  filled?: string[];
  /** Inbound: HMAC of the canonical delivery. */
  fingerprint?: string;
  intakeKey?: string;
  irnLock?: string;
  inboundKey?: string;
  /** Sign fee in kobo, fixed at intake (the domain's fee then). */
  feeKobo: number;
  // --- processor ---
  rev: number;
  dueAt: number | null;
  step: Step;
  /** Billing attempt number of the current sign attempt (the processor numbers its own attempts). */
  signAttempt: number;
  /** Consecutive dependency outages (the backoff exponent); 0 after progress. */
  outages: number;
  /** A debit call whose outcome is unknown (billing unavailable): cancellation waits for billing. */
  billDoubt: boolean;
  /** The regulator signed; the billing confirmation is still owed. */
  settle: boolean;
  /** Why a reversal is owed (step "reverse"). */
  reverseFor: ReversalOwed | null;
  events: InvoiceEvent[];
  lease?: Lease;
}

/** The collection with its indexes. */
export function openStoredInvoices(store: DocumentStore): Collection<InvoiceDoc> {
  return store.collection<InvoiceDoc>(STORED_INVOICES_COLLECTION, {
    indexes: [
      { fields: ["intakeKey"], unique: true, sparse: true },
      { fields: ["irnLock"], unique: true, sparse: true },
      { fields: ["inboundKey"], unique: true, sparse: true },
      { fields: ["dueAt"] },
      { fields: ["businessId", "createdAtMs"] },
      { fields: ["status", "createdAtMs"] },
      // The operator's list of every business's invoices, newest first (GET /admin/invoices).
      { fields: ["createdAtMs"] },
      // The lists' other filters (GET /invoices?subBusinessId=, ?direction=), newest first: without
      // them a page walks the business's invoices and reads each row's JSON until it has 50.
      { fields: ["subBusinessId", "createdAtMs"] },
      { fields: ["businessId", "direction", "createdAtMs"] },
      // The frozen-operations list (console, GET /admin/invoices/frozen), newest change first: without
      // them SQLite sorts every frozen invoice for each page.
      { fields: ["status", "updatedAt", "operationId"] },
      { fields: ["businessId", "status", "updatedAt", "operationId"] },
      // The console's search box: an invoice by its IRN or its operation ID.
      { fields: ["irn"] },
      { fields: ["operationId"] },
    ],
  });
}

/** A stored invoice as the API shows it (`GET /invoices/{id}` adds `document`; lists leave it out). */
export type InvoiceView = { invoiceId: string } & Pick<
  InvoiceDoc,
  "subBusinessId" | "direction" | "irn" | "status" | "statusHistory" | "attempts" | "budgetLeft" | "lastError" | "operationId" | "createdAt" | "updatedAt"
> & { document?: InvoiceDoc["document"] };

/** The intake's 202 answer (DECISIONS.md "Stored mode"). */
export type IntakeView = { invoiceId: string } & Pick<InvoiceDoc, "status" | "irn" | "subBusinessId" | "createdAt">;

export function intakeView(doc: InvoiceDoc): IntakeView {
  return { invoiceId: doc._id, status: doc.status, irn: doc.irn, subBusinessId: doc.subBusinessId, createdAt: doc.createdAt };
}

export function invoiceView(doc: InvoiceDoc, withDocument: boolean): InvoiceView {
  const view: InvoiceView = {
    invoiceId: doc._id,
    subBusinessId: doc.subBusinessId,
    direction: doc.direction,
    irn: doc.irn,
    status: doc.status,
    statusHistory: doc.statusHistory,
    attempts: doc.attempts,
    budgetLeft: doc.budgetLeft,
    lastError: doc.lastError,
    operationId: doc.operationId,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
  if (withDocument) view.document = doc.document;
  return view;
}

/** The `data` of an invoice webhook: what a receiver needs to look the invoice up (never the document). */
export function eventData(doc: InvoiceDoc, status: InvoiceStatus, at: string, lastError: LastError | null = null): Record<string, unknown> {
  return {
    invoiceId: doc._id,
    subBusinessId: doc.subBusinessId,
    direction: doc.direction,
    irn: doc.irn,
    status,
    operationId: doc.operationId,
    at,
    ...(lastError ? { lastError } : {}),
  };
}
