/**
 * Scenario "bare-h3": the floor. A plain h3 v2 app with one GET route answering the same JSON body
 * as the gateway's bench route, served with srvx (Node adapter) like the gateway. No stages, no
 * context, no logging: what h3 + srvx + node:http cost on their own on this machine.
 */
import { H3 } from "h3";
import { serve } from "srvx";
import type { BenchScenario, BenchTarget } from "../run.ts";
import { BENCH_BODY, BENCH_PATH } from "./gateway-pipeline.ts";

export const bareH3: BenchScenario = {
  name: "bare-h3",
  description: "new H3() + one GET route returning the same JSON, served with srvx",
  async start(): Promise<BenchTarget> {
    const app = new H3().get(BENCH_PATH, () => BENCH_BODY);
    const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0, silent: true, gracefulShutdown: false });
    await server.ready();
    const port = new URL(server.url!).port;
    return {
      url: `http://127.0.0.1:${port}${BENCH_PATH}`,
      headers: {},
      expectBody: JSON.stringify(BENCH_BODY),
      close: () => server.close(true),
    };
  },
};
