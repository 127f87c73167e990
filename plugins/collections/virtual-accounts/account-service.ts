/**
 * Virtual accounts (spec §1, §2.4–§2.5, §3.2, §4; DECISIONS.md "Virtual accounts"): NGN bank
 * accounts that settle into the business collection wallet. Read
 * docs/collections-virtual-accounts.md first.
 *
 * Derived status, exactly and index-friendly. Each account stores
 * - `enabled`   — false after toggle-status `activate: false`;
 * - `openUntil` — epoch ms from which the account is expired: its `expiresAt` for a single_use
 *                 account, 0 once a single_use account completed a payment (`consumed`), and
 *                 NEVER (the largest JavaScript date) for multi_use accounts.
 * so that, at any time `now`:
 *     expired   ⇔ openUntil ≤ now                    (expiry wins over inactive: spec §3.2)
 *     inactive  ⇔ openUntil > now ∧ enabled = false
 *     active    ⇔ openUntil > now ∧ enabled = true
 * The `status` filter of the list is that predicate as a store filter (`statusFilter`): the store
 * selects and counts exactly the accounts of that derived status, so pages and `meta.total` are
 * right, and never a page filtered after the fact. `deriveStatus` is the same predicate in code
 * (the property test checks they agree).
 *
 * Uniqueness by the store's unique indexes, in every process sharing the store:
 * `accountNumber` system-wide (a clash draws another number), `(businessId, reference)`,
 * `(businessId, sourceReference)` (409 on reuse), and `customerId` (sparse: one DVA per customer).
 */
import { createHash, randomInt, randomUUID } from "node:crypto";
import { isDuplicateKeyError, type Collection, type Doc, type DocumentStore, type Filter } from "../../../adapters/ports.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { CURRENCY, formatNgn, koboToNgn } from "../shared/money.ts";
import { findPage, newReference } from "../shared/common.ts";
import { formatTime, formatTimeOrNull } from "../shared/time.ts";
import type { AccountStatus, AccountType, CreateVirtualAccountInput, ListVirtualAccountsInput } from "./schemas.ts";

export const VIRTUAL_ACCOUNTS_COLLECTION = "collections_virtual_accounts";
/** `providerName` of every account: the sandbox bank behind Gatehouse's accounts. */
export const PROVIDER_NAME = "Gatehouse Sandbox Bank";
/** The (fictional) 3-digit bank code the NUBAN check digit is computed with. */
export const SANDBOX_BANK_CODE = "999";
/** `openUntil` of accounts that never expire: the largest time a JavaScript Date can hold. */
export const NEVER = 8_640_000_000_000_000;
/** Namespace of Gatehouse's name-based (v5) UUIDs: businessId and walletId of the resource. */
export const GATEHOUSE_UUID_NAMESPACE = "3f1c7c4e-5b0a-4e55-9a53-0c6f2d1b8e47";
const CREATE_ATTEMPTS = 10;

export interface VirtualAccount extends Doc {
  businessId: string;
  /** Generated (`VA-` + 16 characters), unique per business (and, in practice, system-wide). */
  reference: string;
  /** The caller's reference; unique per business. Generated (`DVA-…`) for customer accounts. */
  sourceReference: string;
  /** 10 digits, NUBAN-shaped, unique system-wide. */
  accountNumber: string;
  accountName: string;
  accountType: AccountType;
  /** Fixed expected amount in kobo, or null (any amount). */
  amountKobo: number | null;
  currency: typeof CURRENCY;
  /** The customer of a dedicated account; absent on other accounts (sparse unique index). */
  customerId?: string;
  enabled: boolean;
  /** A single_use account that completed its payment. */
  consumed: boolean;
  consumedBySessionId: string | null;
  consumedAt: number | null;
  /** single_use: the requested expiry; multi_use: null. */
  expiresAtMs: number | null;
  /** See the module comment: expired ⇔ openUntil ≤ now. */
  openUntil: number;
  createdAt: number;
  updatedAt: number;
}

/** A virtual account as the API shows it (spec §2.5, plus the customer of a dedicated account). */
export interface VirtualAccountView {
  id: string;
  businessId: string;
  businessState: "TEST" | "LIVE";
  /** value and formatted are null when the account accepts any amount. */
  amount: { value: number | null; currency: string; formatted: string | null };
  reference: string;
  walletId: string;
  sourceReference: string;
  accountNumber: string;
  accountName: string;
  providerName: string;
  accountType: AccountType;
  status: AccountStatus;
  currency: string;
  expiresAt: string | null;
  createdAt: string;
  customerId: string | null;
}

