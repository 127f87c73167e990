/**
 * Deposits into virtual accounts (spec §1, §3.2, §6; DECISIONS.md "Deposits (sandbox)") and the
 * IN_FLOW_SUCCESS_EVENT. The sandbox route simulates an inbound transfer for TEST businesses; a
 * real transfer notification would call `receive` the same way.
 *
 * A deposit is one transfer session (`sessionId`, its `_id`). Its life:
 *
 *   received ──► settled    wallet credited once, IN_FLOW_SUCCESS_EVENT enqueued once
 *            └─► refunded   nothing credited, no event; `refund { amount, reason, refundReference }`
 *
 * Refund reasons: `account_expired` (past its expiresAt), `account_used` (a single_use account that
 * already completed its payment), `account_inactive` (toggled off), `amount_mismatch` (not the
 * account's fixed amount). Expiry and use are judged at the deposit's `receivedAt`.
 *
 * Exactly once, across concurrent deposits, retries and processes:
 * - a single_use account is consumed by a compare-and-set (`consumed: false → true`, only while open
 *   and enabled), so of any number of concurrent deposits exactly one wins; the others re-read the
 *   account and are refunded (`account_used`);
 * - the deposit leaves `received` by a compare-and-set on its status (one decision);
 * - the effects of `settled` are idempotent: the wallet credit's id is derived from the session id
 *   (`credit:virtual_account_deposit:<sessionId>`) and the outbox dedupes on
 *   `IN_FLOW_SUCCESS_EVENT:<sessionId>`; `effectsPending` stays true until both are done, and the
 *   worker (`redrive`) finishes deposits left `received` or with pending effects by a crash.
 */
import { randomInt } from "node:crypto";
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore, type WebhookOutbox } from "../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { CURRENCY, koboToNgn } from "../shared/money.ts";
import { newReference, webhookEndpointOf } from "../shared/common.ts";
import { formatTime, formatTimeOrNull } from "../shared/time.ts";
import type { AccountType, DepositInput } from "./schemas.ts";
import { deriveStatus, type VirtualAccount, type VirtualAccountService } from "./account-service.ts";
import type { CollectionWallet } from "../wallet/wallet.ts";

export const DEPOSITS_COLLECTION = "collections_va_deposits";
export const IN_FLOW_SUCCESS_EVENT = "IN_FLOW_SUCCESS_EVENT";
/** Wallet credits of deposits carry this source type (sourceId = the session id). */
export const DEPOSIT_SOURCE = "virtual_account_deposit";
/** Institution code that starts the sandbox's 30-digit NIP-style session ids. */
export const SANDBOX_INSTITUTION_CODE = "999999";
/** The worker finishes a deposit only after this long (the request may still be on it). */
export const REDRIVE_AFTER_MS = 10_000;
const REDRIVE_BATCH = 100;
const DECIDE_ATTEMPTS = 5;

export type DepositStatus = "received" | "settled" | "refunded";
export type RefundReason = "account_expired" | "account_used" | "account_inactive" | "amount_mismatch";

export const REFUND_MESSAGES: Record<RefundReason, string> = {
  account_expired: "The virtual account has expired.",
  account_used: "The single-use virtual account has already received its payment.",
  account_inactive: "The virtual account is inactive.",
  amount_mismatch: "The amount does not match the virtual account's fixed amount.",
};

export interface Deposit extends Doc {
  /** `_id` is the transfer's session id (30 digits). */
  businessId: string;
  /** Transaction reference (`VAT-` + 16 characters): the wallet credit's and the event's `reference`. */
  reference: string;
  virtualAccountId: string;
  virtualAccountReference: string;
  sourceReference: string;
  accountNumber: string;
  accountName: string;
  accountType: AccountType;
  amountKobo: number;
  currency: typeof CURRENCY;
  sender: { accountName: string; accountNumber: string; bankName: string };
  status: DepositStatus;
  refund: { amountKobo: number; reason: RefundReason; refundReference: string } | null;
  /** `settled` whose credit or event is not confirmed done yet. */
  effectsPending: boolean;
  receivedAt: number;
  settledAt: number | null;
  refundedAt: number | null;
  updatedAt: number;
}

/** A sandbox deposit as the API shows it: settled, refunded (with the reason) or received. */
export interface DepositView {
  sessionId: string;
  reference: string;
  status: DepositStatus;
  reason: RefundReason | null;
  message: string;
  amount: number;
  currency: string;
  recipient: { accountName: string; accountNumber: string };
  sender: { accountName: string; accountNumber: string; bankName: string };
  virtualAccount: { reference: string; sourceReference: string; accountType: AccountType };
  refund: { amount: number; reason: RefundReason; refundReference: string; refundedAt: string | null } | null;
  receivedAt: string;
  settledAt: string | null;
}

/** The IN_FLOW_SUCCESS_EVENT webhook body (spec collections §6, DECISIONS.md "Deposits"). */
export type InFlowSuccessEvent = {
  event_type: typeof IN_FLOW_SUCCESS_EVENT;
  data: {
    recipient: { accountName: string; accountNumber: string };
    amount: number;
    currency: string;
    reference: string;
    sessionId: string;
    sender: { accountName: string; accountNumber: string; bankName: string };
    settledAt: string | null;
    virtualAccount: { reference: string; sourceReference: string; accountType: AccountType };
  };
};

