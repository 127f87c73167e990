/**
 * X-Service-Gateway-Hop: the marker the gateway sets on every outbound call, so a request that
 * comes back to it (a routing loop) is recognised by the routing-loop stage (508).
 */
export const HOP_HEADER = "x-service-gateway-hop";
