/**
 * Shared helpers of the virtual-account tests: the collections harness (test/collections) plus
 * calls that create accounts, customers and sandbox deposits and answer their `data`.
 */
import type { CollectionsEnvelope } from "../../core/respond.ts";
import type { CollectionsErrorBody } from "../../core/errors/render.ts";
import type { VirtualAccountView } from "../../plugins/collections/virtual-accounts.ts";
import type { DepositView } from "../../plugins/collections/deposits.ts";
import type { CollectionsHarness } from "../collections/collections-helpers.ts";
import { sourceRef } from "../collections/collections-helpers.ts";

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
