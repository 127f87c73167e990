/**
 * Stage 9, quota: route quotas per credential (sign 120/60 s, management 30/60 s, others 300/60 s
 * by default) through the coordination port, so every process sharing the store enforces one
 * limit. When the store cannot answer, protected work fails closed with a structured 503 — never
 * an unlimited pass.
 */
import type { PermitResult } from "../adapters/ports.ts";
import type { RequestContext } from "../core/context.ts";
import { gwError } from "../core/errors/gateway-error.ts";
import { describeError } from "../core/log.ts";
import { defineStage } from "../core/stages/define.ts";

export const quotaStage = defineStage({
  name: "quota",
  create({ config, coordination, log, alerts, metrics }) {
    const quotas = config.limits.quotas;
    // The in-process store answers synchronously (no promise per request); Redis through takePermit.
    const takeNow = coordination.takePermitNow?.bind(coordination);
    const refusals = {
      sign: metrics.quotaRefusals.series("sign"),
      management: metrics.quotaRefusals.series("management"),
      default: metrics.quotaRefusals.series("default"),
    };

    /** The store could not answer: fail closed. */
    const unenforceable = (ctx: RequestContext, e: unknown): Error => {
      log.error("gateway_quota_unenforceable", { requestId: ctx.requestId, route: ctx.route!.id, error: describeError(e) });
      alerts?.raise({ signal: "quota_unenforceable", dependency: "coordination", requestId: ctx.requestId, code: "GW_GATEWAY_CAPACITY_EXCEEDED" });
      return gwError("GW_GATEWAY_CAPACITY_EXCEEDED", {
        detail: "The gateway cannot enforce its limits right now; retry with the same key and content.",
        retryAfterSeconds: config.limits.capacity.retryAfterSeconds,
      });
    };

    /** Over the limit: 429. */
    const enforce = (result: PermitResult, cls: keyof typeof refusals, limit: number, windowSeconds: number): void => {
      if (result.allowed) return;
      refusals[cls].inc();
      throw gwError("GW_RATE_LIMIT_EXCEEDED", {
        detail: `At most ${limit} requests per ${windowSeconds} s on this route class.`,
        retryAfterSeconds: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
      });
    };

    return function quota(ctx) {
      const cls = ctx.route!.quota;
      const p = ctx.principal;
      if (cls === "none" || !p) return;
      const { limit, windowSeconds } = quotas[cls];
      const key = `quota:${cls}:${p.scheme}:${p.credentialId}`;
      if (takeNow) {
        let result: PermitResult;
        try {
          result = takeNow(key, limit, windowSeconds * 1000);
        } catch (e) {
          throw unenforceable(ctx, e);
        }
        return enforce(result, cls, limit, windowSeconds);
      }
      return coordination.takePermit(key, limit, windowSeconds * 1000).then(
        (result) => enforce(result, cls, limit, windowSeconds),
        (e: unknown) => Promise.reject(unenforceable(ctx, e)),
      );
    };
  },
});
