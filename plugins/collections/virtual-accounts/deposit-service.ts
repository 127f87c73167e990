/**
 * The deposit service: a transfer into a virtual account recorded, decided (settled or refunded)
 * and its effects run, exactly once across concurrent deposits, retries and processes:
 * - a single_use account is consumed by a compare-and-set (`consumed: false → true`, only while open
 *   and enabled), so of any number of concurrent deposits exactly one wins; the others re-read the
 *   account and are refunded (`account_used`);
 * - the deposit leaves `received` by a compare-and-set on its status (one decision);
 * - the effects of `settled` are idempotent: the wallet credit's id is derived from the session id
 *   (`credit:virtual_account_deposit:<sessionId>`) and the outbox dedupes on
 *   `IN_FLOW_SUCCESS_EVENT:<sessionId>`; `effectsPending` stays true until both are done, and the
 *   worker (`redrive`) finishes deposits left `received` or with pending effects by a crash.
 * A deposit into an account opened for a checkout session (pay by transfer) is decided by the same
 * rules, but its settlement is the checkout's: the effects hand it to `onCheckoutDeposit` (which
 * credits the wallet once under the session id and sends CHECKOUT_COMPLETED), and no
 * IN_FLOW_SUCCESS_EVENT is sent (docs/decisions.md).
 * The sandbox route calls `receive`; a real transfer notification would call it the same way. The
 * deposit itself, its view and its event are in deposit.ts.
 */
import { isDuplicateKeyError, type Collection, type DocumentStore, type WebhookOutbox } from "../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { enqueueWebhookEvent } from "../../../core/webhook-events.ts";
import { newReference } from "../shared/common.ts";
import { CURRENCY } from "../shared/money.ts";
import type { CollectionWallet } from "../wallet/wallet.ts";
import type { VirtualAccount } from "./account.ts";
import type { VirtualAccountService } from "./account-service.ts";
import {
  DEPOSIT_SOURCE,
  IN_FLOW_SUCCESS_EVENT,
  depositView,
  inFlowEventBody,
  newSessionId,
  openDeposits,
  refundReason,
  type Deposit,
  type DepositView,
  type InFlowSuccessEvent,
  type RefundReason,
} from "./deposit.ts";
import type { DepositInput } from "./schemas.ts";

/** The worker finishes a deposit only after this long (the request may still be on it). */
export const REDRIVE_AFTER_MS = 10_000;
const REDRIVE_BATCH = 100;
const DECIDE_ATTEMPTS = 5;

export interface DepositServiceOptions {
  store: DocumentStore;
  accounts: VirtualAccountService;
  wallet: CollectionWallet;
  webhooks: WebhookOutbox;
  directory: TenantDirectory;
  log: Logger;
  clock: () => number;
  /** Settles the checkout of a settled deposit into a checkout's account (idempotent, re-driven). */
  onCheckoutDeposit?: (d: Deposit) => Promise<void>;
}

export interface DepositService {
  /** Records a transfer into `account` and settles or refunds it. Answers the deposit's state. */
  receive(account: VirtualAccount, input: DepositInput): Promise<Deposit>;
  /** Finishes deposits left undecided or with pending effects; returns how many it finished. */
  redrive(): Promise<number>;
  get(sessionId: string): Promise<Deposit | null>;
  /** The deposits into one account, oldest first (at most 100). */
  forAccount(virtualAccountId: string): Promise<Deposit[]>;
  view(d: Deposit): DepositView;
  /** The IN_FLOW_SUCCESS_EVENT body of a settled deposit. */
  eventBody(d: Deposit): InFlowSuccessEvent;
}

export function createDepositService(options: DepositServiceOptions): DepositService {
  const deps: _Deps = { ...options, deposits: openDeposits(options.store) };
  return {
    receive: (account, input) => _receive(deps, account, input),
    redrive: () => _redrive(deps),
    get: (sessionId) => deps.deposits.get(sessionId),
    forAccount: async (virtualAccountId) =>
      (await deps.deposits.find({ virtualAccountId }, { sort: [{ field: "receivedAt", direction: 1 }], limit: 100 })).items,
    view: depositView,
    eventBody: inFlowEventBody,
  };
}

// --- Internal helpers ---

interface _Deps extends DepositServiceOptions {
  deposits: Collection<Deposit>;
}

