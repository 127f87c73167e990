/**
 * What an alert may carry (spec §6: environment, dependency, operation, failure class, first and last
 * occurrence, count and ratio, up to three request IDs, optional operation and provider IDs, public
 * error code, runbook link) and the fixed text of every signal. An alert is built field by field from
 * this allowlist, and each field is kept only when it has its format: ids are UUIDs, codes are catalog
 * codes, dependencies, operations and failure classes are the gateway's own names (a fixed set, or a
 * store collection + port method). Anything else (a secret, a key, an e-mail, a TIN, an IRN, a
 * body) is dropped, whatever field it was put in.
 */
import { CATALOG } from "../../core/errors/catalog.ts";
import type { Alert, AlertKind, ImmediateSignal } from "../ports.ts";

export interface SignalInfo {
  severity: Alert["severity"];
  summary: string;
  /** Anchor of the runbook section in docs/operations.md. */
  anchor: string;
}

/** Every signal with its severity, its fixed summary and its runbook section. */
export const SIGNALS: Readonly<Record<ImmediateSignal | "dependency_sustained_failure" | "dependency_recovered", SignalInfo>> = {
  dependency_sustained_failure: {
    severity: "critical",
    summary: "A dependency keeps failing (5 consecutive failures, or more than 20 % of at least 20 calls in 5 minutes).",
    anchor: "alert-dependency_sustained_failure",
  },
  dependency_recovered: { severity: "info", summary: "The dependency answered 5 times in a row: recovered.", anchor: "alert-dependency_recovered" },
  regulator_credentials_rejected: {
    severity: "critical",
    summary: "The regulator rejected the deployment's own credentials: every regulator call of that state fails.",
    anchor: "alert-regulator_credentials_rejected",
  },
  sign_outcome_unconfirmed: {
    severity: "critical",
    summary: "A billed sign's outcome cannot be proved: the operation is frozen and its fee held.",
    anchor: "alert-sign_outcome_unconfirmed",
  },
  sign_reversal_unconfirmed: {
    severity: "critical",
    summary: "The regulator did not sign, but the fee reversal could not be confirmed.",
    anchor: "alert-sign_reversal_unconfirmed",
  },
  sign_recovery_unavailable: {
    severity: "critical",
    summary: "An invoice was signed and charged, but the settlement could not complete.",
    anchor: "alert-sign_recovery_unavailable",
  },
  post_sign_state_missing: {
    severity: "critical",
    summary: "The record of a regulator sign or transmission outcome could not be written.",
    anchor: "alert-post_sign_state_missing",
  },
  transmit_outcome_unconfirmed: {
    severity: "critical",
    summary: "A transmission's outcome cannot be proved: it is frozen, never replayed.",
    anchor: "alert-transmit_outcome_unconfirmed",
  },
  routing_loop: { severity: "critical", summary: "A request came back to the gateway carrying its hop marker (routing loop).", anchor: "alert-routing_loop" },
  capacity_exceeded: { severity: "warning", summary: "The gateway refused work at its in-flight capacity limit.", anchor: "alert-capacity_exceeded" },
  quota_unenforceable: {
    severity: "critical",
    summary: "The coordination store cannot enforce quotas: protected work fails closed.",
    anchor: "alert-quota_unenforceable",
  },
  circuit_opened: { severity: "critical", summary: "A dependency's circuit opened: its calls are refused for 30 s.", anchor: "alert-circuit_opened" },
  recovery_unprovable: {
    severity: "critical",
    summary: "The recovery job could neither confirm nor reverse a held fee: an operator must decide.",
    anchor: "alert-recovery_unprovable",
  },
  reconciliation_overdue: {
    severity: "critical",
    summary: "Frozen operations, held fees or unknown transmissions are unresolved past the configured age.",
    anchor: "alert-reconciliation_overdue",
  },
};

