/**
 * Shared helpers of the virtual-account tests: the collections harness (test/plugins/collections/payment-links) plus
 * calls that create accounts, customers and sandbox deposits and answer their `data`.
 */
import * as assert from "uvu/assert";
import type { DocumentStore } from "../../../../adapters/ports.ts";
import type { CollectionsEnvelope } from "../../../../core/respond.ts";
import type { CollectionsErrorBody } from "../../../../core/errors/render.ts";
import { createLogger } from "../../../../core/log.ts";
import { VIRTUAL_ACCOUNTS_COLLECTION, type VirtualAccount, type VirtualAccountView } from "../../../../plugins/collections/virtual-accounts/account.ts";
import { createVirtualAccountService } from "../../../../plugins/collections/virtual-accounts/account-service.ts";
import { DEPOSITS_COLLECTION, IN_FLOW_SUCCESS_EVENT, type Deposit, type DepositView } from "../../../../plugins/collections/virtual-accounts/deposit.ts";
import {
  createDepositService,
  REDRIVE_AFTER_MS,
  type DepositService,
  type DepositServiceOptions,
} from "../../../../plugins/collections/virtual-accounts/deposit-service.ts";
import { createCollectionWallet, type WalletEntry } from "../../../../plugins/collections/wallet/wallet.ts";
import type { CollectionsHarness, HarnessOptions } from "../payment-links/collections-helpers.ts";
import { BEARER_HOOKED, sourceRef, startCollections } from "../payment-links/collections-helpers.ts";
import { withStoreFaults } from "../../../support/store-faults.ts";

export const TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const HOUR = 3_600_000;

export type Envelope<T = unknown> = CollectionsEnvelope<T> & { errors?: CollectionsErrorBody["errors"] };

/** The API's shapes, as the server declares them (plugins/collections). */
export type AccountData = VirtualAccountView;
export type DepositData = DepositView;

/** epoch ms → `YYYY-MM-DD HH:MM:SS` (UTC). */
export function fmt(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}

export async function body<T = unknown>(res: Response): Promise<Envelope<T>> {
  return (await res.json()) as Envelope<T>;
}

/** Creates an account (multi_use by default) and answers its `data`; throws unless 201. */
export async function createAccount(h: CollectionsHarness, fields: Record<string, unknown> = {}, key?: string): Promise<AccountData> {
  const type = (fields.account_type as string | undefined) ?? "multi_use";
  const req: Record<string, unknown> = {
    account_type: type,
    account_name: "Test account",
    source_reference: sourceRef("va"),
    ...(type === "single_use" ? { expires_at: fmt(h.clock.now() + HOUR) } : {}),
    ...fields,
  };
  const res = await h.api("/api/v1/virtual-account", { body: req, key });
  const json = await body<AccountData>(res);
  if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

export function depositBody(accountNumber: string, amount: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    account_number: accountNumber,
    amount,
    sender_name: "Ada Okafor",
    sender_account_number: "0123456789",
    sender_bank: "Example Bank",
    ...extra,
  };
}

/** A sandbox deposit; answers the status and the `data`. */
export async function deposit(
  h: CollectionsHarness,
  accountNumber: string,
  amount: number,
  key?: string,
): Promise<{ status: number; data: DepositData }> {
  const res = await h.api("/api/v1/sandbox/virtual-account/deposit", { body: depositBody(accountNumber, amount), key });
  return { status: res.status, data: (await body<DepositData>(res)).data };
}

/** GET list with a query string; answers the envelope. */
export async function list(h: CollectionsHarness, query = "", key?: string): Promise<Envelope<AccountData[]> & { status: number }> {
  const res = await h.api(`/api/v1/virtual-account${query}`, { key });
  return { ...(await body<AccountData[]>(res)), status: res.status };
}

/** The deposit service on the harness's store (what the deposit worker runs), silent; `overrides` replace its parts. */
export function depositServiceOf(h: CollectionsHarness, overrides: Partial<DepositServiceOptions> = {}): DepositService {
  const clock = h.clock.now;
  return createDepositService({
    store: h.store,
    accounts: createVirtualAccountService({ store: h.store, clock }),
    wallet: createCollectionWallet({ store: h.store, clock }),
    webhooks: h.outbox,
    directory: h.tg.gateway.kit.directory,
    log: createLogger({ level: "silent" }),
    clock,
    ...overrides,
  });
}

/**
 * A deposit whose store call fails right after it won a single_use account (the write happened, its
 * answer was lost; a timed-out call that completes in the background is the same): the request
 * answers 503 in the collections envelope with Retry-After, never a 500; the deposit stays recorded
 * `received` and the worker settles it exactly once (one credit, one IN_FLOW_SUCCESS_EVENT); the
 * next deposit into the account is refunded `account_used`. Run on each document store.
 */
export async function depositStoreFailureScenario(options: HarnessOptions & { store: (clock: () => number) => Promise<DocumentStore> }): Promise<void> {
  let failConsume = false;
  const h = await startCollections({
    ...options,
    store: async (clock) =>
      withStoreFaults(await options.store(clock), (collection, method) => {
        if (!failConsume || collection !== VIRTUAL_ACCOUNTS_COLLECTION || method !== "findOneAndUpdate") return null;
        failConsume = false;
        return "after";
      }),
  });
  try {
    const a = await createAccount(h, { account_type: "single_use", amount: 4200, expires_at: fmt(h.clock.now() + HOUR) }, BEARER_HOOKED);
    failConsume = true;
    const res = await h.api("/api/v1/sandbox/virtual-account/deposit", { key: BEARER_HOOKED, body: depositBody(a.accountNumber, 4200) });
    const env = await body(res);
    assert.is(res.status, 503, JSON.stringify(env));
    assert.is(res.headers.get("retry-after"), "30");
    assert.is(env.statusCode, 503);
    assert.match(env.message, /temporarily unavailable/);
    assert.equal(env.errors, []);
    assert.not.ok(failConsume, "the failure hit the account's compare-and-set");

    const deposits = h.store.collection<Deposit>(DEPOSITS_COLLECTION);
    const [recorded] = (await deposits.find({ virtualAccountId: a.id })).items;
    assert.is(recorded?.status, "received", "recorded, not lost");
    const account = await h.store.collection<VirtualAccount>(VIRTUAL_ACCOUNTS_COLLECTION).get(a.id);
    assert.is(account?.consumedBySessionId, recorded!._id, "the lost answer was a win");
    const credits = h.store.collection<WalletEntry>("collections_wallet_entries");
    const events = async () => (await h.webhooks("hooked")).filter((w) => w.idempotencyKey === `${IN_FLOW_SUCCESS_EVENT}:${recorded!._id}`);
    assert.is(await credits.count({ sourceId: recorded!._id }), 0);

    const worker = depositServiceOf(h);
    h.clock.advance(REDRIVE_AFTER_MS + 1);
    assert.is(await worker.redrive(), 1);
    assert.is(await worker.redrive(), 0, "once");
    const settled = await deposits.get(recorded!._id);
    assert.is(settled?.status, "settled");
    assert.is(settled?.effectsPending, false);
    assert.equal((await credits.find({ sourceId: recorded!._id })).items.map((c) => c.amountKobo), [420_000], "one credit");
    assert.is((await events()).length, 1, "one IN_FLOW_SUCCESS_EVENT");

    const next = await deposit(h, a.accountNumber, 4200, BEARER_HOOKED);
    assert.is(next.status, 201);
    assert.is(next.data.status, "refunded");
    assert.is(next.data.reason, "account_used");
  } finally {
    await h.close();
  }
}
