/** The billing port (re-exported by adapters/ports.ts). */

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

/** A debit still held (`debited`: neither confirmed nor reversed), as recovery finds it. */
export interface HeldDebit {
  entryId: string;
  businessId: string;
  billingIdentity: BillingIdentity;
  amountKobo: number;
  /** When it was last moved (ISO 8601). */
  updatedAt: string;
}

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
  /**
   * Debits held (`debited`) since at or before `before` (ISO 8601), oldest first, at most `limit`:
   * how recovery finds a held fee whose sign attempt left no record. Optional: a ledger without it
   * leaves those fees to the operator.
   */
  heldDebits?(before: string, limit: number): Promise<HeldDebit[]>;
  /** Balance and entries (newest first, at most `limit`, default 100); `suspended` when an operator suspended the wallet. */
  wallet(businessId: string, limit?: number): Promise<{ businessId: string; currency: "NGN"; balanceKobo: number; entries: BillingEntry[]; suspended?: boolean }>;
  /**
   * The operator's billing rule: a suspended wallet refuses every new debit with
   * BillingError("rule_rejected") (GW_BILLING_REQUEST_REJECTED); replays, reversals, confirmations
   * and top-ups go on. Idempotent. Optional: a ledger without it has no suspension.
   */
  setSuspended?(businessId: string, suspended: boolean): Promise<{ suspended: boolean }>;
}
