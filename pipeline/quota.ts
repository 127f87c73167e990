/**
 * Stage 9, quota: route quotas per credential (sign 120/60 s, management 30/60 s, others 300/60 s
 * by default) through the coordination port, so every process sharing the store enforces one
 * limit. When the store cannot answer, protected work fails closed with a structured 503 — never
 * an unlimited pass.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { describeError } from "../core/log.ts";
import { defineStage } from "./define-stage.ts";

export const quotaStage = defineStage({
  name: "quota",
  create({ config, coordination, log, alerts, metrics }) {
    const quotas = config.limits.quotas;
    const refusals = {
      sign: metrics.quotaRefusals.series("sign"),
      management: metrics.quotaRefusals.series("management"),
      default: metrics.quotaRefusals.series("default"),
    };
    return async function quota(ctx) {
      const cls = ctx.route!.quota;
      const p = ctx.principal;
      if (cls === "none" || !p) return;
      const { limit, windowSeconds } = quotas[cls];
      let result;
      try {
        result = await coordination.takePermit(`quota:${cls}:${p.scheme}:${p.credentialId}`, limit, windowSeconds * 1000);
      } catch (e) {
        log.error("gateway_quota_unenforceable", { requestId: ctx.requestId, route: ctx.route!.id, error: describeError(e) });
        alerts?.raise({ signal: "quota_unenforceable", dependency: "coordination", requestId: ctx.requestId, code: "GW_GATEWAY_CAPACITY_EXCEEDED" });
        throw gwError("GW_GATEWAY_CAPACITY_EXCEEDED", {
          detail: "The gateway cannot enforce its limits right now; retry with the same key and content.",
          retryAfterSeconds: config.limits.capacity.retryAfterSeconds,
        });
      }
      if (!result.allowed) {
        refusals[cls].inc();
        throw gwError("GW_RATE_LIMIT_EXCEEDED", {
          detail: `At most ${limit} requests per ${windowSeconds} s on this route class.`,
          retryAfterSeconds: Math.max(1, Math.ceil(result.retryAfterMs / 1000)),
        });
      }
    };
  },
});
