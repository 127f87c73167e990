/**
 * The recovery jobs' vocabulary: their options, what one run did, the operator decisions they
 * take, and what every job reads (the records of the invoice kit, the audit log, the totals).
 */
import type { AlertChannel, BillingLedger, Collection, CoordinationStore, DocumentStore } from "../../../adapters/ports.ts";
import type { RegulatorClient } from "../../../adapters/regulator/port.ts";
import type { AuditDoc } from "../../../core/directory-store.ts";
import type { Logger } from "../../../core/log.ts";
import type { GatewayMetrics } from "../../../core/metrics.ts";
import type { FrozenInvoiceResolver } from "../../invoice/offers.ts";
import type { SignRecord } from "../../invoice/sign-attempts.ts";
import type { SubBusinessDoc } from "../../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";
import type { ClaimDoc } from "../../invoice/transmission-claims.ts";

export interface RecoveryOptions {
  store: DocumentStore;
  coordination: CoordinationStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  /** Stored invoices are resolved through the Stored service (the same path as the operator route). */
  stored: FrozenInvoiceResolver | null;
  alerts: AlertChannel | null;
  metrics: GatewayMetrics;
  log: Logger;
  now: () => number;
  intervalMs: number;
  settleAfterMs: number;
  abandonedAfterMs: number;
  overdueAfterMs: number;
  /** A transmission claim in_progress this long is stale. */
  claimStaleAfterMs: number;
  batchSize: number;
  /** Time to live of the run lease (renewed every third of it while a run lasts). */
  leaseMs: number;
}

export interface RunSummary {
  ran: boolean;
  confirmed: number;
  reversed: number;
  released: number;
  unprovable: number;
  claimsUnknown: number;
  overdue: number;
  /** Held debits with no owning record that this run could not prove, past `overdueAfterMs`. */
  unownedOverdue: number;
  /** The run lost its lease (a renewal failed) and stopped before its next record. */
  leaseLost: boolean;
}

export type SettleOutcome = "signed" | "not_signed";
export type TransmissionOutcome = "transmitted" | "not_transmitted";

/** Who decides: the operator's credential (`operator:<id>`) or "recovery", and the request. */
export interface Decider {
  actor: string;
  requestId: string;
}

export interface TransmissionResolution {
  operationId: string;
  businessId: string;
  claimState: "succeeded" | "released";
  resolution: { outcome: TransmissionOutcome; by: string; at: string };
}

/** Totals since the process started (the health report). */
export interface RecoveryTotals {
  confirmed: number;
  reversed: number;
  released: number;
  unprovable: number;
  claimsUnknown: number;
}

/** What every job reads and writes. */
export interface RecoveryContext {
  readonly o: RecoveryOptions;
  readonly records: Collection<SignRecord>;
  readonly invoices: Collection<InvoiceDoc>;
  readonly claims: Collection<ClaimDoc>;
  /** Represented businesses (the state of a held debit with no record). */
  readonly subs: Collection<SubBusinessDoc>;
  readonly audit: Collection<AuditDoc>;
  readonly totals: RecoveryTotals;
  /** One more action of `job` with `outcome` (gatehouse_recovery_actions_total). */
  count(job: string, outcome: string): void;
}
