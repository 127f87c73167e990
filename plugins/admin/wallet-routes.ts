/**
 * Operator wallet routes (DECISIONS.md "Wallet (operator)"): read a business's invoice-gateway
 * wallet and top it up. x-admin-api-key (401 GW_ADMIN_AUTHENTICATION_FAILED otherwise), answered on
 * every host, default quota per operator credential. Money is integer kobo in the ledger and NGN
 * numbers with at most two decimals on the wire (`Number((kobo / 100).toFixed(2))`).
 *
 * - Unknown business → 404 GW_OPERATION_NOT_FOUND (the closest catalog code: "no operation for that
 *   public identifier"; GW_ROUTE_NOT_FOUND would claim the endpoint does not exist).
 * - Top-ups are idempotent on `reference` (not on x-idempotency-key): 201 when credited, 200 when the
 *   reference was already credited with the same amount; the same reference with another amount is
 *   409 GW_IDEMPOTENCY_CONTENT_CONFLICT.
 * - Suspension (the operator's billing rule): a suspended wallet's new debits are refused, 422
 *   GW_BILLING_REQUEST_REJECTED on the sign.
 * - A ledger outage → 503 GW_BILLING_SERVICE_UNAVAILABLE (declared by the routes; a top-up may retry
 *   with the same reference).
 */
import * as v from "valibot";
import { isBillingError, type BillingEntry, type BillingLedger } from "../../adapters/ports.ts";
import type { RequestContext } from "../../core/context.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { PluginKit, RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { koboToNgn, ngnToKobo } from "../../core/money.ts";

export const WALLET_PATHS = {
  wallet: "/admin/wallets/:businessId",
  credits: "/admin/wallets/:businessId/credits",
  suspension: "/admin/wallets/:businessId/suspension",
} as const;

/** Largest top-up: NGN 100,000,000,000.00 (keeps kobo far inside the safe integer range). */
const MAX_CREDIT_NGN = 100_000_000_000;

export const WalletParams = v.object({
  businessId: v.pipe(v.string("must be a string"), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id")),
});

export const CreditBody = v.strictObject({
  amount: v.pipe(
    v.number("must be a number"),
    v.check((n) => Number.isFinite(n) && n > 0 && n <= MAX_CREDIT_NGN, `must be above 0 and at most ${MAX_CREDIT_NGN}`),
    v.check((n) => ngnToKobo(n) !== null, "at most two decimals"),
  ),
  reference: v.pipe(v.string("must be a string"), v.minLength(1, "1 to 128 characters"), v.maxLength(128, "1 to 128 characters")),
});
export type CreditInput = v.InferOutput<typeof CreditBody>;

export interface WalletView {
  businessId: string;
  currency: string;
  balance: number | string;
  entries: Record<string, unknown>[];
  suspended?: true;
}

export const SuspensionBody = v.strictObject({ suspended: v.boolean("must be true or false") });

export const WalletQuery = v.object({
  limit: v.optional(v.pipe(v.string(), v.regex(/^([1-9]\d{0,2}|1000)$/, "an integer from 1 to 1000"))),
});

const COMMON = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "default",
  skip: ["mode"],
  unavailable: { code: "GW_BILLING_SERVICE_UNAVAILABLE", detail: "The wallet ledger is unavailable." },
} as const;

