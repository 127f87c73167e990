/**
 * Ports: the interfaces behind which every external system sits (ARCHITECTURE.md §5).
 * Plugins and pipeline stages see only these types; the composition root (boot/main.ts)
 * picks the implementations from config.
 */

// ---------------------------------------------------------------------------
// Document store
// ---------------------------------------------------------------------------

/** Every stored document has a string `_id`. Values are JSON-compatible (no Date, no BigInt). */
export interface Doc {
  _id: string;
  [field: string]: unknown;
}

/** Field operators a filter may use. Everything else is equality on the top-level field. */
export interface FieldOps {
  $eq?: unknown;
  $ne?: unknown;
  $in?: readonly unknown[];
  $gt?: string | number;
  $gte?: string | number;
  $lt?: string | number;
  $lte?: string | number;
  $exists?: boolean;
  /** Case-insensitive substring match on a string field (search boxes). */
  $contains?: string;
}

/**
 * A filter: top-level field → value (equality) or FieldOps. `$or` takes a list of such filters.
 * Dotted paths (`a.b`) address nested fields.
 */
export type Filter = { $or?: Filter[] } & { [field: string]: unknown };

export interface SortSpec {
  field: string;
  direction: 1 | -1;
}

export interface FindOptions {
  /** Sort order; `_id` ascending is always appended as the final tie-breaker. */
  sort?: SortSpec[];
  /** Page size; implementations cap it at 1000. */
  limit?: number;
  /** Opaque cursor from a previous page's `nextCursor` (cursor pagination). */
  cursor?: string | null;
  /** Number of matching documents to skip (page/limit pagination). Not combined with cursor. */
  skip?: number;
}

export interface FindPage<T> {
  items: T[];
  /** Cursor for the next page, or null when this page is the last. */
  nextCursor: string | null;
}

/** Update operators. `$set` / `$unset` take (possibly dotted) paths; `$inc` adds numbers. */
export interface Update {
  $set?: Record<string, unknown>;
  $unset?: string[];
  $inc?: Record<string, number>;
  /** Only applied when an upsert inserts. */
  $setOnInsert?: Record<string, unknown>;
}

export interface IndexSpec {
  /** Field paths of the index, in order. */
  fields: string[];
  unique?: boolean;
  /** Only index/enforce uniqueness for documents where all fields exist (partial unique index). */
  sparse?: boolean;
}

export interface CollectionSpec {
  indexes?: IndexSpec[];
  /** A numeric field holding an epoch-millisecond expiry; the document disappears after it. */
  ttlField?: string;
}

export interface Lease {
  owner: string;
  /** Epoch milliseconds. */
  until: number;
}

export interface Collection<T extends Doc> {
  readonly name: string;
  /** Inserts a new document; throws DuplicateKeyError on `_id` or a unique index clash. */
  insert(doc: T): Promise<T>;
  get(id: string): Promise<T | null>;
  findOne(filter: Filter): Promise<T | null>;
  find(filter: Filter, options?: FindOptions): Promise<FindPage<T>>;
  count(filter: Filter): Promise<number>;
  /**
   * `count` answered synchronously: offered only by implementations that hold their documents in
   * the gateway process (the embedded store), and by their guard when the policy has no deadline.
   * Callers on a hot path use it when present (the tenant directory's key check), else `count`.
   */
  countNow?(filter: Filter): number;
  /**
   * Atomically applies `update` to the one document matching `filter` (compare-and-set: put the
   * expected version/state in the filter). Returns the updated document, or null when none matched.
   * With `upsert`, inserts `{...equality fields of filter, ...$setOnInsert, ...$set}` when none matched
   * (a concurrent insert of the same unique key makes exactly one win; the loser re-reads and updates).
   * Throws DuplicateKeyError when the update would break a unique index.
   */
  findOneAndUpdate(filter: Filter, update: Update, options?: { upsert?: boolean }): Promise<T | null>;
  /**
   * Atomically applies `update` to the one document matching `filter` without reading it back: a
   * conditional update (`{ _id, balance: { $gte: 5 } }` + `$inc`, or a compare-and-set on a version
   * or state) in one step of the engine (MongoDB: one `updateOne` command; the embedded store: one
   * synchronous check-and-change). True when a document matched and was updated, false when none
   * matched. No upsert. Throws DuplicateKeyError when the update would break a unique index.
   * Prefer it to findOneAndUpdate whenever the updated document is not needed.
   */
  updateOne(filter: Filter, update: Update): Promise<boolean>;
  /** Deletes by id; true when something was deleted. */
  delete(id: string): Promise<boolean>;
  deleteMany(filter: Filter): Promise<number>;
  /**
   * Claims one document matching `filter` whose lease (field `lease`) is absent or expired, for `owner`
   * until now + leaseMs. Oldest `_id` first unless `sort` is given. Returns the claimed document or null.
   */
  claim(filter: Filter, owner: string, leaseMs: number, sort?: SortSpec[]): Promise<(T & { lease: Lease }) | null>;
  /** Releases a lease held by `owner` (no-op when another owner holds it now). */
  release(id: string, owner: string): Promise<boolean>;
}

