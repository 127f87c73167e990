/**
 * Scenario "gateway-health": GET /health/live on the same gateway build, for reference. A public
 * any-host route: it skips admission, capacity guard, auth, IP allowlist, quota and mode, so it
 * measures the mandatory stages (canonical host, route, protocol, routing loop), the dispatcher,
 * the request context and the completion log.
 */
import type { BenchScenario, BenchTarget } from "../run.ts";
import { PASSTHROUGH } from "../../test/support/gateway.ts";
import { startBenchGateway } from "./gateway-pipeline.ts";

export const gatewayHealth: BenchScenario = {
  name: "gateway-health",
  description: "the gateway's public /health/live (mandatory stages only)",
  async start(): Promise<BenchTarget> {
    const running = await startBenchGateway();
    return {
      url: running.url + "/health/live",
      headers: { host: PASSTHROUGH },
      expectBody: JSON.stringify({ status: "ok" }),
      close: running.close,
    };
  },
};