export function walletRoutes(kit: PluginKit, ledger: BillingLedger): RouteDeclaration[] {
  const knownBusiness = (ctx: RequestContext): string => {
    const id = ctx.params.businessId!;
    if (!kit.directory.business(id)) throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No wallet for that business." });
    return id;
  };

  return [
    {
      ...COMMON,
      method: "GET",
      path: WALLET_PATHS.wallet,
      schemas: { params: WalletParams, query: WalletQuery },
      summary: "Operator: a business's wallet balance and entries",
      description: "Balance in NGN and the latest entries (newest first, `limit` 1–1000, default 100): debits, reversals and credits.",
      responses: { 200: "{ businessId, currency, balance, entries }" },
      async handler(ctx) {
        const businessId = knownBusiness(ctx);
        return json(ctx, 200, await walletView(ledger, businessId, ctx.query.limit ? Number(ctx.query.limit) : 100));
      },
    },
    {
      ...COMMON,
      method: "POST",
      path: WALLET_PATHS.credits,
      schemas: { params: WalletParams, body: CreditBody },
      summary: "Operator: top up a business's wallet (idempotent on reference)",
      description:
        "Credits `amount` NGN (two decimals at most) once per `reference`: 201 when credited, 200 when the reference was already credited. The same reference with another amount is GW_IDEMPOTENCY_CONTENT_CONFLICT.",
      responses: { 200: "reference already credited", 201: "credited" },
      async handler(ctx) {
        const r = await creditWallet(ledger, knownBusiness(ctx), ctx.body as CreditInput);
        return json(ctx, r.status, r.body);
      },
    },
    {
      ...COMMON,
      method: "POST",
      path: WALLET_PATHS.suspension,
      schemas: { params: WalletParams, body: SuspensionBody },
      summary: "Operator: suspend a business's wallet (or lift the suspension)",
      description:
        "`{ suspended: true }`: every new sign debit of the business is refused with 422 GW_BILLING_REQUEST_REJECTED (nothing charged, the regulator not called) until `{ suspended: false }`. Replays of signs already billed, reversals, confirmations and top-ups go on. Idempotent; audited in the log (`wallet_suspension_set`).",
      responses: { 200: "{ businessId, suspended }" },
      async handler(ctx) {
        const by = { requestId: ctx.requestId, credentialId: ctx.principal!.credentialId };
        return json(ctx, 200, await suspendWallet(kit, ledger, by, knownBusiness(ctx), (ctx.body as { suspended: boolean }).suspended));
      },
    },
  ];
}

/** A wallet as `GET /admin/wallets/{businessId}` answers it (the business is known). */
export async function walletView(ledger: BillingLedger, businessId: string, limit: number): Promise<WalletView> {
  const w = await ledger.wallet(businessId, limit);
  return {
    businessId: w.businessId,
    currency: w.currency,
    balance: koboToNgn(w.balanceKobo),
    entries: w.entries.map(_entryView),
    // Shown only while suspended: a wallet in good standing answers as it always did.
    ...(w.suspended ? { suspended: true as const } : {}),
  };
}

/** A top-up as `POST /admin/wallets/{businessId}/credits` makes it: 201 credited, 200 the reference was credited before. */
export async function creditWallet(ledger: BillingLedger, businessId: string, body: CreditInput): Promise<{ status: 200 | 201; body: Record<string, unknown> }> {
  const amountKobo = ngnToKobo(body.amount)!;
  const r = await _credit(ledger, businessId, amountKobo, body.reference);
  const w = await ledger.wallet(businessId, 1);
  return {
    status: r.created ? 201 : 200,
    body: { businessId, currency: "NGN", balance: koboToNgn(w.balanceKobo), credit: { id: r.entryId, amount: koboToNgn(amountKobo), reference: body.reference, created: r.created } },
  };
}

/** A suspension as `POST /admin/wallets/{businessId}/suspension` sets it (logged `wallet_suspension_set`). */
export async function suspendWallet(
  kit: PluginKit,
  ledger: BillingLedger,
  by: { requestId: string; credentialId: string },
  businessId: string,
  wanted: boolean,
): Promise<{ businessId: string; suspended: boolean }> {
  if (!ledger.setSuspended) throw gwError("GW_BILLING_SERVICE_UNAVAILABLE", { detail: "This wallet ledger has no suspension." });
  const { suspended } = await ledger.setSuspended(businessId, wanted);
  kit.log.event("wallet_suspension_set", { requestId: by.requestId, operator: by.credentialId, businessId, suspended });
  return { businessId, suspended };
}

// --- Internal helpers ---

function _entryView(e: BillingEntry): Record<string, unknown> {
  const out: Record<string, unknown> = { id: e.id, type: e.type, amount: koboToNgn(e.amountKobo) };
  if (e.billingIdentity) out.billingIdentity = e.billingIdentity;
  if (e.reference !== undefined) out.reference = e.reference;
  out.createdAt = e.createdAt;
  return out;
}

/** The top-up; a reference used before with another amount → 409 (an outage: the routes' declaration). */
async function _credit(ledger: BillingLedger, businessId: string, amountKobo: number, reference: string): Promise<{ entryId: string; created: boolean }> {
  try {
    return await ledger.credit(businessId, amountKobo, reference);
  } catch (e) {
    if (isBillingError(e) && e.reason === "attempt_conflict")
      throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", { detail: "The reference was used before with another amount.", cause: e });
    throw e;
  }
}
