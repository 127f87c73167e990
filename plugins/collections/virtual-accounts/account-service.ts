/**
 * The virtual-account service (spec §1, §2.4–§2.5, §3.2, §4; DECISIONS.md "Virtual accounts"):
 * creation under the store's unique keys, the business-scoped lookups and list, toggle-status, and
 * the compare-and-set by which a single_use account takes its one payment. The account, its
 * derived status and its view are in account.ts. Read docs/collections-virtual-accounts.md first.
 */
import { randomUUID } from "node:crypto";
import { isDuplicateKeyError, type Collection, type DocumentStore } from "../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { findPage, newReference } from "../shared/common.ts";
import { createVirtualAccountCounter, type VirtualAccountCounter } from "./account-counts.ts";
import { CURRENCY } from "../shared/money.ts";
import { NEVER, listFilter, openVirtualAccounts, virtualAccountView, type VirtualAccount, type VirtualAccountView } from "./account.ts";
import { dedicatedSourceReference, newAccountNumber } from "./identifiers.ts";
import type { ListVirtualAccountsInput } from "./query-schemas.ts";
import type { CreateVirtualAccountInput } from "./schemas.ts";

const CREATE_ATTEMPTS = 10;

export interface NewVirtualAccount extends CreateVirtualAccountInput {
  /** A dedicated account's customer. */
  customerId?: string;
  /** True when `sourceReference` was generated (a clash draws another one instead of a 409). */
  generatedSourceReference?: boolean;
  /** The checkout session the account is opened for: its deposit settles that checkout. */
  checkoutSessionId?: string;
}

export interface VirtualAccountServiceOptions {
  store: DocumentStore;
  /** Business state (`businessState` of the resource); "TEST" when the directory does not know it. */
  directory?: TenantDirectory;
  clock: () => number;
  /** Draws an account number (tests force clashes); default a random NUBAN-shaped number. */
  newAccountNumber?: () => string;
}

export interface VirtualAccountList {
  items: VirtualAccount[];
  total: number;
  /** The time the status filter and the items' derived statuses were computed at. */
  now: number;
}

export interface VirtualAccountService {
  readonly collection: Collection<VirtualAccount>;
  /** The per-business totals of the list (account-counts.ts). */
  readonly counter: VirtualAccountCounter;
  create(businessId: string, input: NewVirtualAccount): Promise<VirtualAccount>;
  /** 404 CollectionsError when absent from this business. */
  findByReference(businessId: string, reference: string): Promise<VirtualAccount>;
  findBySourceReference(businessId: string, sourceReference: string): Promise<VirtualAccount>;
  findByAccountNumber(businessId: string, accountNumber: string): Promise<VirtualAccount | null>;
  findByCustomer(customerId: string): Promise<VirtualAccount | null>;
  get(id: string): Promise<VirtualAccount | null>;
  list(businessId: string, query: ListVirtualAccountsInput): Promise<VirtualAccountList>;
  /** Sets `enabled`; 404 when absent, 409 when the account is expired. */
  toggle(businessId: string, reference: string, activate: boolean): Promise<VirtualAccount>;
  /**
   * Compare-and-set that marks a single_use account as having completed its payment: succeeds for
   * one caller only, and only while the account is open and enabled at `at`. Null otherwise.
   */
  consume(accountId: string, sessionId: string, at: number): Promise<VirtualAccount | null>;
  view(account: VirtualAccount, now?: number): VirtualAccountView;
}