export interface DepositServiceOptions {
  store: DocumentStore;
  accounts: VirtualAccountService;
  wallet: CollectionWallet;
  webhooks: WebhookOutbox;
  directory: TenantDirectory;
  log: Logger;
  clock: () => number;
}

export interface DepositService {
  /** Records a transfer into `account` and settles or refunds it. Answers the deposit's state. */
  receive(account: VirtualAccount, input: DepositInput): Promise<Deposit>;
  /** Finishes deposits left undecided or with pending effects; returns how many it finished. */
  redrive(): Promise<number>;
  get(sessionId: string): Promise<Deposit | null>;
  view(d: Deposit): DepositView;
  /** The IN_FLOW_SUCCESS_EVENT body of a settled deposit. */
  eventBody(d: Deposit): InFlowSuccessEvent;
}

export function createDepositService(options: DepositServiceOptions): DepositService {
  const { accounts, wallet, webhooks, directory, log, clock } = options;
  const deposits: Collection<Deposit> = options.store.collection<Deposit>(DEPOSITS_COLLECTION, {
    indexes: [
      { fields: ["reference"], unique: true },
      { fields: ["businessId", "receivedAt"] },
      { fields: ["virtualAccountId", "receivedAt"] },
      { fields: ["status", "updatedAt"] },
      { fields: ["effectsPending", "updatedAt"] },
    ],
  });

  const eventBody = (d: Deposit): InFlowSuccessEvent => ({
    event_type: IN_FLOW_SUCCESS_EVENT,
    data: {
      recipient: { accountName: d.accountName, accountNumber: d.accountNumber },
      amount: koboToNgn(d.amountKobo),
      currency: d.currency,
      reference: d.reference,
      sessionId: d._id,
      sender: { ...d.sender },
      settledAt: formatTimeOrNull(d.settledAt),
      virtualAccount: { reference: d.virtualAccountReference, sourceReference: d.sourceReference, accountType: d.accountType },
    },
  });

  /** Credit once, enqueue once, then clear `effectsPending`. */
  const effects = async (d: Deposit): Promise<Deposit> => {
    if (d.status !== "settled" || !d.effectsPending) return d;
    const { created } = await wallet.credit(d.businessId, d.amountKobo, {
      sourceType: DEPOSIT_SOURCE,
      sourceId: d._id,
      reference: d.reference,
      description: `Transfer into virtual account ${d.accountNumber} (${d.accountName})`,
    });
    if (created) log.event("collections_wallet_credited", { businessId: d.businessId, sessionId: d._id, amountKobo: d.amountKobo });
    await webhooks.enqueue(
      { businessId: d.businessId, eventType: IN_FLOW_SUCCESS_EVENT, payload: eventBody(d), idempotencyKey: `${IN_FLOW_SUCCESS_EVENT}:${d._id}` },
      webhookEndpointOf(directory, d.businessId),
    );
    return (
      (await deposits.findOneAndUpdate({ _id: d._id, status: "settled", effectsPending: true }, { $set: { effectsPending: false } })) ?? {
        ...d,
        effectsPending: false,
      }
    );
  };

  /**
   * Moves a `received` deposit to settled or refunded (one decision, whoever runs it). An account
   * that keeps changing under it (toggled back and forth between reads) leaves it `received`: the
   * worker decides it later, judged at its `receivedAt` as here.
   */
  const decide = async (d: Deposit): Promise<Deposit> => {
    for (let attempt = 0; attempt < DECIDE_ATTEMPTS; attempt++) {
      const account = await accounts.get(d.virtualAccountId);
      const reason: RefundReason | null = account ? _refundReason(account, d) : "account_expired";
      if (reason === null && account!.accountType === "single_use" && account!.consumedBySessionId !== d._id) {
        // The one payment a single_use account takes: whoever sets `consumed` first.
        if (!(await accounts.consume(account!._id, d._id, d.receivedAt))) continue; // changed: judge again
      }
      const now = clock();
      const set: Partial<Deposit> =
        reason === null
          ? { status: "settled", settledAt: now, effectsPending: true, updatedAt: now }
          : {
              status: "refunded",
              refundedAt: now,
              refund: { amountKobo: d.amountKobo, reason, refundReference: newReference("VAR-") },
              updatedAt: now,
            };
      const updated = await deposits.findOneAndUpdate({ _id: d._id, status: "received" }, { $set: set });
      if (updated) {
        log.event("collections_deposit_decided", {
          sessionId: d._id,
          businessId: d.businessId,
          accountReference: d.virtualAccountReference,
          status: updated.status,
          reason: reason ?? null,
        });
        return updated;
      }
      // Decided by another runner (the worker, a retry): answer what it decided.
      const current = await deposits.get(d._id);
      if (current && current.status !== "received") return current;
    }
    log.warn("collections_deposit_decision_deferred", { sessionId: d._id, businessId: d.businessId, attempts: DECIDE_ATTEMPTS });
    return d;
  };

  const finish = async (d: Deposit): Promise<Deposit> => {
    const decided = d.status === "received" ? await decide(d) : d;
    try {
      return await effects(decided);
    } catch (e) {
      // The decision is stored; the worker completes the credit and the event.
      log.warn("collections_deposit_effects_deferred", { sessionId: d._id, error: describeError(e) });
      return decided;
    }
  };

  const view = (d: Deposit): DepositView => ({
    sessionId: d._id,
    reference: d.reference,
    status: d.status,
    reason: d.refund?.reason ?? null,
    message: d.status === "refunded" && d.refund ? REFUND_MESSAGES[d.refund.reason] : d.status === "settled" ? "Settled into the collection wallet." : "Received; settlement in progress.",
    amount: koboToNgn(d.amountKobo),
    currency: d.currency,
    recipient: { accountName: d.accountName, accountNumber: d.accountNumber },
    sender: { ...d.sender },
    virtualAccount: { reference: d.virtualAccountReference, sourceReference: d.sourceReference, accountType: d.accountType },
    refund: d.refund
      ? { amount: koboToNgn(d.refund.amountKobo), reason: d.refund.reason, refundReference: d.refund.refundReference, refundedAt: formatTimeOrNull(d.refundedAt) }
      : null,
    receivedAt: formatTime(d.receivedAt),
    settledAt: formatTimeOrNull(d.settledAt),
  });

  return {
    async receive(account, input) {
      const now = clock();
      let d: Deposit = {
        _id: newSessionId(now),
        businessId: account.businessId,
        reference: newReference("VAT-"),
        virtualAccountId: account._id,
        virtualAccountReference: account.reference,
        sourceReference: account.sourceReference,
        accountNumber: account.accountNumber,
        accountName: account.accountName,
        accountType: account.accountType,
        amountKobo: input.amountKobo,
        currency: CURRENCY,
        sender: { ...input.sender },
        status: "received",
        refund: null,
        effectsPending: false,
        receivedAt: now,
        settledAt: null,
        refundedAt: null,
        updatedAt: now,
      };
      for (let attempt = 1; ; attempt++) {
        try {
          await deposits.insert(d);
          break;
        } catch (e) {
          // A session id or reference clash (vanishingly rare): draw new ones.
          if (!isDuplicateKeyError(e) || attempt >= 3) throw e;
          d = { ...d, _id: newSessionId(now), reference: newReference("VAT-") };
        }
      }
      return finish(d);
    },

    async redrive() {
      const before = clock() - REDRIVE_AFTER_MS;
      // Each queue in order of `updatedAt` (a received deposit's is its receivedAt until then), so
      // that a deposit whose decision or effects keep failing goes to the back of its queue instead
      // of holding its places: `receivedAt`, which the decision is judged at, never moves.
      const [undecided, pending] = await Promise.all([
        deposits.find({ status: "received", updatedAt: { $lt: before } }, { sort: [{ field: "updatedAt", direction: 1 }], limit: REDRIVE_BATCH }),
        deposits.find({ effectsPending: true, updatedAt: { $lt: before } }, { sort: [{ field: "updatedAt", direction: 1 }], limit: REDRIVE_BATCH }),
      ]);
      let done = 0;
      for (const d of [...undecided.items, ...pending.items]) {
        let out: Deposit | null = null;
        try {
          out = await finish(d);
          if (out.status !== "received" && !out.effectsPending) done++;
        } catch (e) {
          log.warn("collections_deposit_redrive_failed", { sessionId: d._id, error: describeError(e) });
        }
        if (!out || out.status === "received" || out.effectsPending) {
          const still = d.status === "received" ? { status: "received" } : { effectsPending: true };
          await deposits.updateOne({ _id: d._id, ...still }, { $set: { updatedAt: clock() } }).catch(() => undefined);
        }
      }
      return done;
    },

    get: (sessionId) => deposits.get(sessionId),
    view,
    eventBody,
  };
}

/**
 * A 30-digit NIP-style session id: institution code (6) + `yyMMddHHmmss` (UTC, 12) + 12 random
 * digits.
 */
export function newSessionId(now: number): string {
  const t = new Date(now).toISOString();
  const stamp = t.slice(2, 4) + t.slice(5, 7) + t.slice(8, 10) + t.slice(11, 13) + t.slice(14, 16) + t.slice(17, 19);
  const random = String(randomInt(0, 1_000_000)).padStart(6, "0") + String(randomInt(0, 1_000_000)).padStart(6, "0");
  return SANDBOX_INSTITUTION_CODE + stamp + random;
}

// --- Internal helpers ---

/** Why a deposit into `account` is refunded (judged at the deposit's receivedAt), or null to settle. */
function _refundReason(account: VirtualAccount, d: Deposit): RefundReason | null {
  if (account.consumedBySessionId === d._id) return null; // this deposit already won the account
  if (deriveStatus(account, d.receivedAt) === "expired") return account.consumed ? "account_used" : "account_expired";
  if (!account.enabled) return "account_inactive";
  if (account.amountKobo !== null && account.amountKobo !== d.amountKobo) return "amount_mismatch";
  return null;
}
