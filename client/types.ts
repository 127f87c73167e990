/**
 * The client's request and response types, derived from the gateway's own declarations: the valibot
 * schemas its routes validate with (`v.InferInput`) and the view types its handlers answer with, or
 * declared here where a handler's answer has no view type (test/client/types.test.ts holds those to
 * the server's answers). A changed schema or view changes these types, and `npm test` (tsc) checks
 * every method and test against them.
 *
 * This is the only client file that names server code, and only with `import type` (erased at run
 * time: test/client/package.test.ts proves the client runs without any server module).
 */
import type * as v from "valibot";
import type { OnboardingBody, ReverificationBody, RotationBody, ListQuery as SubBusinessListQuery } from "../plugins/onboarding/schemas.ts";
import type { MigrationSide, ReviewStatus, VersionSource } from "../plugins/onboarding/store.ts";
import type { ReverificationView, SubBusinessView } from "../plugins/onboarding/views.ts";
import type { InvoiceDocumentBody, IrnValidationBody, PaymentUpdateBody } from "../plugins/signing/schemas.ts";
import type { IntakeBody, ListQuery as InvoiceListQuery } from "../plugins/stored-processing/schemas.ts";
import type { IntakeView, InvoiceView } from "../plugins/invoice/stored-invoices.ts";
import type { CreatePaymentLinkBody, ListLinksQuery, ListTransactionsQuery, ToggleStatusBody } from "../plugins/collections/payment-links/links/schemas.ts";
import type { FieldErrors, PageQuery } from "../plugins/collections/shared/input.ts";
import type {
  CreateCustomerBody,
  CreateVirtualAccountShape,
  DepositShape,
  ToggleVirtualAccountBody,
} from "../plugins/collections/virtual-accounts/schemas.ts";
import type { FindVirtualAccountQuery, ListVirtualAccountsQuery } from "../plugins/collections/virtual-accounts/query-schemas.ts";
import type { PaymentLinkView } from "../plugins/collections/payment-links/links/link.ts";
import type { TransactionView } from "../plugins/collections/payment-links/checkout/session.ts";
import type { VirtualAccountView } from "../plugins/collections/virtual-accounts/account.ts";
import type { CustomerView } from "../plugins/collections/virtual-accounts/customers.ts";
import type { DepositView } from "../plugins/collections/virtual-accounts/deposit.ts";
import type { WalletEntryView } from "../plugins/collections/wallet/wallet.ts";
import type { CollectionsEnvelope, PageMeta } from "../core/respond.ts";
import type { GwCode, RetryStrategy } from "../core/errors/catalog.ts";
import type { CollectionsErrorBody, ProblemBody } from "../core/errors/render.ts";
import type { Violation } from "../core/errors/gateway-error.ts";

// --- Errors (spec §2.4, §7) ---

/** A `GW_*` code of the catalog (core/errors/catalog.ts). */
export type ErrorCode = GwCode;
export type { RetryStrategy, Violation };
/** The problem+json body, every field of spec §2.4. */
export type Problem = ProblemBody;

/** One failing field of a collections error envelope (DECISIONS.md). */
export type FieldError = FieldErrors[number];
/** The collections error envelope. */
export type CollectionsErrorEnvelope = CollectionsErrorBody;

/**
 * A query schema's input as a caller writes it: every parameter optional, numbers allowed where the
 * wire carries digits (the client turns them into text).
 */
export type QueryOf<S extends v.GenericSchema> = {
  [K in keyof v.InferInput<S>]?: Exclude<v.InferInput<S>[K], undefined> extends string ? string | number : v.InferInput<S>[K];
};

// --- Invoice gateway: represented businesses ---

export type OnboardingRequest = v.InferInput<typeof OnboardingBody>;
export type ReverificationRequest = v.InferInput<typeof ReverificationBody>;
export type RotationRequest = v.InferInput<typeof RotationBody>;
export type SubBusinessListParams = QueryOf<typeof SubBusinessListQuery>;
export type SubBusiness = SubBusinessView;
export type Reverification = ReverificationView;

/** One page of represented businesses (`GET /sub-businesses`). */
export interface SubBusinessPage {
  data: SubBusiness[];
  nextCursor: string | null;
}

/** The identity snapshot of a represented business (as `regulatorIdentity` of a SubBusiness). */
export type RegulatorIdentity = SubBusinessView["regulatorIdentity"];