export interface NewVirtualAccount extends CreateVirtualAccountInput {
  /** A dedicated account's customer. */
  customerId?: string;
  /** True when `sourceReference` was generated (a clash draws another one instead of a 409). */
  generatedSourceReference?: boolean;
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

export function openVirtualAccounts(store: DocumentStore): Collection<VirtualAccount> {
  return store.collection<VirtualAccount>(VIRTUAL_ACCOUNTS_COLLECTION, {
    indexes: [
      { fields: ["accountNumber"], unique: true },
      { fields: ["businessId", "reference"], unique: true },
      { fields: ["businessId", "sourceReference"], unique: true },
      { fields: ["customerId"], unique: true, sparse: true },
      // Lists: newest first within a business; the status fields follow the equality-sort-range rule.
      { fields: ["businessId", "createdAt"] },
      { fields: ["businessId", "enabled", "createdAt", "openUntil"] },
      { fields: ["businessId", "accountType", "createdAt"] },
    ],
  });
}

export function createVirtualAccountService(options: VirtualAccountServiceOptions): VirtualAccountService {
  const { clock, directory } = options;
  const accounts = openVirtualAccounts(options.store);
  const drawNumber = options.newAccountNumber ?? newAccountNumber;
  const notFound = () => new CollectionsError(404, "Virtual account not found.");

  const view = (a: VirtualAccount, now: number = clock()): VirtualAccountView => ({
    id: a._id,
    businessId: businessUuid(a.businessId),
    businessState: directory?.business(a.businessId)?.state ?? "TEST",
    amount: {
      value: a.amountKobo === null ? null : koboToNgn(a.amountKobo),
      currency: a.currency,
      formatted: a.amountKobo === null ? null : `${a.currency} ${formatNgn(a.amountKobo)}`,
    },
    reference: a.reference,
    walletId: walletUuid(a.businessId),
    sourceReference: a.sourceReference,
    accountNumber: a.accountNumber,
    accountName: a.accountName,
    providerName: PROVIDER_NAME,
    accountType: a.accountType,
    status: deriveStatus(a, now),
    currency: a.currency,
    expiresAt: formatTimeOrNull(a.expiresAtMs),
    createdAt: formatTime(a.createdAt),
    customerId: a.customerId ?? null,
  });

  return {
    collection: accounts,

    async create(businessId, input) {
      const now = clock();
      let sourceReference = input.sourceReference;
      for (let attempt = 1; ; attempt++) {
        const account: VirtualAccount = {
          _id: randomUUID(),
          businessId,
          reference: newReference("VA-"),
          sourceReference,
          accountNumber: drawNumber(),
          accountName: input.accountName,
          accountType: input.accountType,
          amountKobo: input.amountKobo,
          currency: CURRENCY,
          ...(input.customerId ? { customerId: input.customerId } : {}),
          enabled: true,
          consumed: false,
          consumedBySessionId: null,
          consumedAt: null,
          expiresAtMs: input.accountType === "single_use" ? input.expiresAtMs : null,
          openUntil: input.accountType === "single_use" ? input.expiresAtMs! : NEVER,
          createdAt: now,
          updatedAt: now,
        };
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
    },

    async findByReference(businessId, reference) {
      const a = await accounts.findOne({ businessId, reference });
      if (!a) throw notFound();
      return a;
    },

    async findBySourceReference(businessId, sourceReference) {
      const a = await accounts.findOne({ businessId, sourceReference });
      if (!a) throw notFound();
      return a;
    },

    findByAccountNumber: (businessId, accountNumber) => accounts.findOne({ accountNumber, businessId }),
    findByCustomer: (customerId) => accounts.findOne({ customerId }),
    get: (id) => accounts.get(id),

    async list(businessId, query) {
      const now = clock();
      const filter = listFilter(businessId, query, now);
      const { items, total } = await findPage(accounts, filter, { field: "createdAt", direction: query.sort === "ASC" ? 1 : -1 }, query.page, query.limit);
      return { items, total, now };
    },

    async toggle(businessId, reference, activate) {
      const now = clock();
      const updated = await accounts.findOneAndUpdate(
        { businessId, reference, openUntil: { $gt: now } },
        { $set: { enabled: activate, updatedAt: now } },
      );
      if (updated) return updated;
      if (!(await accounts.findOne({ businessId, reference }))) throw notFound();
      throw new CollectionsError(409, "The virtual account has expired: its status can no longer change.", [
        { field: "reference", message: "refers to an expired virtual account" },
      ]);
    },

    consume(accountId, sessionId, at) {
      return accounts.findOneAndUpdate(
        { _id: accountId, accountType: "single_use", consumed: false, enabled: true, openUntil: { $gt: at } },
        { $set: { consumed: true, consumedBySessionId: sessionId, consumedAt: at, openUntil: 0, updatedAt: clock() } },
      );
    },

    view,
  };
}

// ---------------------------------------------------------------------------
// Derived status
// ---------------------------------------------------------------------------

/** The account's status at `now` (see the module comment). */
export function deriveStatus(a: Pick<VirtualAccount, "openUntil" | "enabled">, now: number): AccountStatus {
  if (a.openUntil <= now) return "expired";
  return a.enabled ? "active" : "inactive";
}

/** The store filter selecting exactly the accounts whose derived status at `now` is `status`. */
export function statusFilter(status: AccountStatus, now: number): Filter {
  switch (status) {
    case "expired":
      return { openUntil: { $lte: now } };
    case "active":
      return { enabled: true, openUntil: { $gt: now } };
    case "inactive":
      return { enabled: false, openUntil: { $gt: now } };
  }
}

/** The list query as one store filter (every condition in the store; nothing filtered afterwards). */
export function listFilter(businessId: string, q: Omit<ListVirtualAccountsInput, "sort" | "limit" | "page">, now: number): Filter {
  const filter: Filter = { businessId };
  if (q.reference !== undefined) filter.reference = q.reference;
  if (q.accountNumber !== undefined) filter.accountNumber = q.accountNumber;
  if (q.accountType !== undefined) filter.accountType = q.accountType;
  if (q.currency !== undefined) filter.currency = q.currency;
  if (q.status !== undefined) Object.assign(filter, statusFilter(q.status, now));
  if (q.search) {
    filter.$or = [
      { reference: { $contains: q.search } },
      { accountNumber: { $contains: q.search } },
      { accountName: { $contains: q.search } },
    ];
  }
  if (q.createdFrom !== undefined || q.createdTo !== undefined) {
    filter.createdAt = {
      ...(q.createdFrom !== undefined ? { $gte: q.createdFrom } : {}),
      ...(q.createdTo !== undefined ? { $lte: q.createdTo } : {}),
    };
  }
  return filter;
}

// ---------------------------------------------------------------------------
// Identifiers
// ---------------------------------------------------------------------------

/**
 * The resource's `businessId`: a name-based UUID (RFC 4122 version 5, SHA-1) of the configured
 * business id, so it is stable across restarts and processes without storing anything.
 */
export function businessUuid(businessId: string): string {
  return _gatehouseUuid(`business:${businessId}`);
}

/** The resource's `walletId`: the business collection wallet, one per business (UUID v5). */
export function walletUuid(businessId: string): string {
  return _gatehouseUuid(`collection-wallet:${businessId}`);
}

/**
 * uuidV5 in the gateway's namespace, remembered: a list view carries two per account, and a SHA-1
 * each was most of the cost of listing 1 000 accounts (docs/bench.md, issue 12). Business ids are few.
 */
function _gatehouseUuid(name: string): string {
  let id = _uuids.get(name);
  if (id === undefined) {
    id = uuidV5(GATEHOUSE_UUID_NAMESPACE, name);
    if (_uuids.size >= 10_000) _uuids.clear();
    _uuids.set(name, id);
  }
  return id;
}
const _uuids = new Map<string, string>();

/** RFC 4122 §4.3 name-based UUID, version 5. */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replaceAll("-", ""), "hex");
  if (ns.length !== 16) throw new RangeError("the namespace must be a UUID");
  const h = createHash("sha1").update(ns).update(name, "utf8").digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const _NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];