export function createVirtualAccountService(options: VirtualAccountServiceOptions): VirtualAccountService {
  const { clock, directory } = options;
  const accounts = openVirtualAccounts(options.store);
  const drawNumber = options.newAccountNumber ?? newAccountNumber;
  const counter = createVirtualAccountCounter(options.store, accounts);
  return {
    collection: accounts,
    counter,
    async create(businessId, input) {
      const account = await _create(accounts, drawNumber, businessId, input, clock());
      await counter.added(account);
      return account;
    },
    findByReference: (businessId, reference) => _found(accounts.findOne({ businessId, reference })),
    findBySourceReference: (businessId, sourceReference) => _found(accounts.findOne({ businessId, sourceReference })),
    findByAccountNumber: (businessId, accountNumber) => accounts.findOne({ accountNumber, businessId }),
    findByCustomer: (customerId) => accounts.findOne({ customerId }),
    get: (id) => accounts.get(id),
    async list(businessId, query) {
      const now = clock();
      const filter = listFilter(businessId, query, now);
      const known = await counter.total(businessId, query, now);
      // Ties on createdAt broken by `_id` in the same direction: the list index then holds the order
      // whole, and a page far down passes over index entries without sorting them.
      const direction = query.sort === "ASC" ? 1 : -1;
      const sort = [
        { field: "createdAt", direction },
        { field: "_id", direction },
      ] as const;
      const { items, total } = await findPage(accounts, filter, sort, query.page, query.limit, known);
      return { items, total, now };
    },
    toggle: (businessId, reference, activate) => _toggle(accounts, counter, businessId, reference, activate, clock()),
    consume: (accountId, sessionId, at) =>
      accounts.findOneAndUpdate(
        { _id: accountId, accountType: "single_use", consumed: false, enabled: true, openUntil: { $gt: at } },
        { $set: { consumed: true, consumedBySessionId: sessionId, consumedAt: at, openUntil: 0, updatedAt: clock() } },
      ),
    view: (a, now = clock()) => virtualAccountView(a, now, directory?.business(a.businessId)?.state ?? "TEST"),
  };
}

export function customerHasAccountError(): CollectionsError {
  return new CollectionsError(409, "This customer already has a virtual account.", [
    { field: "customer", message: "already has a dedicated virtual account" },
  ]);
}

// --- Internal helpers ---

/** Inserts the account under a fresh reference and number; 409 on a reused source_reference. */
async function _create(
  accounts: Collection<VirtualAccount>,
  drawNumber: () => string,
  businessId: string,
  input: NewVirtualAccount,
  now: number,
): Promise<VirtualAccount> {
  let sourceReference = input.sourceReference;
  for (let attempt = 1; ; attempt++) {
    const account = _newAccount(businessId, input, sourceReference, drawNumber(), now);
    try {
      return await accounts.insert(account);
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      if (e.index.includes("sourceReference")) {
        if (!input.generatedSourceReference || attempt >= CREATE_ATTEMPTS)
          throw new CollectionsError(409, "A virtual account with this source_reference already exists.", [
            { field: "source_reference", message: "is already used by another virtual account of this business" },
          ]);
        sourceReference = dedicatedSourceReference();
        continue;
      }
      if (e.index.includes("customerId")) throw customerHasAccountError();
      // An account number (or reference) clash: draw again.
      if (attempt >= CREATE_ATTEMPTS) throw e;
    }
  }
}

function _newAccount(businessId: string, input: NewVirtualAccount, sourceReference: string, accountNumber: string, now: number): VirtualAccount {
  return {
    _id: randomUUID(),
    businessId,
    reference: newReference("VA-"),
    sourceReference,
    accountNumber,
    accountName: input.accountName,
    accountType: input.accountType,
    amountKobo: input.amountKobo,
    currency: CURRENCY,
    ...(input.customerId ? { customerId: input.customerId } : {}),
    ...(input.checkoutSessionId ? { checkoutSessionId: input.checkoutSessionId } : {}),
    enabled: true,
    consumed: false,
    consumedBySessionId: null,
    consumedAt: null,
    expiresAtMs: input.accountType === "single_use" ? input.expiresAtMs : null,
    openUntil: input.accountType === "single_use" ? input.expiresAtMs! : NEVER,
    createdAt: now,
    updatedAt: now,
  };
}

/** Sets `enabled` on an open account; the counter moves only when the state changed. */
async function _toggle(
  accounts: Collection<VirtualAccount>,
  counter: VirtualAccountCounter,
  businessId: string,
  reference: string,
  activate: boolean,
  now: number,
): Promise<VirtualAccount> {
  const set = { $set: { enabled: activate, updatedAt: now } };
  const changed = await accounts.findOneAndUpdate({ businessId, reference, enabled: !activate, openUntil: { $gt: now } }, set);
  if (changed) {
    await counter.toggled(changed, activate);
    return changed;
  }
  const updated = await accounts.findOneAndUpdate({ businessId, reference, openUntil: { $gt: now } }, set);
  if (updated) return updated;
  if (!(await accounts.findOne({ businessId, reference }))) throw new CollectionsError(404, "Virtual account not found.");
  throw new CollectionsError(409, "The virtual account has expired: its status can no longer change.", [
    { field: "reference", message: "refers to an expired virtual account" },
  ]);
}

async function _found(lookup: Promise<VirtualAccount | null>): Promise<VirtualAccount> {
  const a = await lookup;
  if (!a) throw new CollectionsError(404, "Virtual account not found.");
  return a;
}
