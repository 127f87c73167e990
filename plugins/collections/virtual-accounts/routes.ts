/**
 * Routes of the virtual-account part of the collections plugin: virtual accounts, customers and
 * their dedicated accounts, sandbox deposits. Handlers stay thin: validated input → service →
 * envelope. Also the services they share (built once per gateway) and the deposit worker.
 * Read docs/collections-virtual-accounts.md.
 */
import { requirePort, type RouteDeclaration, type Worker } from "../../../core/plugin.ts";
import { CollectionsError } from "../../../core/errors/gateway-error.ts";
import { describeError } from "../../../core/log.ts";
import { envelope, pageMeta } from "../../../core/respond.ts";
import { createCustomerService, type CustomerService } from "./customers.ts";
import { createDepositService, type DepositService } from "./deposit-service.ts";
import { intervalWorker } from "../shared/common.ts";
import type { CollectionsServices } from "../payment-links/routes.ts";
import {
  CreateCustomerBody,
  FindVirtualAccountQuery,
  ListVirtualAccountsQuery,
  ToggleVirtualAccountBody,
  findInputFromQuery,
  listInputFromQuery,
  parseBody,
  parseCreateVirtualAccount,
  parseDeposit,
} from "./schemas.ts";
import { createVirtualAccountService, type VirtualAccountService } from "./account-service.ts";

export interface VirtualAccountServices {
  base: CollectionsServices;
  accounts: VirtualAccountService;
  customers: CustomerService;
  deposits: DepositService;
  clock: () => number;
}

/** The virtual-account services of one gateway, on the collections services (built once, at setup). */
export function virtualAccountServices(base: CollectionsServices, options: { clock?: () => number } = {}): VirtualAccountServices {
  const { kit, wallet } = base;
  const clock = options.clock ?? Date.now;
  const store = kit.ports.documentStore;
  const accounts = createVirtualAccountService({ store, directory: kit.directory, clock });
  return {
    base,
    accounts,
    customers: createCustomerService({ store, accounts, log: kit.log, clock }),
    deposits: createDepositService({
      store,
      accounts,
      wallet,
      webhooks: requirePort(kit, "webhooks"),
      directory: kit.directory,
      log: kit.log,
      clock,
    }),
    clock,
  };
}

