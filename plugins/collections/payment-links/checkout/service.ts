/**
 * The checkout service of payment links: one session per payment attempt, settled through the
 * payments port into the business collection wallet, with the CHECKOUT_* webhooks through the
 * outbox. The steps live beside it: pay.ts (start and pay), settle.ts (reports, abandonment,
 * re-drive), effects.ts (state changes and their exactly-once effects), decide.ts (the rule
 * table), session.ts (the document and its view), transfer.ts (paying by bank transfer),
 * receipt.ts (the payer's receipt).
 */
import type { DocumentStore, EmailSender, Filter, PaymentProcessor, PaymentReport, WebhookOutbox } from "../../../../adapters/ports.ts";
import type { BusinessRecord, TenantDirectory } from "../../../../core/directory.ts";
import type { Logger } from "../../../../core/log.ts";
import type { CheckoutInput } from "./form.ts";
import type { PaymentLink } from "../links/link.ts";
import type { ListTransactionsInput } from "../links/schemas.ts";
import { findPage } from "../../shared/common.ts";
import type { FeePolicy } from "../../shared/money.ts";
import type { CollectionWallet } from "../../wallet/wallet.ts";
import type { CheckoutDeps } from "./deps.ts";
import { startCheckout } from "./pay.ts";
import { ABANDON_AFTER_MS, openCheckoutSessions, transactionView, type CheckoutSession, type TransactionView } from "./session.ts";
import { applyReport, expireStale, redrive } from "./settle.ts";
import { openTransfer, type TransferAccounts, type TransferAttempt } from "./transfer.ts";

export interface CheckoutServiceOptions {
  store: DocumentStore;
  directory: TenantDirectory;
  payments: PaymentProcessor;
  webhooks: WebhookOutbox;
  wallet: CollectionWallet;
  log: Logger;
  fee: FeePolicy;
  clock: () => number;
  /** How long the checkout request waits for the processor before answering "processing". */
  payTimeoutMs: number;
  abandonAfterMs?: number;
  /** The single-use accounts of sessions paid by bank transfer (absent: no transfer method). */
  transfers?: TransferAccounts;
  email?: EmailSender;
}

export interface CheckoutService {
  /** Starts (or, for a resubmitted form, returns) a session and pays it. Answers its current state. */
  start(link: PaymentLink, business: BusinessRecord, input: CheckoutInput): Promise<CheckoutSession>;
  /** Settles a processor report (idempotent; safe to call any number of times, concurrently). */
  applyReport(report: PaymentReport): Promise<void>;
  /** Abandons pending sessions past their deadline (all, or one link's); returns how many. */
  expireStale(scope?: { linkId?: string }): Promise<number>;
  /** Completes the effects of final states left unfinished (a crash, a store hiccup). */
  redrive(): Promise<number>;
  findSession(linkId: string, sessionId: string): Promise<CheckoutSession | null>;
  /** A pending transfer session with its account (opened now if it has none yet). */
  openTransfer(session: CheckoutSession, business: BusinessRecord): Promise<CheckoutSession>;
  /** The transfers into a transfer session's account, oldest first (none without an account). */
  transferAttempts(session: CheckoutSession): Promise<TransferAttempt[]>;
  /** Whether the bank-transfer method is offered. */
  readonly offersTransfer: boolean;
  transactions(businessId: string, linkId: string, query: ListTransactionsInput): Promise<{ items: CheckoutSession[]; total: number }>;
  view(session: CheckoutSession): TransactionView;
}

export function createCheckoutService(options: CheckoutServiceOptions): CheckoutService {
  const { directory, payments, webhooks, wallet, log, fee, clock, payTimeoutMs } = options;
  const sessions = openCheckoutSessions(options.store);
  const abandonAfterMs = options.abandonAfterMs ?? ABANDON_AFTER_MS;
  const transfers = options.transfers ?? null;
  const deps: CheckoutDeps = { sessions, directory, payments, webhooks, wallet, log, fee, clock, payTimeoutMs, abandonAfterMs, transfers, email: options.email };
  return {
    start: (link, business, input) => startCheckout(deps, link, business, input),
    applyReport: (report) => applyReport(deps, report),
    expireStale: (scope) => expireStale(deps, scope),
    redrive: () => redrive(deps),
    async findSession(linkId, sessionId) {
      const s = await deps.sessions.get(sessionId);
      return s && s.linkId === linkId ? s : null;
    },
    openTransfer: (session, business) => openTransfer(deps, session, business),
    transferAttempts: async (session) => (session.transfer && transfers ? transfers.attempts(session) : []),
    offersTransfer: transfers !== null,
    async transactions(businessId, linkId, query) {
      await expireStale(deps, { linkId });
      const filter: Filter = { businessId, linkId };
      if (query.status) filter.status = query.status;
      const search = query.search?.trim();
      if (search) filter.reference = { $contains: search };
      return findPage(deps.sessions, filter, { field: "createdAt", direction: -1 }, query.page, query.limit);
    },
    view: transactionView,
  };
}
