/**
 * The Stored service as its routes (and, through the kit's offer, recovery) see it, and what its
 * use cases share: the caller, the intake request and the service's dependencies.
 */
import type { Collection, DocumentStore } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import type { Logger } from "../../core/log.ts";
import type { AuditDoc } from "../../core/directory-store.ts";
import type { FrozenInvoiceOutcome, FrozenInvoiceResolver } from "../invoice/offers.ts";
import type { PendingReviewDoc, SubBusinessDoc } from "../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import type { InvoiceWebhooks } from "./events.ts";
import type { ListQueryInput } from "./schemas.ts";
import type { StoredStore } from "./store.ts";

export interface StoredCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
  domain: string;
  feeKobo: number;
}

export interface IntakeRequest {
  subBusinessId: string;
  idempotencyKey: string;
  body: Record<string, unknown>;
}

/** An operator (or the recovery jobs, `actor: "recovery"`) deciding on a frozen invoice. */
export interface StoredOperator {
  requestId: string;
  credentialId: string;
  actor?: string;
}

export interface InvoicePage {
  items: InvoiceDoc[];
  nextCursor: string | null;
}

/** What a merchant's list is scoped to: its current environment, and (a former Stored domain) that domain. */
export interface ListScope {
  state?: RegulatorState;
  domain?: string;
}

export interface StoredService extends FrozenInvoiceResolver {
  /** Accepts an invoice durably (202), idempotent per key. */
  intake(caller: StoredCaller, r: IntakeRequest): Promise<InvoiceDoc>;
  /** One invoice of the business, of its current environment when `state` is given (404 otherwise). */
  get(businessId: string, invoiceId: string, state?: RegulatorState): Promise<InvoiceDoc>;
  /**
   * The business's invoices (merchant), or every business's (operator: `businessId` null); only
   * those of `scope.state` (the merchant's current environment) and taken in through `scope.domain`
   * (a former Stored domain's backlog) when given.
   */
  list(businessId: string | null, q: ListQueryInput, scope?: ListScope): Promise<InvoicePage>;
  /** signed → transmitting (the processor dispatches once). */
  transmit(caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc>;
  /** pending / validated → cancelled (nothing billed). */
  cancel(caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc>;
  /** A frozen invoice resolved after checking the regulator. */
  resolve(operator: StoredOperator, invoiceId: string, outcome: FrozenInvoiceOutcome): Promise<InvoiceDoc>;
}

export interface StoredServiceOptions {
  store: StoredStore;
  documentStore: DocumentStore;
  webhooks: InvoiceWebhooks;
  log: Logger;
  secret: Buffer;
  retryBudget: number;
  /** Called after an invoice became due (the in-process processor looks at once). */
  onDue: () => void;
}

/** The options, with the represented businesses opened once. */
export interface StoredDeps extends StoredServiceOptions {
  invoices: Collection<InvoiceDoc>;
  subs: Collection<SubBusinessDoc>;
  /** Onboarding's identity reviews (read only: a pending protected migration stops intake). */
  reviews: Collection<PendingReviewDoc>;
  /** The directory's audit log: an operator's resolution is appended by the service (resolve.ts). */
  audit: Collection<AuditDoc>;
}