export interface DocumentStore {
  /** Implementation name for logs and health: "unstorage-fs", "unstorage-memory", "mongodb". */
  readonly kind: string;
  /** Opens (or returns) a collection, creating its indexes once. */
  collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T>;
  /** Cheap round trip proving the store answers; throws when it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Typed error for a unique-key clash: a duplicate is a value to branch on, never a string to parse. */
export class DuplicateKeyError extends Error {
  readonly isDuplicateKeyError = true;
  constructor(
    readonly collection: string,
    readonly index: string,
  ) {
    super(`duplicate key in ${collection} (${index})`);
    this.name = "DuplicateKeyError";
  }
}

export function isDuplicateKeyError(e: unknown): e is DuplicateKeyError {
  return typeof e === "object" && e !== null && (e as { isDuplicateKeyError?: unknown }).isDuplicateKeyError === true;
}

/** A filter, update, cursor or document the store refuses: a caller bug, never a dependency failure. */
export class InvalidQueryError extends Error {
  readonly isInvalidQueryError = true;
  constructor(message: string) {
    super(message);
    this.name = "InvalidQueryError";
  }
}

export function isInvalidQueryError(e: unknown): e is InvalidQueryError {
  return typeof e === "object" && e !== null && (e as { isInvalidQueryError?: unknown }).isInvalidQueryError === true;
}

/** A store or coordination call that could not be completed (down, timeout, circuit open). */
export class DependencyUnavailableError extends Error {
  readonly isDependencyUnavailableError = true;
  constructor(
    readonly dependency: string,
    message: string,
    readonly failureClass: "timeout" | "transport" | "circuit_open" | "server_error" | "invalid_response" = "transport",
  ) {
    super(message);
    this.name = "DependencyUnavailableError";
  }
}

export function isDependencyUnavailableError(e: unknown): e is DependencyUnavailableError {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { isDependencyUnavailableError?: unknown }).isDependencyUnavailableError === true
  );
}

// ---------------------------------------------------------------------------
// Coordination
// ---------------------------------------------------------------------------

export interface PermitResult {
  allowed: boolean;
  /** Permits left in the current window after this take (0 when refused). */
  remaining: number;
  /** When refused: milliseconds until the next permit can be granted (≥ 1). 0 when allowed. */
  retryAfterMs: number;
}

export interface CoordinationStore {
  /** "memory" or "redis". */
  readonly kind: string;
  /**
   * Takes one permit from a fixed window of `windowMs` keyed by `key`, allowing at most `limit`
   * permits per window. Atomic across every process sharing the store.
   */
  takePermit(key: string, limit: number, windowMs: number): Promise<PermitResult>;
  /**
   * The same operation answered synchronously: offered only by implementations that run in the
   * gateway process (the in-process store), and by their guard when the policy has no deadline.
   * Callers on a hot path use it when present (pipeline/quota.ts), else `takePermit`.
   */
  takePermitNow?(key: string, limit: number, windowMs: number): PermitResult;
  /** Acquires a short lease/lock; true when `owner` now holds it (re-entrant for the same owner). */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases the lease only when `owner` holds it; true when released. */
  releaseLease(key: string, owner: string): Promise<boolean>;
  /**
   * In-flight accounting: adds `delta` (+1 / -1) to a shared gauge and returns the new value.
   * Entries expire after `ttlMs` without a change, so a crashed process cannot pin capacity forever.
   */
  adjustInFlight(key: string, delta: number, ttlMs: number): Promise<number>;
  /**
   * Change notification: delivers `message` to every current subscriber of `channel` in every
   * process sharing the store (the publisher's own subscribers included). At most once: a
   * subscriber that is cut off at that moment misses it and is told through `gap` instead.
   */
  publish(channel: string, message: string): Promise<void>;
  /** Starts receiving the messages published on `channel` from now on. */
  subscribe(channel: string, handlers: SubscriptionHandlers): Promise<Subscription>;
  /** Cheap round trip proving the store can enforce decisions; throws when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface SubscriptionHandlers {
  /** One published message, in the order its publisher sent them. Exceptions it throws are ignored. */
  message(message: string): void;
  /**
   * Messages may have been lost: the subscription was cut off and is receiving again (Redis
   * reconnected). Whatever the subscriber caches from the messages must be re-read.
   */
  gap?(): void;
}

