/**
 * What Stored mode keeps in the document store (docs/stored-mode.md "Storage").
 *
 *   stored_invoices              one document per invoice, outbound (intake) and inbound (regulator
 *                                deliveries). `_id` = invoiceId (UUID). Unique sparse indexes:
 *                                `intakeKey` = `${businessId}|${HMAC(x-idempotency-key)}` (one invoice per
 *                                key), `irnLock` = `${state}|${subBusinessId}|${irn}` (one live invoice per
 *                                IRN; removed when the invoice is rejected or cancelled), `inboundKey` =
 *                                `${businessId}|${subBusinessId}|${HMAC(delivery id)}` (one inbound invoice
 *                                per delivery and represented business).
 *   stored_processor_heartbeats  one document per running processor (TTL), for /health/dependencies.
 *
 * Work is expressed by one field: `dueAt` (epoch ms) is set while the processor has something to do
 * (a step of the status model, a settlement, webhooks to enqueue) and null when the invoice is idle.
 * Processors claim `{ dueAt ≤ now }` with leases (DocumentStore.claim); every write is a
 * compare-and-set on `rev`, which every writer increments, so a processor, a transmit or a cancel
 * request never overwrite each other's change.
 *
 * Never stored: raw idempotency keys or delivery ids (only their HMAC).
 */
import { deriveKey } from "../../core/keyed-hash.ts";
import type { GwCode } from "../../core/errors/catalog.ts";
import { gwError, isGatewayError } from "../../core/errors/gateway-error.ts";
import { isDependencyUnavailableError, type Collection, type Doc, type DocumentStore, type Lease } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";

export const STORED_COLLECTIONS = {
  invoices: "stored_invoices",
  heartbeats: "stored_processor_heartbeats",
} as const;

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

/** Statuses whose invoice is waiting for the processor (the backlog of /health/dependencies). */
export const BACKLOG_STATUSES: readonly InvoiceStatus[] = ["pending", "validated", "signing", "transmitting"];

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
  reverseFor: { why: "regulator_rejected" | "regulator_not_called"; code: string; regulatorMessage?: string } | null;
  events: InvoiceEvent[];
  lease?: Lease;
}

export interface HeartbeatDoc extends Doc {
  host: string;
  pid: number;
  startedAt: string;
  /** Last loop iteration of the processor (epoch ms). */
  lastTickAt: number;
  inFlight: number;
  processed: number;
  concurrency: number;
  expiresAtMs: number;
}

export interface StoredStore {
  invoices: Collection<InvoiceDoc>;
  heartbeats: Collection<HeartbeatDoc>;
}

export function openStoredStore(store: DocumentStore): StoredStore {
  return {
    invoices: store.collection<InvoiceDoc>(STORED_COLLECTIONS.invoices, {
      indexes: [
        { fields: ["intakeKey"], unique: true, sparse: true },
        { fields: ["irnLock"], unique: true, sparse: true },
        { fields: ["inboundKey"], unique: true, sparse: true },
        { fields: ["dueAt"] },
        { fields: ["businessId", "createdAtMs"] },
        { fields: ["status", "createdAtMs"] },
      ],
    }),
    heartbeats: store.collection<HeartbeatDoc>(STORED_COLLECTIONS.heartbeats, { ttlField: "expiresAtMs" }),
  };
}

/**
 * A store call of a request: a store that cannot answer becomes `code` (503 with `detail`); gateway
 * errors, duplicate keys and caller bugs pass through unchanged.
 */
export async function storeCall<T>(fn: () => Promise<T>, code: GwCode, detail: string): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isGatewayError(e) || !isDependencyUnavailableError(e)) throw e;
    throw gwError(code, { detail, cause: e });
  }
}

/** HMAC key for idempotency keys, fingerprints and delivery ids, derived from the deployment secret. */
export function deriveStoredSecret(deploymentSecret: string): Buffer {
  return deriveKey(deploymentSecret, "stored-invoices-v1");
}

/** The merchant's view of an invoice (DECISIONS.md "Stored mode": lists leave `document` out). */
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
