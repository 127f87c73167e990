/**
 * The collections service's client: payment links, virtual accounts, customers, sandbox deposits
 * and wallet credits (spec collections §4, DECISIONS.md). Answers are the service's envelope
 * (`{ requestId, requestTimestamp, message, statusCode, data, meta? }`); errors are
 * CollectionsApiError. The collections API has no idempotency keys, so a mutation whose answer was
 * lost is never sent again automatically (only 429, which proves nothing was done); reads retry
 * on 429, 502–504 and once after a lost answer.
 */
import { createConnection, path, type CallOptions, type Connection, type ConnectionOptions, type Result } from "./http.ts";
import type { OperationSpec } from "./retry.ts";
import type {
  CreateCustomerRequest,
  CreatePaymentLinkRequest,
  CreateVirtualAccountRequest,
  Customer,
  Envelope,
  ListEnvelope,
  PageParams,
  PaymentLink,
  PaymentLinkListParams,
  PaymentLinkTransaction,
  SandboxDeposit,
  SandboxDepositRequest,
  TogglePaymentLinkRequest,
  ToggleVirtualAccountRequest,
  TransactionListParams,
  VirtualAccount,
  VirtualAccountListParams,
  VirtualAccountLookup,
  WalletEntry,
} from "./types.ts";

export interface CollectionsClientOptions extends ConnectionOptions {
  /** The business's secret key (`Authorization: Bearer`). */
  apiKey: string;
}

/** The collections service's client: one group of methods per part of the API. */
export interface CollectionsClient {
  paymentLinks: PaymentLinksApi;
  virtualAccounts: VirtualAccountsApi;
  customers: CustomersApi;
  /** TEST businesses only: simulate an inbound transfer (settled once, or refunded with the reason). */
  sandbox: SandboxApi;
  balances: BalancesApi;
}

