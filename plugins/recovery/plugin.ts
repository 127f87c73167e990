/**
 * Recovery (docs/operations.md "Recovery jobs"): the jobs that settle held sign fees against the
 * regulator, move stale transmission claims to `unknown` and signal overdue reconciliation
 * (./jobs.ts), run by the workers of `npm start` and `npm run worker` under a coordination lease;
 * and the operator's decisions: on a held Pass-through sign attempt,
 * `POST /admin/sign-attempts/{operationId}/resolution`, and on a Pass-through transmission whose
 * outcome is unknown, `POST /admin/transmissions/{operationId}/resolution` (Stored invoices: the
 * Stored plugin's `POST /admin/invoices/{invoiceId}/resolution`). `recovery` in /health/dependencies shows the last
 * run, the totals and what is still open.
 */
import * as v from "valibot";
import { isBillingError } from "../../adapters/ports.ts";
import type { RequestContext } from "../../core/context.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { definePlugin, offer, requirePort, type GatewayPlugin, type PluginKit, type RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { FROZEN_INVOICE_RESOLVER, FROZEN_OPERATION_RESOLVER } from "../invoice/offers.ts";
import { createRecovery, type Decider, type Recovery } from "./jobs.ts";

export interface RecoveryPluginOptions {
  /** Epoch milliseconds (tests). */
  now?: () => number;
}

const ResolutionParams = v.object({ operationId: v.pipe(v.string(), v.regex(/^[A-Za-z0-9._:-]{1,128}$/, "an operation id")) });
const SignResolutionBody = v.strictObject({ outcome: v.picklist(["signed", "not_signed"]) });
const TransmissionResolutionBody = v.strictObject({ outcome: v.picklist(["transmitted", "not_transmitted"]) });

export function createRecoveryPlugin(options: RecoveryPluginOptions = {}): GatewayPlugin {
  return definePlugin({
    name: "recovery",
    needs: ["documentStore", "coordination", "regulator", "billing", "webhooks"],
    stages: ["auth", "quota"],
    uses: [FROZEN_INVOICE_RESOLVER],
    provides: [FROZEN_OPERATION_RESOLVER],
    setup(kit) {
      const r = _build(kit, options);
      kit.reports.register("recovery", () => r.report());
      return {
        routes: [signResolutionRoute(r), transmissionResolutionRoute(r)],
        workers: kit.config.recovery.enabled ? [r.worker] : [],
        // The operator console records decisions through the same service as the routes above.
        offers: [offer(FROZEN_OPERATION_RESOLVER, r)],
      };
    },
  });
}

export const recovery = createRecoveryPlugin();

/** The recovery of a gateway (tests run its jobs by hand). */
export function recoveryFor(kit: PluginKit, options: RecoveryPluginOptions = {}): Recovery {
  return _build(kit, options);
}

/** Operator routes: operator key on any host, management quota, an idempotency key; store or ledger outages → 503. */
const OPERATOR_ROUTE = {
  method: "POST",
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  skip: ["mode"],
  idempotent: true,
  unavailable: { code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE", detail: "The store or the ledger is unavailable; retry with the same key." },
} as const;

function signResolutionRoute(r: Recovery): RouteDeclaration {
  return {
    ...OPERATOR_ROUTE,
    path: "/admin/sign-attempts/:operationId/resolution",
    schemas: { params: ResolutionParams, body: SignResolutionBody },
    summary: "Operator: settle a held Pass-through sign attempt after checking the regulator (signed / not_signed)",
    description:
      "For an attempt listed by GET /admin/invoices/frozen (kind passthrough-sign): signed confirms the held fee, not_signed reverses it. The decision is recorded on the attempt (`resolution`) and in the audit log. An attempt whose fee is not held, or a settlement the ledger refuses: 409 GW_INVOICE_STATE_CONFLICT.",
    responses: { 200: "{ operationId, businessId, status, money, resolution }" },
    async handler(ctx) {
      const outcome = (ctx.body as v.InferOutput<typeof SignResolutionBody>).outcome;
      const result = await _resolving(() => r.resolveSignAttempt(ctx.params.operationId!, outcome, _operator(ctx)));
      if (result === "not_found") throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No sign attempt with that operationId." });
      if (result === "not_held") throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: "This sign attempt's fee is not held: nothing to settle." });
      return json(ctx, 200, { operationId: result.operationId, businessId: result.businessId, status: result.status, money: result.money, resolution: result.resolution ?? null });
    },
  };
}

function transmissionResolutionRoute(r: Recovery): RouteDeclaration {
  return {
    ...OPERATOR_ROUTE,
    path: "/admin/transmissions/:operationId/resolution",
    schemas: { params: ResolutionParams, body: TransmissionResolutionBody },
    summary: "Operator: record what happened to a Pass-through transmission whose outcome is unknown (transmitted / not_transmitted)",
    description:
      "For an operation listed by GET /admin/invoices/frozen (kind passthrough-transmit), after checking the regulator: transmitted records it as succeeded (a matching transmit then answers 409 GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED); not_transmitted releases the claim so the merchant may transmit the IRN again. Recorded in the audit log. A transmission whose outcome is not unknown: 409 GW_INVOICE_STATE_CONFLICT.",
    responses: { 200: "{ operationId, businessId, claimState, resolution }" },
    async handler(ctx) {
      const outcome = (ctx.body as v.InferOutput<typeof TransmissionResolutionBody>).outcome;
      const result = await _resolving(() => r.resolveTransmission(ctx.params.operationId!, outcome, _operator(ctx)));
      if (result === "not_found") throw gwError("GW_OPERATION_NOT_FOUND", { detail: "No transmission with that operationId." });
      if (result === "not_unknown") throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: "This transmission's outcome is not unknown: nothing to resolve." });
      return json(ctx, 200, result);
    },
  };
}

// --- Internal helpers ---

function _operator(ctx: RequestContext): Decider {
  return { actor: `operator:${ctx.principal!.credentialId}`, requestId: ctx.requestId };
}

/** A settlement the ledger refuses → 409 (outages are the routes' `unavailable`). */
async function _resolving<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (isBillingError(e)) throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: "The ledger refused this settlement (the fee is no longer held as expected); check the wallet entries." });
    throw e;
  }
}

function _build(kit: PluginKit, options: RecoveryPluginOptions): Recovery {
  const c = kit.config.recovery;
  return createRecovery({
    store: kit.ports.documentStore,
    coordination: kit.ports.coordination,
    billing: requirePort(kit, "billing"),
    regulator: requirePort(kit, "regulator"),
    stored: kit.offers.get(FROZEN_INVOICE_RESOLVER),
    alerts: kit.ports.alerts ?? null,
    metrics: kit.metrics,
    log: kit.log,
    now: options.now ?? Date.now,
    intervalMs: c.intervalMs,
    settleAfterMs: c.settleAfterMs,
    abandonedAfterMs: c.abandonedAfterMs,
    overdueAfterMs: c.overdueAfterMs,
    claimStaleAfterMs: 2 * kit.config.regulator.timeoutMs + 30_000,
    batchSize: c.batchSize,
    leaseMs: c.leaseMs,
  });
}
