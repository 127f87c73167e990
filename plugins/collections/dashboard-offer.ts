/**
 * The collections resources as the merchant dashboard reads and changes them
 * (COLLECTIONS_OPERATIONS): the services the API routes call, with the routes' own schemas, so a
 * dashboard form and its API call validate, store and notify alike. The sandbox is TEST-only as on
 * the API (404 otherwise); its checkout goes through the checkout service the pay page uses, with
 * the form's idempotency key as the checkout token (a resubmitted form answers the same session).
 */
import { CollectionsError } from "../../core/errors/gateway-error.ts";
import { validateInput } from "../../core/validation.ts";
import type { ApiView, CollectionsOperations } from "../invoice/dashboard-offers.ts";
import { parseCheckoutForm } from "./payment-links/checkout/form.ts";
import { CreatePaymentLinkBody, ListLinksQuery, ListTransactionsQuery, type CreatePaymentLinkInput, type ListLinksInput, type ListTransactionsInput } from "./payment-links/links/schemas.ts";
import type { PaymentLinkServices } from "./payment-links/services.ts";
import { PageQuery, bodyOf, type PageInput } from "./shared/input.ts";
import { ListVirtualAccountsQuery, listInputFromQuery } from "./virtual-accounts/query-schemas.ts";
import { DepositBody, type DepositInput } from "./virtual-accounts/schemas.ts";
import type { VirtualAccountServices } from "./virtual-accounts/services.ts";
import { walletEntryView, type CollectionWallet } from "./wallet/wallet.ts";

export function collectionsOperations(links: PaymentLinkServices, accounts: VirtualAccountServices, wallet: CollectionWallet): CollectionsOperations {
  const view = (x: unknown) => x as ApiView;
  return {
    async paymentLinks(businessId, query) {
      const q = validateInput(ListLinksQuery, query, "query") as ListLinksInput;
      const { items, total } = await links.links.list(businessId, q);
      return { items: items.map((l) => view(links.links.view(l))), total };
    },
    paymentLink: async (businessId, reference) => view(links.links.view(await links.links.findByReference(businessId, reference))),
    paymentLinkBySourceReference: async (businessId, sourceReference) => view(links.links.view(await links.links.findBySourceReference(businessId, sourceReference))),
    async linkTransactions(businessId, reference, query) {
      const link = await links.links.findByReference(businessId, reference);
      const q = validateInput(ListTransactionsQuery, query, "query") as ListTransactionsInput;
      const { items, total } = await links.checkout.transactions(businessId, link._id, q);
      return { items: items.map((t) => view(links.checkout.view(t))), total };
    },
    createPaymentLink: async (businessId, body) => view(links.links.view(await links.links.create(businessId, validateInput(CreatePaymentLinkBody, body, "body") as CreatePaymentLinkInput))),
    togglePaymentLink: async (businessId, reference, activate) => view(links.links.view(await links.links.toggle(businessId, reference, activate))),
    async virtualAccounts(businessId, query) {
      const q = listInputFromQuery(validateInput(ListVirtualAccountsQuery, query, "query") as Record<string, unknown>);
      const { items, total, now } = await accounts.accounts.list(businessId, q);
      return { items: items.map((a) => view(accounts.accounts.view(a, now))), total };
    },
    async virtualAccount(businessId, reference) {
      const account = await accounts.accounts.findByReference(businessId, reference);
      const deposits = await accounts.deposits.forAccount(account._id);
      return { account: view(accounts.accounts.view(account)), deposits: deposits.map((d) => view(accounts.deposits.view(d))) };
    },
    async customers(businessId, query) {
      const page = await accounts.customers.list(businessId, query);
      return { items: page.items.map((c) => view(accounts.customers.view(c))), nextCursor: page.nextCursor };
    },
    customer: async (businessId, id) => view(accounts.customers.view(await accounts.customers.get(businessId, id))),
    async wallet(businessId, query) {
      const q = validateInput(PageQuery, query, "query") as PageInput;
      const [{ items, total }, balanceKobo] = await Promise.all([wallet.transactions(businessId, q.page, q.limit), wallet.balance(businessId)]);
      return { items: items.map((e) => view(walletEntryView(e))), total, balanceKobo };
    },
    async sandboxDeposit(businessId, body) {
      _testOnly(accounts, businessId);
      const input = bodyOf<DepositInput>(validateInput(DepositBody, body, "body"));
      const account = await accounts.accounts.findByAccountNumber(businessId, input.accountNumber);
      if (!account) throw new CollectionsError(404, "Virtual account not found.", [{ field: "account_number", message: "is not a virtual account of this business" }]);
      return view(accounts.deposits.view(await accounts.deposits.receive(account, input)));
    },
    async sandboxCheckout(businessId, reference, input) {
      const business = _testOnly(accounts, businessId);
      const link = await links.links.findByReference(businessId, reference);
      const available = links.links.availability(link);
      if (!available.ok) throw new CollectionsError(409, `The link cannot take a payment now (${available.reason}).`);
      const form = parseCheckoutForm({ email: input.email, amount: input.amount, outcome: input.outcome, method: "processor", checkout_token: input.token }, link.amountKobo);
      if (!form.ok) throw new CollectionsError(422, "The checkout has invalid values; see errors.", form.errors);
      return view(links.checkout.view(await links.checkout.start(link, business, form.value)));
    },
  };
}

// --- Internal helpers ---

/** The sandbox serves TEST businesses only (the API's 404 for LIVE). */
function _testOnly(s: VirtualAccountServices, businessId: string) {
  const business = s.directory.business(businessId);
  if (business?.state !== "TEST") throw new CollectionsError(404, "Not found: the sandbox is available to TEST businesses only.");
  return business;
}
