/** The alerts port (re-exported by adapters/ports.ts). */
import type { FindPage } from "./document-store.ts";

/**
 * Immediate signals (no threshold): each names what is at risk; the runbook of each is a section of
 * docs/operations.md "Alerts".
 */
export type ImmediateSignal =
  /** The regulator refused the deployment's own credentials (every staged credential). */
  | "regulator_credentials_rejected"
  /** A billed sign whose regulator outcome cannot be proved: frozen, the fee held. */
  | "sign_outcome_unconfirmed"
  /** The regulator did not sign, but the fee reversal could not be confirmed. */
  | "sign_reversal_unconfirmed"
  /** Signed and charged, but the settlement (billing confirmation) could not complete. */
  | "sign_recovery_unavailable"
  /** The record of what happened after a regulator sign or transmission could not be written. */
  | "post_sign_state_missing"
  /** A transmission whose regulator outcome cannot be proved. */
  | "transmit_outcome_unconfirmed"
  /** A request came back to the gateway carrying its hop marker (508). */
  | "routing_loop"
  /** The in-flight capacity guard refused work (503). */
  | "capacity_exceeded"
  /** The coordination store cannot enforce quotas: protected work fails closed (503). */
  | "quota_unenforceable"
  /** A dependency's circuit opened (spec §3.5). */
  | "circuit_opened"
  /** A held debit or a frozen operation the recovery job could neither confirm nor reverse. */
  | "recovery_unprovable"
  /** Frozen operations, held money or unknown transmissions unresolved past the configured age. */
  | "reconciliation_overdue";

/**
 * What code hands to `raise`. Only these fields exist; the channel keeps each only when it has the
 * allowlisted format (ids are UUIDs, codes are catalog codes, names are plain identifiers) and drops
 * anything else, so no secret, key, taxpayer data or body can reach an alert.
 */
export interface AlertSignal {
  signal: ImmediateSignal;
  dependency?: string;
  operation?: string;
  failureClass?: string;
  /** The gateway's request id (UUID). */
  requestId?: string;
  /** The operation id (UUID) of the sign attempt, invoice or transmission. */
  operationId?: string;
  /** The provider's correlation id (a UUID the regulator sent). */
  providerId?: string;
  /** The public GW_* code the caller was answered. */
  code?: string;
  /** How many things the signal is about (overdue reconciliation: how many operations). */
  count?: number;
}

export type AlertKind = "sustained_failure" | "recovered" | "immediate";

/** An alert as delivered: the allowlisted context of spec §6 and nothing else. */
export interface Alert {
  id: string;
  kind: AlertKind;
  /** "dependency_sustained_failure", "dependency_recovered" or an ImmediateSignal. */
  signal: string;
  severity: "critical" | "warning" | "info";
  /** A fixed sentence per signal (no request data). */
  summary: string;
  environment: string;
  dependency?: string;
  operation?: string;
  failureClass?: string;
  firstOccurrence: string;
  lastOccurrence: string;
  count: number;
  /** Failures / calls in the sustained-failure window. */
  ratio?: number;
  requestIds: string[];
  operationId?: string;
  providerId?: string;
  code?: string;
  /** docs/operations.md section for this signal. */
  runbook: string;
}

export interface DeadLetter {
  id: string;
  alert: Alert;
  /** "dead": delivery exhausted; "replayed": an operator's replay delivered it. */
  status: "dead" | "replayed";
  attempts: number;
  lastFailure: { failureClass: string; upstreamStatus: number | null };
  deadAt: string;
  replayedAt: string | null;
}

/** What the dependency snapshot shows of the alert channel. */
export interface AlertChannelStatus {
  status: "healthy" | "unhealthy" | "unknown";
  channels: string[];
  webhook: { configured: boolean; lastDelivery: { at: string; outcome: "delivered" | "failed"; alertId: string } | null; pending: number };
  deadLetters: number | null;
  sent: number;
  suppressed: number;
  deliveryFailures: number;
}

/** Last observations of one dependency + operation (calls the gateway made). */
export interface DependencyObservation {
  dependency: string;
  operation: string;
  lastSuccessAt: string | null;
  lastFailureAt: string | null;
  lastFailureClass: string | null;
  consecutiveFailures: number;
  /** A sustained-failure incident is open (no recovery notification yet). */
  incident: boolean;
}

/**
 * The alert channel (ARCHITECTURE.md §5): a log channel always, an HTTPS chat webhook when
 * configured; sustained-failure thresholds per dependency and operation, cooldown, recovery
 * notifications, immediate signals, delivery retries and a durable dead-letter stream.
 * `observeCall` and `raise` never throw and never wait: they are called on request paths.
 */
export interface AlertChannel {
  /** One dependency call's outcome (neutral calls are not reported). In-process; flushed in batches. */
  observeCall(dependency: string, operation: string, failed: boolean, detail?: { failureClass?: string; requestId?: string }): void;
  /** An immediate signal (deduplicated per signal, dependency and operation id within the cooldown). */
  raise(signal: AlertSignal): void;
  /** Dead letters, newest first. */
  deadLetters(query: { limit: number; cursor?: string | null; status?: "dead" | "replayed" }): Promise<FindPage<DeadLetter>>;
  /** Delivers a dead letter again (one attempt); null when there is no such letter. */
  replay(id: string): Promise<{ letter: DeadLetter; delivered: boolean } | null>;
  /** For the dependency snapshot (counts dead letters: call it from background work only). */
  status(): Promise<AlertChannelStatus>;
  observations(): DependencyObservation[];
  /** Evaluates the thresholds now (a worker does it every `flushMs`; tests and shutdown call it). */
  flush(): Promise<void>;
  /** Waits for deliveries in progress (tests, shutdown). */
  drain(): Promise<void>;
  close(): Promise<void>;
}