export function isImmediateSignal(value: unknown): value is ImmediateSignal {
  return typeof value === "string" && value in SIGNALS && value !== "dependency_sustained_failure" && value !== "dependency_recovered";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The dependencies the gateway calls. */
const DEPENDENCY = /^(?:documentStore|coordination|billing|regulator:(?:TEST|LIVE))$/;
/** Operations: a store collection + port method, a coordination method, a regulator operation. */
const OPERATION =
  /^(?:[a-z]{1,32}(?:_[a-z]{1,32}){0,4}\.(?:insert|get|findOne|find|count|findOneAndUpdate|updateOne|delete|deleteMany|claim|release)|ping|takePermit|acquireLease|releaseLease|adjustInFlight|publish|subscribe|authenticate|getEntity|validateIrn|validateInvoice|sign|transmit|confirm|relay(?:\.(?:resources|confirm|download|update|irn-validate))?)$/;
/** Normalized failure classes (policies, regulator client, ambiguous reasons, recovery). */
const FAILURE_CLASSES = new Set([
  "timeout", "transport", "circuit_open", "server_error", "invalid_response", "credentials_rejected", "rate_limited", "not_configured",
  "metadata_invalid", "rejected", "connection_lost", "redirect", "empty_body", "malformed_body", "unrecognized_envelope", "not_ok",
  "unrecognized_error", "response_too_large", "stale_claim", "abandoned", "billing_refused", "interrupted_sign", "interrupted_transmit",
  "settled_unrecorded",
]);
const ENVIRONMENT = /^[A-Za-z][A-Za-z0-9_-]{0,31}$/;

export interface AlertFields {
  id: string;
  kind: AlertKind;
  signal: keyof typeof SIGNALS;
  environment: string;
  runbookBase: string;
  firstOccurrence: number;
  lastOccurrence: number;
  count: number;
  ratio?: number;
  dependency?: unknown;
  operation?: unknown;
  failureClass?: unknown;
  requestIds?: readonly unknown[];
  operationId?: unknown;
  providerId?: unknown;
  code?: unknown;
}

/** The alert, every field checked against the allowlist (unlisted or malformed values are dropped). */
export function buildAlert(f: AlertFields): Alert {
  const info = SIGNALS[f.signal];
  const alert: Alert = {
    id: f.id,
    kind: f.kind,
    signal: f.signal,
    severity: info.severity,
    summary: info.summary,
    environment: ENVIRONMENT.test(f.environment) ? f.environment : "unnamed",
    firstOccurrence: new Date(f.firstOccurrence).toISOString(),
    lastOccurrence: new Date(f.lastOccurrence).toISOString(),
    count: Number.isSafeInteger(f.count) && f.count >= 0 ? f.count : 0,
    requestIds: [],
    runbook: `${f.runbookBase}#${info.anchor}`,
  };
  if (_matches(f.dependency, DEPENDENCY)) alert.dependency = f.dependency;
  if (_matches(f.operation, OPERATION)) alert.operation = f.operation;
  if (typeof f.failureClass === "string" && FAILURE_CLASSES.has(f.failureClass.replace(/^regulator_/, ""))) alert.failureClass = f.failureClass;
  if (f.ratio !== undefined && Number.isFinite(f.ratio) && f.ratio >= 0 && f.ratio <= 1) alert.ratio = Math.round(f.ratio * 1000) / 1000;
  for (const id of f.requestIds ?? []) {
    if (alert.requestIds.length >= 3) break;
    if (_matches(id, UUID) && !alert.requestIds.includes(id)) alert.requestIds.push(id);
  }
  if (_matches(f.operationId, UUID)) alert.operationId = f.operationId;
  if (_matches(f.providerId, UUID)) alert.providerId = f.providerId;
  if (typeof f.code === "string" && Object.hasOwn(CATALOG, f.code)) alert.code = f.code;
  return alert;
}

/** The chat message: one line of text built only from the alert's allowlisted fields. */
export function chatText(a: Alert): string {
  const icon = a.kind === "recovered" ? "✅" : a.severity === "critical" ? "🚨" : "⚠️";
  const where = [a.dependency, a.operation].filter(Boolean).join(" ");
  const parts = [`${icon} [${a.environment}] ${a.signal}${where ? ` — ${where}` : ""}: ${a.summary}`];
  const facts: string[] = [`count ${a.count}`];
  if (a.ratio !== undefined) facts.push(`failure ratio ${Math.round(a.ratio * 100)} %`);
  if (a.failureClass) facts.push(`class ${a.failureClass}`);
  if (a.code) facts.push(`code ${a.code}`);
  if (a.operationId) facts.push(`operation ${a.operationId}`);
  if (a.requestIds.length > 0) facts.push(`requests ${a.requestIds.join(", ")}`);
  facts.push(`first ${a.firstOccurrence}`, `last ${a.lastOccurrence}`);
  parts.push(facts.join(" · "), `Runbook: ${a.runbook}`);
  return parts.join("\n");
}

// --- Internal helpers ---

function _matches(value: unknown, pattern: RegExp): value is string {
  return typeof value === "string" && pattern.test(value);
}
