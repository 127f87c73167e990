/**
 * The Stored processor's vocabulary: its options, the worker it is, and what one pass over one
 * invoice carries from step to step (processor/pass.ts).
 */
import type { AlertChannel, BillingLedger, Collection, Lease } from "../../../adapters/ports.ts";
import type { RegulatorClient } from "../../../adapters/regulator/port.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import type { Logger } from "../../../core/log.ts";
import type { Worker } from "../../../core/plugin.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";
import type { InvoiceWebhooks } from "../events.ts";
import type { StoredStore } from "../store.ts";

/** Test-only crash points (a hook that kills the process simulates a processor dying there). */
export interface ProcessorHooks {
  /** After the debit was confirmed, before "dispatching" is recorded and the regulator called. */
  afterDebit?(invoiceId: string): void | Promise<void>;
  /** After the regulator answered the sign call, before the outcome is recorded. */
  afterSign?(invoiceId: string): void | Promise<void>;
}

export interface ProcessorOptions {
  store: StoredStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  webhooks: InvoiceWebhooks;
  directory: TenantDirectory;
  log: Logger;
  /** HMAC key of the billing fingerprints (deriveStoredSecret). */
  secret: Buffer;
  concurrency: number;
  /**
   * At most this many claims asked for together in one claim round (default 1: each claim awaited
   * before the next). More only where the store takes claims asked for together without making
   * them race for the same invoice (the SQLite writer runs them one after another in one
   * transaction; plugin.ts decides).
   */
  claimsPerRound?: number;
  pollMs: number;
  leaseMs: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  heartbeatMs: number;
  /** Lease owner id; default `<host>:<pid>:<random>`. */
  owner?: string;
  hooks?: ProcessorHooks;
  /** Immediate operator signals (spec §6): frozen invoices, unconfirmed reversals. */
  alerts?: AlertChannel;
}

export interface StoredProcessor extends Worker {
  /** Looks for due work at once (a new intake in this process). */
  wake(): void;
  readonly owner: string;
}

/** What every step of a pass reads: the options, this processor's lease owner id, whether it stops. */
export interface ProcessorRuntime {
  readonly o: ProcessorOptions;
  readonly owner: string;
  readonly invoices: Collection<InvoiceDoc>;
  /** stop() was called: a pass hands its invoice back at its next step. */
  stopping(): boolean;
}

/** One pass over one claimed invoice. */
export interface Pass {
  readonly rt: ProcessorRuntime;
  cur: InvoiceDoc;
  lease: Lease;
  /** The events on `cur` were enqueued in this pass: the next write may drop them. */
  flushed: boolean;
  /** A dependency was called in this pass: the next write counts the pass in `attempts` (once). */
  worked: boolean;
  counted: boolean;
  /** The billing confirmation failed in this pass (retried after backoff). */
  settleFailed: boolean;
  /** A dependency outage was met in this pass. */
  outage: boolean;
}

/**
 * What a write did: "ok"; "changed" (someone else wrote first: `cur` is fresh, the pass re-evaluates);
 * "lost" (the lease is gone); "failed" (the store did not answer).
 */
export type Written = "ok" | "changed" | "lost" | "failed";

/** What a step leaves: a write's result, or "done" (the pass ended and released the invoice). */
export type StepResult = Written | "done";
