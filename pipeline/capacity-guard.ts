/**
 * Stage 6, capacity guard: an in-flight limit, total and per canonical domain. The slot is
 * released by a finisher that the dispatcher runs on every exit path (success, error, aborted
 * connection). While the process drains after SIGTERM every new request gets the same 503.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "../core/stages/define.ts";

export const capacityGuardStage = defineStage({
  name: "capacity-guard",
  create({ config, runtime, log, alerts }) {
    const { total, perDomain, retryAfterSeconds } = config.limits.capacity;
    return function capacityGuard(ctx) {
      if (runtime.isDraining())
        throw gwError("GW_GATEWAY_CAPACITY_EXCEEDED", {
          detail: "The gateway is restarting; retry shortly with the same key and content.",
          retryAfterSeconds,
        });
      const key = ctx.host;
      if (!runtime.tryAcquire(key, total, perDomain)) {
        log.warn("gateway_capacity_exceeded", { requestId: ctx.requestId, host: key, inFlight: runtime.inFlight().total });
        alerts?.raise({ signal: "capacity_exceeded", requestId: ctx.requestId, code: "GW_GATEWAY_CAPACITY_EXCEEDED" });
        throw gwError("GW_GATEWAY_CAPACITY_EXCEEDED", { retryAfterSeconds });
      }
      let released = false;
      ctx.finishers.push(() => {
        if (released) return;
        released = true;
        runtime.release(key);
      });
    };
  },
});