async function _receive(deps: _Deps, account: VirtualAccount, input: DepositInput): Promise<Deposit> {
  const now = deps.clock();
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
    ...(account.checkoutSessionId ? { checkoutSessionId: account.checkoutSessionId } : {}),
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
      await deps.deposits.insert(d);
      break;
    } catch (e) {
      // A session id or reference clash (vanishingly rare): draw new ones.
      if (!isDuplicateKeyError(e) || attempt >= 3) throw e;
      d = { ...d, _id: newSessionId(now), reference: newReference("VAT-") };
    }
  }
  return _finish(deps, d);
}

/** Decides a deposit still `received`, then runs its effects (deferred to the worker on failure). */
async function _finish(deps: _Deps, d: Deposit): Promise<Deposit> {
  const decided = d.status === "received" ? await _decide(deps, d) : d;
  try {
    return await _effects(deps, decided);
  } catch (e) {
    // The decision is stored; the worker completes the credit and the event.
    deps.log.warn("collections_deposit_effects_deferred", { sessionId: d._id, error: describeError(e) });
    return decided;
  }
}

/**
 * Moves a `received` deposit to settled or refunded (one decision, whoever runs it). An account
 * that keeps changing under it (toggled back and forth between reads) leaves it `received`: the
 * worker decides it later, judged at its `receivedAt` as here.
 */
async function _decide(deps: _Deps, d: Deposit): Promise<Deposit> {
  const { accounts, deposits, log } = deps;
  for (let attempt = 0; attempt < DECIDE_ATTEMPTS; attempt++) {
    const account = await accounts.get(d.virtualAccountId);
    const reason: RefundReason | null = account ? refundReason(account, d) : "account_expired";
    if (reason === null && account!.accountType === "single_use" && account!.consumedBySessionId !== d._id) {
      // The one payment a single_use account takes: whoever sets `consumed` first.
      if (!(await accounts.consume(account!._id, d._id, d.receivedAt))) continue; // changed: judge again
    }
    const updated = await deposits.findOneAndUpdate({ _id: d._id, status: "received" }, { $set: _decision(d, reason, deps.clock()) });
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
}

function _decision(d: Deposit, reason: RefundReason | null, now: number): Partial<Deposit> {
  return reason === null
    ? { status: "settled", settledAt: now, effectsPending: true, updatedAt: now }
    : {
        status: "refunded",
        refundedAt: now,
        refund: { amountKobo: d.amountKobo, reason, refundReference: newReference("VAR-") },
        updatedAt: now,
      };
}

/** Credit once, enqueue once (or hand over to the checkout), then clear `effectsPending`. */
async function _effects(deps: _Deps, d: Deposit): Promise<Deposit> {
  if (d.status !== "settled" || !d.effectsPending) return d;
  if (d.checkoutSessionId) {
    if (!deps.onCheckoutDeposit) throw new Error("no checkout takes deposits into checkout accounts");
    await deps.onCheckoutDeposit(d);
    return _effectsDone(deps, d);
  }
  const { created } = await deps.wallet.credit(d.businessId, d.amountKobo, {
    sourceType: DEPOSIT_SOURCE,
    sourceId: d._id,
    reference: d.reference,
    description: `Transfer into virtual account ${d.accountNumber} (${d.accountName})`,
  });
  if (created) deps.log.event("collections_wallet_credited", { businessId: d.businessId, sessionId: d._id, amountKobo: d.amountKobo });
  await enqueueWebhookEvent(deps.webhooks, deps.directory, "collections", {
    businessId: d.businessId,
    eventType: IN_FLOW_SUCCESS_EVENT,
    payload: inFlowEventBody(d),
    idempotencyKey: `${IN_FLOW_SUCCESS_EVENT}:${d._id}`,
  });
  return _effectsDone(deps, d);
}

async function _effectsDone(deps: _Deps, d: Deposit): Promise<Deposit> {
  return (
    (await deps.deposits.findOneAndUpdate({ _id: d._id, status: "settled", effectsPending: true }, { $set: { effectsPending: false } })) ?? {
      ...d,
      effectsPending: false,
    }
  );
}

async function _redrive(deps: _Deps): Promise<number> {
  const { deposits, clock } = deps;
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
      out = await _finish(deps, d);
      if (out.status !== "received" && !out.effectsPending) done++;
    } catch (e) {
      deps.log.warn("collections_deposit_redrive_failed", { sessionId: d._id, error: describeError(e) });
    }
    if (!out || out.status === "received" || out.effectsPending) {
      const still = d.status === "received" ? { status: "received" } : { effectsPending: true };
      await deposits.updateOne({ _id: d._id, ...still }, { $set: { updatedAt: clock() } }).catch(() => undefined);
    }
  }
  return done;
}
