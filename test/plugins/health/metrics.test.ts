/**
 * `GET /metrics` (docs/operations.md "Metrics"): operator-only on the gateway's port, keyless on the
 * separate listener; the exposition parses with a Prometheus text-format parser; the families of
 * issue 14 item 3 are there and move with real traffic (signs billed against the ledger, a rejected
 * sign reversed, a quota refusal, regulator calls to the simulator); labels are route patterns and
 * public codes, never raw paths; a scrape never calls a dependency.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from "parse-prometheus-text-format";
import { LATENCY_BUCKETS, serveMetrics } from "../../../core/metrics.ts";
import { ADMIN_KEY, DEMO_KEY, PASSTHROUGH, expectProblem, invoice, startSigningHarness } from "../signing/signing-helpers.ts";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { DependencyUnavailableError } from "../../../adapters/ports.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { startTestGateway } from "../../support/gateway.ts";

const SIGN_WINDOW_MS = 60_000;
const h = await startSigningHarness({
  patch: {
    limits: { quotas: { sign: { limit: 3, windowSeconds: SIGN_WINDOW_MS / 1000 }, management: { limit: 100_000, windowSeconds: 60 }, default: { limit: 100_000, windowSeconds: 60 } } },
    // The snapshot is refreshed once at start only: nothing in the background calls a store meanwhile.
    dependencies: { healthRefreshMs: 600_000 },
  },
});
test.after(() => h.close());

const scrape = (headers: Record<string, string> = { "x-admin-api-key": ADMIN_KEY }) => h.tg.call("/metrics", { host: "localhost", headers });

async function parsed(res: Response): Promise<Map<string, PrometheusFamily> & { text: string }> {
  assert.is(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = parsePrometheusTextFormat(text);
  return Object.assign(new Map(families.map((f) => [f.name, f])), { text });
}

function sample(f: PrometheusFamily | undefined, labels: Record<string, string>): PrometheusSample | undefined {
  return f?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

const valueOf = (f: PrometheusFamily | undefined, labels: Record<string, string>) => Number(sample(f, labels)?.value ?? 0);

/**
 * One series of a labelled histogram. The parser groups histogram families by their unlabelled
 * series only, so each `_bucket` / `_sum` / `_count` line is parsed on its own (the parser still
 * reads every name, label and escape).
 */