/** A represented business's identity history (`GET /sub-businesses/{id}/identity-versions`). */
export interface IdentityVersions {
  gatewaySubBusinessId: string;
  externalBusinessId: string;
  currentVersion: number;
  pendingReviewId: string | null;
  versions: IdentityVersion[];
  reviews: IdentityReview[];
  migrations: IdentityMigration[];
}

export interface IdentityVersion {
  version: number;
  current: boolean;
  source: VersionSource;
  reviewId: string | null;
  identity: RegulatorIdentity;
  createdAt: string;
}

/** A reverification's review, as the business sees it. */
export interface IdentityReview {
  reviewId: string;
  gatewaySubBusinessId: string;
  status: ReviewStatus;
  driftClass: "initial" | "none" | "additive" | "protected";
  changedFields: string[];
  requiresProtectedMigration: boolean;
  baseVersion: number;
  appliedVersion: number | null;
  observedIdentity: RegulatorIdentity;
  createdAt: string;
  decidedAt: string | null;
}

/** A protected migration an operator made, as the business sees it. */
export interface IdentityMigration {
  migrationId: string;
  reviewId: string;
  gatewaySubBusinessId: string;
  at: string;
  from: MigrationSide;
  to: MigrationSide;
}

// --- Invoice gateway: Pass-through ---

/** The regulator's invoice document (the regulator validates its fields; the gateway checks the ones it needs). */
export type InvoiceDocument = v.InferInput<typeof InvoiceDocumentBody>;
export type IrnValidationRequest = v.InferInput<typeof IrnValidationBody>;
export type PaymentUpdateRequest = v.InferInput<typeof PaymentUpdateBody>;
/**
 * A Pass-through answer is the regulator's own, relayed unchanged (spec §4.2 rule 3): its JSON
 * envelope (`code`, `data`, …), not a gateway shape. A sign succeeded only when `code` is 201 and
 * `data.ok` is true (spec §3.2); the client checks that for you.
 */
export type RegulatorAnswer = { code?: number; data?: unknown; message?: string } & Record<string, unknown>;

// --- Invoice gateway: Stored ---

export type IntakeDocument = v.InferInput<typeof IntakeBody>;
export type InvoiceListParams = QueryOf<typeof InvoiceListQuery>;
export type IntakeAccepted = IntakeView;
export type StoredInvoice = InvoiceView;
export type StoredInvoicePage = { data: StoredInvoice[]; nextCursor: string | null };

// --- Collections ---

export type CreatePaymentLinkRequest = v.InferInput<typeof CreatePaymentLinkBody>;
export type TogglePaymentLinkRequest = v.InferInput<typeof ToggleStatusBody>;
export type PaymentLinkListParams = QueryOf<typeof ListLinksQuery>;
export type TransactionListParams = QueryOf<typeof ListTransactionsQuery>;
export type PageParams = QueryOf<typeof PageQuery>;
export type CreateVirtualAccountRequest = v.InferInput<typeof CreateVirtualAccountShape>;
export type VirtualAccountListParams = QueryOf<typeof ListVirtualAccountsQuery>;
type FindKeys = keyof v.InferInput<typeof FindVirtualAccountQuery>;
/** Exactly one of `reference` or `sourceReference` (spec collections §4, find rules). */
export type VirtualAccountLookup = { [K in FindKeys]: { [P in K]: string } & { [P in Exclude<FindKeys, K>]?: never } }[FindKeys];
export type ToggleVirtualAccountRequest = v.InferInput<typeof ToggleVirtualAccountBody>;
export type CreateCustomerRequest = v.InferInput<typeof CreateCustomerBody>;
export type SandboxDepositRequest = v.InferInput<typeof DepositShape>;

export type PaymentLink = PaymentLinkView;
export type PaymentLinkTransaction = TransactionView;
export type VirtualAccount = VirtualAccountView;
export type Customer = CustomerView;
export type SandboxDeposit = DepositView;
export type WalletEntry = WalletEntryView;

/** The list `meta` of the collections envelope (spec collections §2.1). */
export type { PageMeta };
/** The collections envelope around `data` (spec collections §2.1). */
export type Envelope<T> = Omit<CollectionsEnvelope<T>, "meta">;
/** A list answer: `data` plus `meta`. */
export type ListEnvelope<T> = Envelope<T[]> & { meta: PageMeta };
