/**
 * Stage 4, routing loop: the gateway sets X-Service-Gateway-Hop on every outbound call; a request
 * that arrives carrying a non-zero hop marker has come back to us, and is refused at once (508).
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { HOP_HEADER } from "../core/http/hop.ts";
import { defineStage } from "../core/stages/define.ts";

export const routingLoopStage = defineStage({
  name: "routing-loop",
  create({ log, alerts }) {
    return function routingLoop(ctx) {
      const hop = ctx.req.headers.get(HOP_HEADER);
      if (hop === null || hop.trim() === "0") return;
      log.warn("gateway_routing_loop_detected", { requestId: ctx.requestId, host: ctx.host, route: ctx.route?.id });
      alerts?.raise({ signal: "routing_loop", requestId: ctx.requestId, code: "GW_ROUTING_LOOP_DETECTED" });
      throw gwError("GW_ROUTING_LOOP_DETECTED", { detail: "The request carried a gateway hop marker; fix the route." });
    };
  },
});
