/**
 * The in-process bench gateway (bench/pipeline-cpu.ts): the real gateway, built exactly as production builds it
 * (composeGateway on the embedded default stores: unstorage memory + in-process coordination),
 * with a tiny bench plugin whose one route runs every pipeline stage: canonical host, route,
 * protocol, routing loop, admission, capacity guard, x-api-key auth, IP allowlist, management
 * quota, mode. Admission and quota limits are raised far above what a bench can send, so the run
 * measures the pipeline and never a 429.
 */
import { composeGateway } from "../core/compose.ts";
import type { Gateway } from "../core/create-gateway.ts";
import { createLogger } from "../core/log.ts";
import { definePlugin } from "../core/plugin.ts";
import { json } from "../core/respond.ts";
import { serveGateway } from "../core/server.ts";
import { plugins as defaultPlugins } from "../plugins/index.ts";
import { STAGE_NAMES } from "../pipeline/stage-names.ts";
import { DEMO_KEY, PASSTHROUGH, testConfig } from "../test/support/gateway.ts";

/** The path every scenario except the health one answers. */
export const BENCH_PATH = "/bench/ping";
/** The body both the bare h3 app and the gateway's bench route answer (same bytes on the wire). */
export const BENCH_BODY = { status: "ok", service: "gatehouse-bench" } as const;
/** Far above anything 64 connections can send in a window: the bench never sees a 429. */
export const BENCH_LIMIT = 100_000_000;

export const benchPlugin = definePlugin({
  name: "bench",
  needs: ["coordination"],
  // "admission" is the only stage config may disable: requiring it keeps all ten stages on.
  stages: ["admission", "auth", "ip-allowlist", "quota"],
  routes: () => [
    {
      method: "GET",
      path: BENCH_PATH,
      service: "gateway",
      auth: "apiKey",
      quota: "management",
      summary: "Bench: an authenticated GET through the full pipeline",
      responses: { 200: "A fixed JSON body" },
      handler: (ctx) => json(ctx, 200, BENCH_BODY),
    },
  ],
});

/**
 * Builds the demo gateway (plus the bench plugin) on the embedded in-memory stores with a silent
 * logger, serves it on a free loopback port, and checks that the bench route really runs every
 * stage (a bench of a shortened pipeline would be mislabelled).
 */
export async function startBenchGateway(): Promise<{ gateway: Gateway; url: string; close(): Promise<void> }> {
  const config = testConfig({
    log: { level: "silent", format: "json" },
    limits: {
      admission: { perClient: BENCH_LIMIT, windowSeconds: 1 },
      quotas: {
        management: { limit: BENCH_LIMIT, windowSeconds: 60 },
        default: { limit: BENCH_LIMIT, windowSeconds: 60 },
      },
    },
  });
  const log = createLogger({ level: "silent", sink: () => {} });
  const gateway = await composeGateway(config, { log, plugins: [...defaultPlugins, benchPlugin] });
  const names = gateway.pipeline.names;
  const match = gateway.routes.lookup("gateway", "GET", BENCH_PATH);
  if (names.length !== STAGE_NAMES.length || match.kind !== "found" || match.route.skips.size > 0) {
    await gateway.close();
    throw new Error(`bench: the bench route does not run the full pipeline (stages: ${names.join(", ")})`);
  }
  const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
  return {
    gateway,
    url: server.url,
    async close() {
      await server.drain("bench");
    },
  };
}

