/**
 * Customers and their dedicated virtual accounts (DVAs) (spec §1; DECISIONS.md "Customers").
 *
 * A DVA is a `multi_use` account named after the customer (`<first name> <last name>`), carrying
 * the customer's id in `customerId`. The customer document holds no pointer to it: the account is
 * found by `customerId`, which a sparse unique index makes one-per-customer in every process. So
 * two concurrent attaches insert two candidate accounts and the store lets exactly one in; the
 * other answers 409. `has_wallet` of the customer resource is "a DVA exists".
 *
 * Creation with `has_wallet: true` stores the customer first, then its DVA. Should the second
 * write fail (the store went away in between), the customer exists without an account and the
 * request fails; `POST /api/v1/customers/:id/virtual-account` then attaches one.
 */
import { randomUUID } from "node:crypto";
import { isInvalidQueryError, type Collection, type Doc, type DocumentStore } from "../../../adapters/ports.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { describeError, type Logger } from "../../../core/log.ts";
import { formatTime } from "../shared/time.ts";
import type { CreateCustomerInput } from "./schemas.ts";
import type { VirtualAccount, VirtualAccountView } from "./account.ts";
import { customerHasAccountError, type VirtualAccountService } from "./account-service.ts";
import { dedicatedSourceReference } from "./identifiers.ts";

export const CUSTOMERS_COLLECTION = "collections_customers";

const LIST_PAGE = 50;

export interface Customer extends Doc {
  businessId: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  createdAt: number;
  updatedAt: number;
}

export interface CustomerWithAccount {
  customer: Customer;
  account: VirtualAccount | null;
}

/** A customer as the API shows it, with its dedicated virtual account (or null). */
export interface CustomerView {
  id: string;
  firstName: string;
  lastName: string;
  email: string;
  phone: string;
  has_wallet: boolean;
  virtualAccount: VirtualAccountView | null;
  createdAt: string;
}

export interface CustomerService {
  create(businessId: string, input: CreateCustomerInput): Promise<CustomerWithAccount>;
  /** 404 when the customer is not one of this business's. */
  get(businessId: string, id: string): Promise<CustomerWithAccount>;
  /**
   * The business's customers, newest first, with their dedicated accounts (the dashboard's list;
   * the API has no list route). At most 100 a page; `cursor` from the previous page.
   */
  list(businessId: string, page: { limit?: number; cursor?: string }): Promise<{ items: CustomerWithAccount[]; nextCursor: string | null }>;
  /** Attaches a DVA; 404 for an unknown customer, 409 when it already has one (atomic). */
  attachAccount(businessId: string, id: string): Promise<CustomerWithAccount>;
  view(c: CustomerWithAccount, now?: number): CustomerView;
}

export interface CustomerServiceOptions {
  store: DocumentStore;
  accounts: VirtualAccountService;
  log: Logger;
  clock: () => number;
}

export function createCustomerService(options: CustomerServiceOptions): CustomerService {
  const { accounts, log, clock } = options;
  const customers: Collection<Customer> = options.store.collection<Customer>(CUSTOMERS_COLLECTION, {
    indexes: [{ fields: ["businessId", "createdAt"] }],
  });
  const notFound = () => new CollectionsError(404, "Customer not found.");

  const load = async (businessId: string, id: string): Promise<Customer> => {
    const c = await customers.get(id);
    if (!c || c.businessId !== businessId) throw notFound();
    return c;
  };

  const attach = (c: Customer): Promise<VirtualAccount> =>
    accounts.create(c.businessId, {
      accountType: "multi_use",
      accountName: dedicatedAccountName(c),
      sourceReference: dedicatedSourceReference(),
      generatedSourceReference: true,
      amountKobo: null,
      expiresAtMs: null,
      customerId: c._id,
    });

  return {
    async create(businessId, input) {
      const now = clock();
      const customer: Customer = {
        _id: randomUUID(),
        businessId,
        firstName: input.first_name,
        lastName: input.last_name,
        email: input.email,
        phone: input.phone,
        createdAt: now,
        updatedAt: now,
      };
      await customers.insert(customer);
      if (!input.has_wallet) return { customer, account: null };
      try {
        return { customer, account: await attach(customer) };
      } catch (e) {
        log.warn("collections_customer_account_failed", { customerId: customer._id, businessId, error: describeError(e) });
        throw e;
      }
    },

    async get(businessId, id) {
      const customer = await load(businessId, id);
      return { customer, account: await accounts.findByCustomer(customer._id) };
    },

    list: (businessId, page) => _list(customers, accounts, businessId, page),

    async attachAccount(businessId, id) {
      const customer = await load(businessId, id);
      if (await accounts.findByCustomer(customer._id)) throw customerHasAccountError();
      // Two concurrent attaches both get here; the unique customerId index admits one account.
      return { customer, account: await attach(customer) };
    },

    view({ customer: c, account }, now = clock()) {
      return {
        id: c._id,
        firstName: c.firstName,
        lastName: c.lastName,
        email: c.email,
        phone: c.phone,
        has_wallet: account !== null,
        virtualAccount: account ? accounts.view(account, now) : null,
        createdAt: formatTime(c.createdAt),
      };
    },
  };
}

/** A DVA is named after its customer. */
export function dedicatedAccountName(c: Pick<Customer, "firstName" | "lastName">): string {
  return `${c.firstName} ${c.lastName}`;
}

// --- Internal helpers ---

/** The business's customers newest first (≤ 100 a page), each with its dedicated account. */
async function _list(
  customers: Collection<Customer>,
  accounts: VirtualAccountService,
  businessId: string,
  page: { limit?: number; cursor?: string },
): Promise<{ items: CustomerWithAccount[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(page.limit ?? LIST_PAGE, 1), 100);
  let found;
  try {
    found = await customers.find({ businessId }, { sort: [{ field: "createdAt", direction: -1 }], limit, cursor: page.cursor ?? null });
  } catch (e) {
    if (!isInvalidQueryError(e)) throw e;
    throw new CollectionsError(422, "The cursor is not one this list returned.", [{ field: "cursor", message: "use nextCursor of a previous page" }]);
  }
  const items = await Promise.all(found.items.map(async (customer) => ({ customer, account: await accounts.findByCustomer(customer._id) })));
  return { items, nextCursor: found.nextCursor };
}
