/**
 * Stage 4, routing loop: the gateway sets X-Service-Gateway-Hop on every outbound call; a request
 * that arrives carrying a non-zero hop marker is refused at once (508), whoever sent it.
 *
 * Only a marker the gateway itself made (signed with the deployment's key and bound to the host it
 * was sent to, core/http/hop.ts) is a loop in our own routing: that one raises the critical
 * `routing_loop` alert. Any other value is a client sending the reserved header (spec §4.1): the
 * same 508, logged, and no alert, so no outsider can page the operator.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { createHopMarker, HOP_HEADER } from "../core/http/hop.ts";
import { defineStage } from "../core/stages/define.ts";

export const routingLoopStage = defineStage({
  name: "routing-loop",
  create({ config, log, alerts, now }) {
    const markers = createHopMarker(config.regulator.apiSecret, now);
    return function routingLoop(ctx) {
      const hop = ctx.req.headers.get(HOP_HEADER);
      if (hop === null) return;
      const value = hop.trim();
      if (value === "0") return;
      const own = markers.isOwn(value, ctx.host);
      log.warn("gateway_routing_loop_detected", { requestId: ctx.requestId, host: ctx.host, route: ctx.route?.id, marker: own ? "own" : "unverified" });
      if (own) alerts?.raise({ signal: "routing_loop", requestId: ctx.requestId, code: "GW_ROUTING_LOOP_DETECTED" });
      throw gwError("GW_ROUTING_LOOP_DETECTED", { detail: "The request carried a gateway hop marker; fix the route." });
    };
  },
});
