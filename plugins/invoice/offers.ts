/**
 * What the invoice plugins offer each other through the plugin kit (core/plugin.ts `OfferKey`), so
 * none imports another's folder.
 */
import { defineOffer } from "../../core/plugin.ts";

/** An operator's (or the recovery jobs') decision on a frozen Stored invoice. */
export type FrozenInvoiceOutcome = "signed" | "not_signed" | "transmitted" | "not_transmitted";

export interface FrozenInvoiceResolver {
  /**
   * Resolves a frozen Stored invoice after checking the regulator; wakes the processor when the
   * invoice has work again. An operator's decision (`actor` "operator:<credential>" or none) is
   * appended to the audit log (`invoice.resolve`) by the call that records it; the same decision
   * again returns the invoice as recorded and appends nothing. Throws the catalog's errors (not
   * found, state conflict, an outcome that does not fit how it froze), or the store's
   * DependencyUnavailableError when it cannot answer.
   */
  resolve(operator: { requestId: string; credentialId: string; actor?: string }, invoiceId: string, outcome: FrozenInvoiceOutcome): Promise<unknown>;
}

/** Offered by stored-processing; used by recovery to settle frozen Stored signs it can prove, and by the operator console. */
export const FROZEN_INVOICE_RESOLVER = defineOffer<FrozenInvoiceResolver>("frozenInvoiceResolver");

/** Who records a decision on a frozen operation: `operator:<credentialId>`, and the request. */
export interface OperatorDecider {
  actor: string;
  requestId: string;
}

/**
 * The operator's decisions on frozen Pass-through operations, as the Admin API routes
 * `POST /admin/sign-attempts/{operationId}/resolution` and `POST /admin/transmissions/{operationId}/resolution`
 * make them (same settlement, same record, same audit entry). Throws the ledger's BillingError when
 * it refuses a settlement, or the store's DependencyUnavailableError.
 */
export interface FrozenOperationResolver {
  resolveSignAttempt(
    operationId: string,
    outcome: "signed" | "not_signed",
    by: OperatorDecider,
  ): Promise<{ operationId: string; businessId: string; status: string; money: string } | "not_found" | "not_held">;
  resolveTransmission(
    operationId: string,
    outcome: "transmitted" | "not_transmitted",
    by: OperatorDecider,
  ): Promise<{ operationId: string; businessId: string; claimState: string } | "not_found" | "not_unknown">;
}

/** Offered by recovery (which owns the Admin API resolution routes); used by the operator console. */
export const FROZEN_OPERATION_RESOLVER = defineOffer<FrozenOperationResolver>("frozenOperationResolver");

/** Who asks for a directory change: the operator credential, the request, the route and its idempotency key. */
export interface DirectoryOperatorCall {
  credentialId: string;
  requestId: string;
  route: string;
  idempotencyKey: string;
  /** Who the audit log names (default `operator:<credentialId>`; the merchant dashboard: `dashboard:<userId>`). */
  actor?: string;
}

/** A directory change's answer, as the Admin API sends it; `plainKey` on a key create or roll's first answer only. */
export interface DirectoryAnswer {
  status: number;
  body: unknown;
  replayed: boolean;
  plainKey?: string;
}

/**
 * The Admin API's directory changes (plugins/admin directory service) as their routes make them:
 * each input is validated with the route's own schema (a GW_REQUEST_VALIDATION_FAILED error
 * otherwise), each change is idempotent on the call's key and appends the same audit entry.
 * Inputs are the routes' bodies (`unknown` here: the schemas live with the admin plugin).
 */
export interface DirectoryOperations {
  createKey(op: DirectoryOperatorCall, input: unknown): Promise<DirectoryAnswer>;
  rollKey(op: DirectoryOperatorCall, keyId: string, input: unknown): Promise<DirectoryAnswer>;
  revokeKey(op: DirectoryOperatorCall, keyId: string): Promise<DirectoryAnswer>;
  /** Replaces a key's IP allowlist (`{ ipWhitelisted }`, PATCH /admin/keys/{keyId}). */
  updateKey(op: DirectoryOperatorCall, keyId: string, input: unknown): Promise<DirectoryAnswer>;
  changeMode(op: DirectoryOperatorCall, host: string, input: unknown): Promise<DirectoryAnswer>;
  approveDomain(op: DirectoryOperatorCall, host: string): Promise<DirectoryAnswer>;
  /** A domain's sign fee (NGN) and autoTransmit, as `PATCH /admin/domains/{host}` (`domain.update`). */
  updateDomain(op: DirectoryOperatorCall, host: string, input: unknown): Promise<DirectoryAnswer>;
}

/** Offered by admin (which owns the directory routes); used by the operator console and the merchant dashboard. */
export const DIRECTORY_OPERATIONS = defineOffer<DirectoryOperations>("directoryOperations");

/** A business's invoice-gateway wallet as the Admin API shows it (NGN numbers; entries newest first). */
export interface WalletSummary {
  businessId: string;
  currency: string;
  balance: number | string;
  entries: Record<string, unknown>[];
  suspended?: true;
}

/**
 * The Admin API's wallet reads and changes (plugins/admin wallet routes) as their routes make them:
 * a top-up is idempotent on its `reference`; inputs are the routes' bodies, validated with their
 * schemas. An unknown business throws GW_OPERATION_NOT_FOUND; a ledger outage the billing errors.
 */
export interface WalletOperations {
  wallet(businessId: string, limit: number): Promise<WalletSummary>;
  credit(businessId: string, input: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  setSuspended(by: { requestId: string; credentialId: string }, businessId: string, input: unknown): Promise<{ businessId: string; suspended: boolean }>;
}

/** Offered by admin (which owns the wallet routes); used by the operator console. */
export const WALLET_OPERATIONS = defineOffer<WalletOperations>("walletOperations");

/**
 * The operator's identity decisions (plugins/onboarding) as their Admin API routes make them: the
 * review list of `GET /admin/identity-reviews`, a review's decision (`POST
 * /admin/sub-businesses/{id}/identity-reviews/{reviewId}/decision`) and a protected migration (`POST
 * /admin/sub-businesses/{id}/identity-migrations`). Inputs are validated with the routes' own schemas
 * (path and body); each change is idempotent on the call's key, in the operator's scope. Throws the
 * catalog's errors (GW_IDENTITY_REVIEW_CONFLICT, GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED, ...).
 */
export interface IdentityReviewOperations {
  /** `input` is the route's query (status, businessId, limit, cursor); reviews oldest first. */
  reviews(input: unknown): Promise<{ data: Record<string, unknown>[]; nextCursor: string | null }>;
  decideReview(op: DirectoryOperatorCall, gatewaySubBusinessId: string, reviewId: string, input: unknown): Promise<DirectoryAnswer>;
  migrate(op: DirectoryOperatorCall, gatewaySubBusinessId: string, input: unknown): Promise<DirectoryAnswer>;
}

/** Offered by onboarding (which owns the identity review routes); used by the operator console. */
export const IDENTITY_REVIEW_OPERATIONS = defineOffer<IdentityReviewOperations>("identityReviewOperations");