/** Payment links (`/api/v1/payment-link`) and the transactions made through them. */
export interface PaymentLinksApi {
  create(body: CreatePaymentLinkRequest, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>>;
  list(params?: PaymentLinkListParams, opts?: CallOptions): Promise<Result<ListEnvelope<PaymentLink>>>;
  findByReference(reference: string, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>>;
  findBySourceReference(sourceReference: string, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>>;
  transactions(reference: string, params?: TransactionListParams, opts?: CallOptions): Promise<Result<ListEnvelope<PaymentLinkTransaction>>>;
  transactionsBySourceReference(
    sourceReference: string,
    params?: TransactionListParams,
    opts?: CallOptions,
  ): Promise<Result<ListEnvelope<PaymentLinkTransaction>>>;
  toggleStatus(body: TogglePaymentLinkRequest, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>>;
}

/** Virtual accounts (`/api/v1/virtual-account`). */
export interface VirtualAccountsApi {
  create(body: CreateVirtualAccountRequest, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>>;
  list(params?: VirtualAccountListParams, opts?: CallOptions): Promise<Result<ListEnvelope<VirtualAccount>>>;
  find(lookup: VirtualAccountLookup, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>>;
  toggleStatus(body: ToggleVirtualAccountRequest, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>>;
}

/** Customers (`/api/v1/customers`). */
export interface CustomersApi {
  /** `has_wallet: true` also creates the customer's dedicated multi_use account. */
  create(body: CreateCustomerRequest, opts?: CallOptions): Promise<Result<Envelope<Customer>>>;
  get(id: string, opts?: CallOptions): Promise<Result<Envelope<Customer>>>;
  attachVirtualAccount(id: string, opts?: CallOptions): Promise<Result<Envelope<Customer>>>;
}

/** TEST businesses only: simulated inbound transfers. */
export interface SandboxApi {
  deposit(body: SandboxDepositRequest, opts?: CallOptions): Promise<Result<Envelope<SandboxDeposit>>>;
}

/** The collection wallet. */
export interface BalancesApi {
  /** Credits of the collection wallet, newest first. */
  transactions(params?: PageParams, opts?: CallOptions): Promise<Result<ListEnvelope<WalletEntry>>>;
}

export const COLLECTIONS_OPERATIONS = {
  createLink: { name: "paymentLinks.create", kind: "mutation" },
  listLinks: { name: "paymentLinks.list", kind: "read" },
  findLink: { name: "paymentLinks.findByReference", kind: "read" },
  findLinkBySource: { name: "paymentLinks.findBySourceReference", kind: "read" },
  linkTransactions: { name: "paymentLinks.transactions", kind: "read" },
  linkTransactionsBySource: { name: "paymentLinks.transactionsBySourceReference", kind: "read" },
  // Setting a status to a value is the same however often it is done.
  toggleLink: { name: "paymentLinks.toggleStatus", kind: "mutation", replaySafe: true },
  createAccount: { name: "virtualAccounts.create", kind: "mutation" },
  listAccounts: { name: "virtualAccounts.list", kind: "read" },
  findAccount: { name: "virtualAccounts.find", kind: "read" },
  toggleAccount: { name: "virtualAccounts.toggleStatus", kind: "mutation", replaySafe: true },
  createCustomer: { name: "customers.create", kind: "mutation" },
  getCustomer: { name: "customers.get", kind: "read" },
  attachAccount: { name: "customers.attachVirtualAccount", kind: "mutation" },
  deposit: { name: "sandbox.deposit", kind: "mutation" },
  walletTransactions: { name: "balances.transactions", kind: "read" },
} as const satisfies Record<string, OperationSpec>;

const OP = COLLECTIONS_OPERATIONS;

export function createCollectionsClient(options: CollectionsClientOptions): CollectionsClient {
  const { apiKey, ...connection } = options;
  const c = createConnection("collections", { authorization: `Bearer ${apiKey}` }, connection);
  const r = _routes(c);
  return {
    paymentLinks: _paymentLinksApi(r),
    virtualAccounts: _virtualAccountsApi(r),
    customers: _customersApi(r),
    sandbox: {
      deposit: (body: SandboxDepositRequest, opts?: CallOptions): Promise<Result<Envelope<SandboxDeposit>>> =>
        r.post(OP.deposit, "/api/v1/sandbox/virtual-account/deposit", body, opts),
    },
    balances: {
      transactions: (params: PageParams = {}, opts?: CallOptions): Promise<Result<ListEnvelope<WalletEntry>>> =>
        r.get(OP.walletTransactions, "/api/v1/balances/transactions", params, opts),
    },
  };
}

// --- Internal helpers ---

type _Query = Record<string, string | number | boolean | undefined>;

/** GET and POST over one connection: the only two shapes of collections route. */
interface _Routes {
  get<T>(op: OperationSpec, p: string, query?: _Query, opts?: CallOptions): Promise<Result<T>>;
  post<T>(op: OperationSpec, p: string, body: unknown, opts?: CallOptions): Promise<Result<T>>;
}

function _routes(c: Connection): _Routes {
  return {
    get: <T>(op: OperationSpec, p: string, query?: _Query, opts?: CallOptions) => c.call<T>({ op, method: "GET", path: p, query }, opts),
    post: <T>(op: OperationSpec, p: string, body: unknown, opts?: CallOptions) => c.call<T>({ op, method: "POST", path: p, body }, opts),
  };
}

function _paymentLinksApi(r: _Routes): PaymentLinksApi {
  return {
    create: (body: CreatePaymentLinkRequest, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>> =>
      r.post(OP.createLink, "/api/v1/payment-link", body, opts),
    list: (params: PaymentLinkListParams = {}, opts?: CallOptions): Promise<Result<ListEnvelope<PaymentLink>>> =>
      r.get(OP.listLinks, "/api/v1/payment-link", params, opts),
    findByReference: (reference: string, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>> =>
      r.get(OP.findLink, path`/api/v1/payment-link/find-by-reference/${reference}`, undefined, opts),
    findBySourceReference: (sourceReference: string, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>> =>
      r.get(OP.findLinkBySource, path`/api/v1/payment-link/find-by-source-reference/${sourceReference}`, undefined, opts),
    transactions: (reference: string, params: TransactionListParams = {}, opts?: CallOptions): Promise<Result<ListEnvelope<PaymentLinkTransaction>>> =>
      r.get(OP.linkTransactions, path`/api/v1/payment-link/find-by-reference/${reference}/transactions`, params, opts),
    transactionsBySourceReference: (
      sourceReference: string,
      params: TransactionListParams = {},
      opts?: CallOptions,
    ): Promise<Result<ListEnvelope<PaymentLinkTransaction>>> =>
      r.get(OP.linkTransactionsBySource, path`/api/v1/payment-link/source-reference/${sourceReference}/transactions`, params, opts),
    toggleStatus: (body: TogglePaymentLinkRequest, opts?: CallOptions): Promise<Result<Envelope<PaymentLink>>> =>
      r.post(OP.toggleLink, "/api/v1/payment-link/toggle-status", body, opts),
  };
}

function _virtualAccountsApi(r: _Routes): VirtualAccountsApi {
  return {
    create: (body: CreateVirtualAccountRequest, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>> =>
      r.post(OP.createAccount, "/api/v1/virtual-account", body, opts),
    list: (params: VirtualAccountListParams = {}, opts?: CallOptions): Promise<Result<ListEnvelope<VirtualAccount>>> =>
      r.get(OP.listAccounts, "/api/v1/virtual-account", params, opts),
    find: (lookup: VirtualAccountLookup, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>> =>
      r.get(OP.findAccount, "/api/v1/virtual-account/find", lookup, opts),
    toggleStatus: (body: ToggleVirtualAccountRequest, opts?: CallOptions): Promise<Result<Envelope<VirtualAccount>>> =>
      r.post(OP.toggleAccount, "/api/v1/virtual-account/toggle-status", body, opts),
  };
}

function _customersApi(r: _Routes): CustomersApi {
  return {
    create: (body: CreateCustomerRequest, opts?: CallOptions): Promise<Result<Envelope<Customer>>> =>
      r.post(OP.createCustomer, "/api/v1/customers", body, opts),
    get: (id: string, opts?: CallOptions): Promise<Result<Envelope<Customer>>> => r.get(OP.getCustomer, path`/api/v1/customers/${id}`, undefined, opts),
    attachVirtualAccount: (id: string, opts?: CallOptions): Promise<Result<Envelope<Customer>>> =>
      r.post(OP.attachAccount, path`/api/v1/customers/${id}/virtual-account`, {}, opts),
  };
}
