/**
 * What Stored mode keeps in the document store (docs/stored-mode.md "Storage"): its invoices (the
 * invoice kit's records, plugins/invoice/stored-invoices.ts, which recovery and the operator's frozen
 * list read too) and its processors' heartbeats.
 *
 *   stored_invoices              one document per invoice (see the kit)
 *   stored_processor_heartbeats  one document per running processor (TTL), for /health/dependencies.
 *
 * Processors claim `{ dueAt ≤ now }` with leases (DocumentStore.claim); every write is a
 * compare-and-set on `rev`, which every writer increments, so a processor, a transmit or a cancel
 * request never overwrite each other's change.
 *
 * Never stored: raw idempotency keys or delivery ids (only their HMAC).
 */
import { deriveKey } from "../../core/keyed-hash.ts";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import { openStoredInvoices, STORED_INVOICES_COLLECTION, type InvoiceDoc, type InvoiceStatus } from "../invoice/stored-invoices.ts";

export {
  eventData,
  intakeView,
  INVOICE_STATUSES,
  invoiceView,
  type Direction,
  type IntakeView,
  type InvoiceDoc,
  type InvoiceEvent,
  type InvoiceEventType,
  type InvoiceStatus,
  type InvoiceView,
  type LastError,
  type Step,
} from "../invoice/stored-invoices.ts";

export const STORED_COLLECTIONS = {
  invoices: STORED_INVOICES_COLLECTION,
  heartbeats: "stored_processor_heartbeats",
} as const;

/** Statuses whose invoice is waiting for the processor (the backlog of /health/dependencies). */
export const BACKLOG_STATUSES: readonly InvoiceStatus[] = ["pending", "validated", "signing", "transmitting"];

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
    invoices: openStoredInvoices(store),
    heartbeats: store.collection<HeartbeatDoc>(STORED_COLLECTIONS.heartbeats, { ttlField: "expiresAtMs" }),
  };
}

/** HMAC key for idempotency keys, fingerprints and delivery ids, derived from the deployment secret. */
export function deriveStoredSecret(deploymentSecret: string): Buffer {
  return deriveKey(deploymentSecret, "stored-invoices-v1");
}
