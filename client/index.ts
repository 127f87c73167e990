/**
 * @gatehouse/client — a typed client for merchants of Gatehouse's two services, which obeys the
 * invoice gateway's retry contract (spec §7.1–§7.2, both exceptions) by itself. Read docs/client.md.
 *
 *   createInvoiceGatewayClient({ baseUrl, host, apiKey })   represented businesses, Pass-through, Stored
 *   createCollectionsClient({ baseUrl, host, apiKey })      payment links, virtual accounts, customers
 *   verifyWebhook / parseCollectionsWebhook / parseInvoiceWebhook   receiving webhooks
 *
 * Run-time dependencies: undici and node:crypto only (no gateway server code).
 */
export {
  createInvoiceGatewayClient,
  INVOICE_OPERATIONS,
  type InvoiceGatewayClient,
  type InvoiceGatewayClientOptions,
  type InvoicesApi,
  type RejectedSign,
  type SignOptions,
  type StoredApi,
  type SubBusinessesApi,
} from "./invoice-gateway.ts";
export {
  createCollectionsClient,
  COLLECTIONS_OPERATIONS,
  type BalancesApi,
  type CollectionsClient,
  type CollectionsClientOptions,
  type CustomersApi,
  type PaymentLinksApi,
  type SandboxApi,
  type VirtualAccountsApi,
} from "./collections.ts";
export type { CallOptions, ConnectionOptions, Result } from "./http.ts";
export {
  CollectionsApiError,
  ConnectionError,
  GatehouseError,
  ProblemError,
  UnexpectedResponseError,
  isCollectionsApiError,
  isConnectionError,
  isGatehouseError,
  isProblemError,
  isUnexpectedResponseError,
  type StopReason,
} from "./errors.ts";
export {
  DEFAULT_RETRY,
  REFUSED_BEFORE_WORK,
  backoffDelay,
  decide,
  parseRetryAfter,
  type AttemptRecord,
  type Decision,
  type OperationSpec,
  type RetryOptions,
  type RetryRuntime,
} from "./retry.ts";
export {
  WebhookVerificationError,
  parseCollectionsWebhook,
  parseInvoiceWebhook,
  parseWebhook,
  verifyWebhook,
  type CollectionsWebhookEvent,
  type InvoiceWebhookEvent,
  type VerifiedWebhook,
  type VerifyWebhookOptions,
  type WebhookFailure,
  type WebhookHeaderSource,
} from "./webhooks.ts";
export type * from "./types.ts";