/** The NUBAN check digit of a 9-digit serial at a 3-digit bank code. */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  const digits = bankCode + serial;
  if (!/^\d{12}$/.test(digits)) throw new RangeError("a 3-digit bank code and a 9-digit serial");
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(digits[i]) * _NUBAN_WEIGHTS[i]!;
  const r = sum % 10;
  return r === 0 ? 0 : 10 - r;
}

/** True for a 10-digit number whose last digit is the NUBAN check digit at `bankCode`. */
export function isNuban(accountNumber: string, bankCode: string = SANDBOX_BANK_CODE): boolean {
  return /^\d{10}$/.test(accountNumber) && nubanCheckDigit(bankCode, accountNumber.slice(0, 9)) === Number(accountNumber[9]);
}

/** A random NUBAN-shaped account number: 9 random digits + the check digit at the sandbox bank. */
export function newAccountNumber(): string {
  const serial = String(randomInt(0, 1_000_000_000)).padStart(9, "0");
  return serial + String(nubanCheckDigit(SANDBOX_BANK_CODE, serial));
}

/** The generated source reference of a customer's dedicated account. */
export function dedicatedSourceReference(): string {
  return newReference("DVA-");
}

export function customerHasAccountError(): CollectionsError {
  return new CollectionsError(409, "This customer already has a virtual account.", [
    { field: "customer", message: "already has a dedicated virtual account" },
  ]);
}