export interface Subscription {
  /** Stops delivery to these handlers; closing twice is a no-op. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Webhook delivery (durable outbox, Standard Webhooks signatures)
// ---------------------------------------------------------------------------

export interface WebhookEndpoint {
  url: string;
  /** "whsec_<base64>" (Standard Webhooks) or any secret string; used for HMAC-SHA256. */
  secret: string;
}

export interface WebhookMessage {
  /** Owning business (collections) or top-level business (invoice gateway). */
  businessId: string;
  /** Event name, e.g. "CHECKOUT_COMPLETED", "IN_FLOW_SUCCESS_EVENT", "invoice.signed". */
  eventType: string;
  /** The JSON body sent as-is (collections: `{ event_type, data }`; invoice: `{ type, data }`). */
  payload: Record<string, unknown>;
  /**
   * Deduplication key: enqueueing the same key twice (per business) stores one message
   * (exactly-once enqueue from a retried settlement). The stored message's own id, not this key,
   * is the `webhook-id` header, identical on every retry.
   */
  idempotencyKey: string;
}

export interface WebhookOutbox {
  /** Durably records the message for delivery; returns its webhook-id. Idempotent on idempotencyKey. */
  enqueue(message: WebhookMessage, endpoint: WebhookEndpoint | null): Promise<{ webhookId: string; created: boolean }>;
}

// ---------------------------------------------------------------------------
// E-mail
// ---------------------------------------------------------------------------

export interface EmailMessage {
  to: string[];
  subject: string;
  text: string;
  html?: string;
}

export interface EmailSender {
  readonly kind: string;
  send(message: EmailMessage): Promise<{ messageId: string }>;
}

// ---------------------------------------------------------------------------
// Payment processor (collections checkout)
// ---------------------------------------------------------------------------

export interface PaymentRequest {
  /** The checkout session paying (the processor's idempotency key: one payment per session). */
  sessionId: string;
  businessId: string;
  businessState: "TEST" | "LIVE";
  /** Integer kobo. */
  amountKobo: number;
  currency: "NGN";
  customerEmail: string;
  /** Sandbox only: force an outcome ("success" default, "failure", or "duplicate_report"). */
  simulate?: "success" | "failure" | "duplicate_report";
}

export interface PaymentReport {
  sessionId: string;
  processorReference: string;
  status: "succeeded" | "failed";
  amountKobo: number;
  reportedAt: string;
  failureReason?: string;
}

/**
 * A processor's definite "no" to `pay`: nothing was charged (declined before charging, a business or
 * amount it does not serve). Any other rejection of `pay` leaves the outcome unknown: the payment may
 * have been taken, so the session stays pending until a report, a resubmission or `lookup` decides.
 */
export class PaymentRefusedError extends Error {
  readonly isPaymentRefusedError = true;
  constructor(message: string) {
    super(message);
    this.name = "PaymentRefusedError";
  }
}

export function isPaymentRefusedError(e: unknown): e is PaymentRefusedError {
  return typeof e === "object" && e !== null && (e as { isPaymentRefusedError?: unknown }).isPaymentRefusedError === true;
}

export interface PaymentProcessor {
  readonly kind: string;
  /**
   * Charges once per sessionId (a repeated call returns the first outcome). The outcome is also
   * delivered to every `onReport` listener — possibly more than once, as real processors do.
   * Rejects with PaymentRefusedError when it charged nothing for sure; any other rejection is an
   * unknown outcome.
   */
  pay(request: PaymentRequest): Promise<PaymentReport>;
  onReport(listener: (report: PaymentReport) => Promise<void>): void;
  /**
   * What the processor knows of the session's payment (a processor's "verify by reference"): its
   * report once the payment is decided, or null when it has none (never asked, or still processing).
   * Asked before a session is abandoned, so a payment whose every notification was lost is settled.
   */
  lookup(sessionId: string): Promise<PaymentReport | null>;
  /** Refunds a settled or mismatched payment; idempotent per sessionId. */
  refund(sessionId: string, amountKobo: number, reason: string): Promise<{ refundReference: string }>;
}