function histogram(text: string, name: string, labels: Record<string, string>): { count: number; sum: number; buckets: Array<[string, number]> } | undefined {
  const out = { count: NaN, sum: NaN, buckets: [] as Array<[string, number]> };
  let seen = false;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}_`)) continue;
    const [family] = parsePrometheusTextFormat(`${line}\n`);
    const m = family!.metrics[0]!;
    if (!Object.entries(labels).every(([k, v]) => m.labels?.[k] === v)) continue;
    seen = true;
    const suffix = family!.name.slice(name.length + 1);
    if (suffix === "count") out.count = Number(m.value);
    else if (suffix === "sum") out.sum = Number(m.value);
    else if (suffix === "bucket") out.buckets.push([m.labels!.le!, Number(m.value)]);
  }
  return seen ? out : undefined;
}

test("operator-only on the gateway's port: no key, a customer key → 401; the operator key → Prometheus text that parses", async () => {
  await expectProblem(await scrape({}), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  await expectProblem(await scrape({ "x-admin-api-key": DEMO_KEY }), 401, "GW_ADMIN_AUTHENTICATION_FAILED");
  const families = await parsed(await scrape());
  for (const [name, type] of [
    ["gatehouse_http_request_duration_seconds", "HISTOGRAM"],
    ["gatehouse_dependency_calls_total", "COUNTER"],
    ["gatehouse_circuit_state", "GAUGE"],
    ["gatehouse_quota_refusals_total", "COUNTER"],
    ["gatehouse_inflight_requests", "GAUGE"],
    ["gatehouse_capacity_limit", "GAUGE"],
    ["gatehouse_stored_backlog", "GAUGE"],
    ["gatehouse_outbox_messages", "GAUGE"],
    ["gatehouse_alert_dead_letters", "GAUGE"],
    ["gatehouse_wallet_movements_total", "COUNTER"],
    ["gatehouse_wallet_movement_kobo_total", "COUNTER"],
    ["gatehouse_alerts_total", "COUNTER"],
    ["gatehouse_recovery_actions_total", "COUNTER"],
    ["gatehouse_recovery_open", "GAUGE"],
    ["gatehouse_process_cpu_seconds_total", "COUNTER"],
  ] as const) {
    assert.ok(families.has(name), `family ${name}`);
    assert.is(families.get(name)!.type, type, `type of ${name}`);
  }
  assert.is(valueOf(families.get("gatehouse_capacity_limit"), { scope: "total" }), h.tg.config.limits.capacity.total);
});

test("traffic moves the series: requests by route and code with latency buckets, regulator calls, wallet movements, quota refusals", async () => {
  const before = await parsed(await scrape());
  const DURATION = "gatehouse_http_request_duration_seconds";
  const requests = (f: { text: string }, route: string, code: string) => histogram(f.text, DURATION, { route, code });
  const SIGN = "POST /api/v1/invoice/sign";
  const signedBefore = requests(before, SIGN, "OK")?.count ?? 0;

  // The sign quota (3 per 60 s) is a fixed window on the wall clock: the four signs below must fall
  // in one window, or the fourth starts a new one and is answered 201 (a CI run once crossed a minute).
  const leftInWindow = SIGN_WINDOW_MS - (Date.now() % SIGN_WINDOW_MS);
  if (leftInWindow < 10_000) await new Promise((r) => setTimeout(r, leftInWindow + 50));
  assert.is((await h.sign(invoice("MT1"), { key: "metrics-key-0001" })).status, 201);
  assert.is((await h.sign(invoice("MT2"), { key: "metrics-key-0002" })).status, 201);
  h.sim.faults.set("sign", { kind: "status", status: 400, times: 1 });
  await expectProblem(await h.sign(invoice("MT3"), { key: "metrics-key-0003" }), 422, "GW_SIGN_REJECTED");
  await expectProblem(await h.sign(invoice("MT4"), { key: "metrics-key-0004" }), 429, "GW_RATE_LIMIT_EXCEEDED");
  await expectProblem(await h.transmit("SECRET-RAW-IRN-0001"), 400, "GW_INVOICE_IRN_INVALID");
  await expectProblem(await h.tg.call("/no/such/raw/path-0001", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } }), 404, "GW_ROUTE_NOT_FOUND");

  const after = await parsed(await scrape());
  const signed = requests(after, SIGN, "OK")!;
  assert.is(signed.count - signedBefore, 2, "two signs answered without an error code");
  assert.equal(
    signed.buckets.map(([le]) => le),
    [...LATENCY_BUCKETS.map(String), "+Inf"],
    "every latency bucket, in order",
  );
  assert.is(signed.buckets.at(-1)![1], signed.count, "the +Inf bucket is the count");
  for (let i = 1; i < signed.buckets.length; i++) assert.ok(signed.buckets[i]![1] >= signed.buckets[i - 1]![1], "cumulative buckets");
  assert.ok(signed.sum > 0, "latency observed");
  assert.is(requests(after, SIGN, "GW_SIGN_REJECTED")?.count, 1);
  assert.is(requests(after, SIGN, "GW_RATE_LIMIT_EXCEEDED")?.count, 1);
  assert.is(requests(after, "POST /api/v1/invoice/transmit/:irn", "GW_INVOICE_IRN_INVALID")?.count, 1);
  assert.is(requests(after, "unmatched", "GW_ROUTE_NOT_FOUND")?.count, 1);
  assert.not.ok(after.text.includes("SECRET-RAW-IRN-0001") || after.text.includes("/no/such/raw/path"), "labels are route patterns, never raw paths");

  const delta = (name: string, labels: Record<string, string>) => valueOf(after.get(name), labels) - valueOf(before.get(name), labels);
  assert.is(delta("gatehouse_wallet_movements_total", { type: "debit" }), 3, "three debits (two signed, one rejected)");
  assert.is(delta("gatehouse_wallet_movement_kobo_total", { type: "debit" }), 15_000);
  assert.is(delta("gatehouse_wallet_movements_total", { type: "reversal" }), 1, "the rejected sign's fee went back");
  assert.is(delta("gatehouse_quota_refusals_total", { class: "sign" }), 1);
  assert.ok(delta("gatehouse_dependency_calls_total", { dependency: "regulator:TEST", outcome: "success" }) >= 2, "regulator calls counted");
  assert.ok(delta("gatehouse_dependency_calls_total", { dependency: "documentStore", outcome: "success" }) > 0, "store calls counted");
  assert.is(valueOf(after.get("gatehouse_circuit_state"), { dependency: "regulator:TEST" }), 0, "closed");
  await h.ledgerBalanced();
});

test("a scrape never waits on a dependency: with every store call hanging, the separate listener still answers, keyless, the cached values", async () => {
  let hang = false;
  /**
   * Calls made while `hang` is set, parked until the test ends; they then fail as an outage would.
   * (Left hanging for ever, a background loop's call made in that window — the outbox, a sweep —
   * would keep the gateway's close() waiting, and the file would hang until the runner kills it:
   * it did in one CI run.)
   */
  const parked: Array<(e: Error) => void> = [];
  const park = (): Promise<never> => new Promise<never>((_, reject) => parked.push(reject));
  /** Every method of the store (and of its collections) hangs once `hang` is set, until the test releases it. */
  const hanging = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, prop, receiver) {
        const value = Reflect.get(t, prop, receiver) as unknown;
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (hang) return park();
          const out = (value as (...a: unknown[]) => unknown).apply(t, args);
          return prop === "collection" ? hanging(out as object) : out;
        };
      },
    });
  const g = await startTestGateway({
    patch: { dependencies: { healthRefreshMs: 600_000 } },
    ports: { documentStore: hanging(await createSqliteDocumentStore({ file: ":memory:" })), coordination: hanging(createMemoryCoordination()) },
  });
  const listener = await serveMetrics(g.gateway.kit.metrics, { host: "127.0.0.1", port: 0 });
  try {
    const healthy = await parsed(await fetch(listener.url));
    assert.ok(healthy.has("gatehouse_outbox_messages"));
    hang = true;
    // A scrape that waited on a store would never answer: bounded here only to fail instead of hanging.
    const res = await Promise.race([fetch(listener.url), new Promise<null>((r) => setTimeout(() => r(null), 10_000).unref())]);
    assert.ok(res, "the scrape answered while every store call hangs");
    const cached = await parsed(res!);
    assert.equal(cached.get("gatehouse_outbox_messages")?.metrics, healthy.get("gatehouse_outbox_messages")?.metrics, "the cached snapshot's values");
    assert.is((await fetch(listener.url.replace("/metrics", "/health"))).status, 404, "the listener serves /metrics only");
    assert.is((await fetch(listener.url, { method: "POST" })).status, 404);
  } finally {
    hang = false;
    for (const reject of parked.splice(0)) reject(new DependencyUnavailableError("test-store", "released at the end of the hang"));
    await listener.close();
    await g.close();
  }
});

test("metrics.enabled false: no /metrics route on the gateway's port", async () => {
  const g = await startTestGateway({ patch: { metrics: { enabled: false } } });
  try {
    const res = await g.call("/metrics", { host: "passthrough.demo.localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    await expectProblem(res, 404, "GW_ROUTE_NOT_FOUND");
  } finally {
    await g.close();
  }
});

test.run();
