/**
 * The request log's CPU per request, in parts (docs/bench.md "Request log"): `record` on the request
 * path (a context copied into the buffer), and the flush's work per record (redacted and put in its
 * group, core/request-log/group.ts, then one insertMany per batch into the embedded store: SQLite in
 * memory, its writer inline, so every index update is on this thread). `process.cpuUsage()` (all threads), median of 9
 * rounds; robust to other load on the machine.
 *
 *   npx tsx bench/request-log-cost.ts
 *
 * REQLOG_FILE=<path>: an SQLite file (writer thread, fsync) instead of memory; REQLOG_BATCH=<n>: the
 * writer's batchRecords (default 500).
 */
import { createSqliteDocumentStore } from "../adapters/document-store/sqlite/store.ts";
import { RequestLogSchema } from "../config/request-log.ts";
import * as v from "valibot";
import { createRequestContext } from "../core/context.ts";
import { createLogger } from "../core/log.ts";
import { createGatewayMetrics } from "../core/metrics.ts";
import { newRequestId } from "../core/request-id.ts";
import { createRequestLogWriter } from "../core/request-log/writer.ts";

const ROUNDS = 9;
const PER_ROUND = 20_000;

const store = await createSqliteDocumentStore({ file: process.env.REQLOG_FILE ?? ":memory:" });
const config = v.parse(RequestLogSchema, { bufferRecords: 1_000_000, flushMs: 3_600_000, ...(process.env.REQLOG_BATCH ? { batchRecords: Number(process.env.REQLOG_BATCH) } : {}) });
const writer = createRequestLogWriter({ store, config, metrics: createGatewayMetrics({ defaultMetrics: false }), log: createLogger({ level: "silent" }) });
const ctx = createRequestContext({ method: "GET" } as never, "00000000-0000-4000-8000-000000000000", new URL("http://passthrough.demo.localhost/bench/ping?limit=20"));
Object.assign(ctx, { businessId: "demo", host: "passthrough.demo.localhost", route: { decl: { auth: "apiKey", path: "/bench/ping" } }, principal: { credentialId: "demo-primary" } });

const recordUs: number[] = [];
const flushUs: number[] = [];
for (let round = -1; round < ROUNDS; round++) {
  // Request IDs are made before the clock starts: the request's arrival makes one with the log off too.
  const ids = Array.from({ length: PER_ROUND }, () => newRequestId());
  let t = process.cpuUsage();
  for (let i = 0; i < PER_ROUND; i++) {
    (ctx as { requestId: string }).requestId = ids[i]!;
    writer.record(ctx, 200, 0.25, Date.now());
  }
  let used = process.cpuUsage(t);
  if (round >= 0) recordUs.push((used.user + used.system) / PER_ROUND);
  t = process.cpuUsage();
  await writer.flush();
  used = process.cpuUsage(t);
  if (round >= 0) flushUs.push((used.user + used.system) / PER_ROUND);
}
const med = (a: number[]) => a.sort((x, y) => x - y)[ROUNDS >> 1]!.toFixed(2);
process.stdout.write(`request log, per request: record ${med(recordUs)} µs CPU; flush (entry + insertMany, batches of ${config.batchRecords}) ${med(flushUs)} µs CPU\n`);
await store.close();