// ---------------------------------------------------------------------------
// Billing (invoice gateway wallet ledger)
// ---------------------------------------------------------------------------

/** What one billed sign attempt is: a second debit for the same identity is impossible. */
export interface BillingIdentity {
  /** gatewaySubBusinessId of the represented business. */
  subBusinessId: string;
  /** Canonical domain the request came through. */
  domain: string;
  irn: string;
  attemptNumber: number;
}

export type BillingEntryType = "debit" | "reversal" | "credit";

export interface BillingEntry {
  id: string;
  type: BillingEntryType;
  /** Integer kobo, always positive; the type says the direction. */
  amountKobo: number;
  billingIdentity?: BillingIdentity;
  /** Operator top-ups: the idempotent reference. */
  reference?: string;
  createdAt: string;
}

export type DebitResult =
  | { kind: "debited"; entryId: string; balanceKobo: number }
  /** The same identity and fingerprint were debited before: nothing new was charged. */
  | { kind: "replay"; entryId: string; state: "debited" | "reversed" | "confirmed" };

/** A business outcome of billing (never a dependency failure; never counts toward a circuit). */
export class BillingError extends Error {
  readonly isBillingError = true;
  readonly dependencyFailure = false;
  constructor(
    readonly reason: "wallet_declined" | "attempt_conflict" | "rule_rejected",
    message: string,
  ) {
    super(message);
    this.name = "BillingError";
  }
}

export function isBillingError(e: unknown): e is BillingError {
  return typeof e === "object" && e !== null && (e as { isBillingError?: unknown }).isBillingError === true;
}

/**
 * The wallet ledger. Outages throw DependencyUnavailableError: before `debit` resolves nothing is
 * known to be charged (GW_BILLING_SERVICE_UNAVAILABLE); a `reverse` that throws is an unconfirmed
 * reversal (GW_SIGN_REVERSAL_UNCONFIRMED); a `confirm` that throws is incomplete settlement
 * (GW_SIGN_RECOVERY_UNAVAILABLE).
 */
export interface BillingLedger {
  /**
   * Debits `amountKobo` once per identity. Same identity + same fingerprint → `replay` (no second
   * debit). Same identity + other fingerprint → BillingError("attempt_conflict"). Not enough
   * balance → BillingError("wallet_declined").
   */
  debit(businessId: string, identity: BillingIdentity, amountKobo: number, fingerprint: string): Promise<DebitResult>;
  /** Reverses the identity's debit exactly once (idempotent); only a debited, unconfirmed identity. */
  reverse(businessId: string, identity: BillingIdentity, reason: string): Promise<{ entryId: string }>;
  /** Marks the identity's debit as settled (the regulator signed). Idempotent. */
  confirm(businessId: string, identity: BillingIdentity): Promise<void>;
  /** Operator top-up, idempotent on `reference`. */
  credit(businessId: string, amountKobo: number, reference: string): Promise<{ entryId: string; created: boolean }>;
  /** Balance and entries (newest first, at most `limit`, default 100). */
  wallet(businessId: string, limit?: number): Promise<{ businessId: string; currency: "NGN"; balanceKobo: number; entries: BillingEntry[] }>;
}

// ---------------------------------------------------------------------------
// Alerts (spec §6 "alert signals"; adapters/alerts)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Dependency health (circuits)
// ---------------------------------------------------------------------------

/** The state of a dependency's circuit (spec §3.5). */
export type CircuitState = "closed" | "open" | "half_open";

/** One dependency's circuit and call counts, as /health/dependencies and /metrics show them. */
export interface DependencySnapshot {
  dependency: string;
  state: CircuitState;
  /** Eligible (success or failure) calls in the current window. */
  windowCalls: number;
  windowFailures: number;
  /** windowFailures / windowCalls, 0 when the window is empty. */
  failureRatio: number;
  /** ISO time the circuit last opened; present while open or half-open. */
  openedAt?: string;
  lastFailureClass?: string;
  lastFailureAt?: string;
  lastSuccessAt?: string;
  /** Calls actually made (refusals excluded), neutral ones included. */
  totalCalls: number;
  totalFailures: number;
  /** Calls refused by the circuit without being made. */
  totalRefused: number;
}

/** What the health plugin reads of the resilience policies: every dependency's circuit. */
export interface DependencyHealth {
  snapshot(): DependencySnapshot[];
}
