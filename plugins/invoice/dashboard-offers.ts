/**
 * What the merchant dashboard's data screens read and change through the plugin kit (core/plugin.ts
 * `OfferKey`), so the dashboard imports no other plugin's folder: the Stored invoices (offered by
 * stored-processing), the represented businesses (onboarding) and the collections resources (payment
 * links, virtual accounts, customers, the collection wallet, the sandbox). Each operation calls the
 * service its public API route calls, with the route's own input schema (same validation, same
 * idempotency), scoped to one top-level business: another business's id is "not found".
 *
 * Collections answers are the API's own views (the objects its envelope's `data` holds), typed here
 * as plain records: the dashboard shows what the API answers, never a second shape.
 */
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { defineOffer } from "../../core/plugin.ts";
import type { InvoiceDoc } from "./stored-invoices.ts";

/** Who acts from the dashboard: the business, its environment, the request and the user (audit, logs). */
export interface DashboardCaller {
  businessId: string;
  state: RegulatorState;
  requestId: string;
  /** "dashboard:<userId>". */
  actor: string;
}

// ---------------------------------------------------------------------------
// Stored invoices
// ---------------------------------------------------------------------------

export interface StoredInvoicePage {
  items: InvoiceDoc[];
  nextCursor: string | null;
}

/**
 * The Stored invoice reads and changes of `GET /invoices`, `GET /invoices/{id}`,
 * `POST /invoices/{id}/transmit` and `/cancel`, on the business's invoices of its current
 * environment. `list` validates its query with the route's schema (GW_REQUEST_VALIDATION_FAILED);
 * `get`, `transmit` and `cancel` throw GW_INVOICE_NOT_FOUND for an id not of this business, and the
 * routes' state answers (GW_INVOICE_STATE_CONFLICT, GW_INVOICE_NOT_TRANSMITTABLE,
 * GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED). Both changes are idempotent by the invoice's status.
 */
export interface StoredInvoiceOperations {
  list(caller: Pick<DashboardCaller, "businessId" | "state">, query: Record<string, string>): Promise<StoredInvoicePage>;
  get(caller: Pick<DashboardCaller, "businessId" | "state">, invoiceId: string): Promise<InvoiceDoc>;
  transmit(caller: DashboardCaller, invoiceId: string): Promise<InvoiceDoc>;
  cancel(caller: DashboardCaller, invoiceId: string): Promise<InvoiceDoc>;
}

/** Offered by stored-processing; used by the merchant dashboard. */
export const STORED_INVOICE_OPERATIONS = defineOffer<StoredInvoiceOperations>("storedInvoiceOperations");

// ---------------------------------------------------------------------------
// Represented businesses
// ---------------------------------------------------------------------------

/** A represented business, its identity history and reviews, as the onboarding routes answer them. */
export type ApiView = Readonly<Record<string, unknown>>;

/**
 * The onboarding reads of `GET /sub-businesses`, `GET /sub-businesses/{id}` and
 * `/identity-versions` (cursor, at most 100 a page). An id of another business throws
 * GW_SUB_BUSINESS_NOT_FOUND or GW_SUB_BUSINESS_FORBIDDEN (the dashboard answers both 404).
 */
export interface RepresentedBusinessReads {
  list(caller: Pick<DashboardCaller, "businessId" | "state">, query: { limit?: number; cursor?: string }): Promise<{ data: ApiView[]; nextCursor: string | null }>;
  get(caller: Pick<DashboardCaller, "businessId" | "state">, gatewaySubBusinessId: string): Promise<ApiView>;
  identityVersions(caller: Pick<DashboardCaller, "businessId" | "state">, gatewaySubBusinessId: string): Promise<ApiView>;
}

/** Offered by onboarding; used by the merchant dashboard. */
export const REPRESENTED_BUSINESS_READS = defineOffer<RepresentedBusinessReads>("representedBusinessReads");

// ---------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------

export interface CountedPage {
  items: ApiView[];
  total: number;
}

/** A sandbox checkout's chosen outcome (the checkout page's test-mode choice). */
export type SandboxCheckoutOutcome = "success" | "failure";

/**
 * The collections API's reads and changes for one business (inputs are the routes' query strings
 * and bodies, validated with their schemas: a CollectionsError 422 lists every failing field; an id
 * not of this business is a CollectionsError 404):
 * - payment links: `GET /api/v1/payment-link`, find by reference, its transactions, create,
 *   toggle-status;
 * - virtual accounts: `GET /api/v1/virtual-account` (the API's filters), find by reference with
 *   its deposits (at most 100, oldest first);
 * - customers: the business's customers newest first (cursor; the API has no list route), one;
 * - the collection wallet: `GET /api/v1/balances/transactions` and the balance;
 * - the sandbox (TEST businesses only; 404 for LIVE): `POST /api/v1/sandbox/virtual-account/deposit`,
 *   and a checkout of a link with a chosen outcome through the checkout service the pay page uses,
 *   so the same webhooks fire.
 */
export interface CollectionsOperations {
  paymentLinks(businessId: string, query: Record<string, string>): Promise<CountedPage>;
  paymentLink(businessId: string, reference: string): Promise<ApiView>;
  paymentLinkBySourceReference(businessId: string, sourceReference: string): Promise<ApiView>;
  linkTransactions(businessId: string, reference: string, query: Record<string, string>): Promise<CountedPage>;
  createPaymentLink(businessId: string, body: unknown): Promise<ApiView>;
  togglePaymentLink(businessId: string, reference: string, activate: boolean): Promise<ApiView>;
  virtualAccounts(businessId: string, query: Record<string, string>): Promise<CountedPage>;
  virtualAccount(businessId: string, reference: string): Promise<{ account: ApiView; deposits: ApiView[] }>;
  customers(businessId: string, query: { limit?: number; cursor?: string }): Promise<{ items: ApiView[]; nextCursor: string | null }>;
  customer(businessId: string, id: string): Promise<ApiView>;
  wallet(businessId: string, query: Record<string, string>): Promise<CountedPage & { balanceKobo: number }>;
  sandboxDeposit(businessId: string, body: unknown): Promise<ApiView>;
  /** `token`: the form's idempotency key (8–64 of A-Z a-z 0-9 -): the same token answers the same session. */
  sandboxCheckout(businessId: string, reference: string, input: { email: string; amount: string; outcome: SandboxCheckoutOutcome; token: string }): Promise<ApiView>;
}

/** Offered by collections; used by the merchant dashboard. */
export const COLLECTIONS_OPERATIONS = defineOffer<CollectionsOperations>("collectionsOperations");