export function virtualAccountRoutes(s: VirtualAccountServices): RouteDeclaration[] {
  const { accounts, customers, deposits, clock } = s;
  const { kit } = s.base;

  return [
    {
      method: "POST",
      path: "/api/v1/virtual-account",
      service: "collections",
      auth: "bearer",
      summary: "Create a virtual account",
      description:
        "Body: account_type (single_use | multi_use), account_name and source_reference (3–250 characters; source_reference unique per business), optional amount (> 0, fixed expected amount), expires_at (YYYY-MM-DD HH:MM:SS UTC, in the future and within 24 hours; required for single_use, omitted for multi_use). 422 lists every failing field; 409 on a reused source_reference.",
      responses: { 201: "The virtual account", 409: "source_reference already used", 422: "Validation errors" },
      async handler(ctx) {
        const input = parseCreateVirtualAccount(ctx.body, clock());
        const account = await accounts.create(ctx.businessId!, input);
        return envelope(ctx, 201, "Virtual account created successfully.", accounts.view(account));
      },
    },
    {
      method: "GET",
      path: "/api/v1/virtual-account",
      service: "collections",
      auth: "bearer",
      schemas: { query: ListVirtualAccountsQuery },
      summary: "List virtual accounts (filters, search, creation range, sort on createdAt, page/limit)",
      description:
        "status selects on the derived status at the time of the request (active, inactive, expired). startDate/endDate: YYYY-MM-DD (whole UTC days, inclusive) or YYYY-MM-DD HH:MM:SS. sort: ASC | DESC (default DESC). limit default 1000 (at most 1000), page default 1.",
      responses: { 200: "Virtual accounts and meta", 422: "Validation errors" },
      async handler(ctx) {
        const q = listInputFromQuery(ctx.query);
        const { items, total, now } = await accounts.list(ctx.businessId!, q);
        return envelope(
          ctx,
          200,
          "Virtual accounts retrieved successfully.",
          items.map((a) => accounts.view(a, now)),
          pageMeta(q.page, q.limit, total),
        );
      },
    },
    {
      method: "GET",
      path: "/api/v1/virtual-account/find",
      service: "collections",
      auth: "bearer",
      schemas: { query: FindVirtualAccountQuery },
      summary: "Find one virtual account by exactly one of reference or sourceReference",
      responses: { 200: "The virtual account", 404: "No such account in this business", 422: "Neither or both lookup parameters" },
      async handler(ctx) {
        const by = findInputFromQuery(ctx.query);
        const account =
          by.by === "reference"
            ? await accounts.findByReference(ctx.businessId!, by.value)
            : await accounts.findBySourceReference(ctx.businessId!, by.value);
        return envelope(ctx, 200, "Virtual account retrieved successfully.", accounts.view(account));
      },
    },
    {
      method: "POST",
      path: "/api/v1/virtual-account/toggle-status",
      service: "collections",
      auth: "bearer",
      summary: "Activate or deactivate a virtual account (by its reference)",
      description: "Body: reference, activate (boolean). An inactive account refuses deposits (they are refunded). Expired accounts cannot change status (409).",
      responses: { 200: "The updated virtual account", 404: "No such account in this business", 409: "The account has expired", 422: "Validation errors" },
      async handler(ctx) {
        const input = parseBody(ToggleVirtualAccountBody, ctx.body);
        const account = await accounts.toggle(ctx.businessId!, input.reference, input.activate);
        return envelope(ctx, 200, input.activate ? "Virtual account activated." : "Virtual account deactivated.", accounts.view(account));
      },
    },
    {
      method: "POST",
      path: "/api/v1/customers",
      service: "collections",
      auth: "bearer",
      summary: "Create a customer (has_wallet: true also creates its dedicated multi_use virtual account)",
      description: "Body: first_name, last_name (1–100 characters), email, phone (7–15 digits, optional +), has_wallet (boolean, default false).",
      responses: { 201: "The customer (with its virtual account when has_wallet)", 422: "Validation errors" },
      async handler(ctx) {
        const input = parseBody(CreateCustomerBody, ctx.body);
        const created = await customers.create(ctx.businessId!, input);
        return envelope(ctx, 201, "Customer created successfully.", customers.view(created));
      },
    },
    {
      method: "GET",
      path: "/api/v1/customers/:id",
      service: "collections",
      auth: "bearer",
      summary: "A customer of this business, with its dedicated virtual account",
      responses: { 200: "The customer", 404: "No such customer in this business" },
      async handler(ctx) {
        const found = await customers.get(ctx.businessId!, ctx.params.id!);
        return envelope(ctx, 200, "Customer retrieved successfully.", customers.view(found));
      },
    },
    {
      method: "POST",
      path: "/api/v1/customers/:id/virtual-account",
      service: "collections",
      auth: "bearer",
      summary: "Attach a dedicated multi_use virtual account to a customer that has none",
      responses: { 201: "The customer with its new virtual account", 404: "No such customer in this business", 409: "The customer already has one" },
      async handler(ctx) {
        const attached = await customers.attachAccount(ctx.businessId!, ctx.params.id!);
        return envelope(ctx, 201, "Virtual account attached to the customer.", customers.view(attached));
      },
    },
    {
      method: "POST",
      path: "/api/v1/sandbox/virtual-account/deposit",
      service: "collections",
      auth: "bearer",
      summary: "Sandbox: simulate an inbound transfer into a virtual account (TEST businesses only)",
      description:
        "Body: account_number, amount (> 0), sender_name, sender_account_number (10 digits), sender_bank. Settled: the wallet is credited once and IN_FLOW_SUCCESS_EVENT is sent. Refunded (expired, used single_use, inactive, fixed-amount mismatch): nothing is credited and no event is sent. 404 for LIVE businesses and for account numbers that are not this business's.",
      responses: { 201: "The deposit: settled or refunded (with the reason)", 404: "LIVE business, or no such account in this business", 422: "Validation errors" },
      async handler(ctx) {
        if (kit.directory.business(ctx.businessId!)?.state !== "TEST")
          throw new CollectionsError(404, "Not found: sandbox deposits are available to TEST businesses only.");
        const input = parseDeposit(ctx.body);
        const account = await accounts.findByAccountNumber(ctx.businessId!, input.accountNumber);
        if (!account)
          throw new CollectionsError(404, "Virtual account not found.", [
            { field: "account_number", message: "is not a virtual account of this business" },
          ]);
        const deposit = await deposits.receive(account, input);
        const message =
          deposit.status === "settled"
            ? "Deposit settled into the collection wallet."
            : deposit.status === "refunded"
              ? "Deposit refunded to the sender."
              : "Deposit received; settlement is in progress.";
        return envelope(ctx, 201, message, deposits.view(deposit));
      },
    },
  ];
}

/** Finishes deposits a crash left undecided or with pending effects; safe in every process. */
export function depositWorker(s: VirtualAccountServices, intervalMs: number): Worker {
  return intervalWorker("collections-deposit-redriver", intervalMs, async () => {
    try {
      const done = await s.deposits.redrive();
      if (done > 0) s.base.kit.log.debug("collections_deposits_redriven", { done });
    } catch (e) {
      s.base.kit.log.warn("collections_deposit_sweep_failed", { error: describeError(e) });
    }
  });
}
