/**
 * Prometheus metrics (docs/operations.md "Metrics"). prom-client's Registry writes the exposition
 * (text format 0.0.4: escaping, HELP/TYPE, default process metrics); the series the request path
 * updates are our own small counters and histograms, because a prom-client child hashes its label
 * values on every update. Here a series is resolved ONCE (per route at startup, per dependency and
 * outcome on first use) and an update is a few number increments: no string building, no label
 * hashing per request. Labels come from route ids, codes and our own dependency names, never from
 * raw paths, hosts or request data.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Registry, collectDefaultMetrics } from "prom-client";

export type Labels = Record<string, string>;
export interface Sample {
  labels: Labels;
  value: number;
}

/** The request-latency buckets (seconds). */
export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

export interface CounterSeries {
  inc(by?: number): void;
}
export interface HistogramSeries {
  observe(value: number): void;
}

/** A counter whose series are resolved once and then incremented directly. */
export class FastCounter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The series of these label values (create it once; keep the returned object). */
  series(...values: string[]): CounterSeries {
    const id = values.join("\u0000");
    let s = this.#series.get(id);
    if (!s) {
      s = { labels: _labels(this.labelNames, values), value: 0 };
      this.#series.set(id, s);
    }
    const series = s;
    return {
      inc(by = 1) {
        series.value += by;
      },
    };
  }

  /** prom-client's metric interface (what Registry.metrics() reads). */
  get type(): "counter" {
    return "counter";
  }
  async get() {
    return { name: this.name, help: this.help, type: this.type, aggregator: "sum" as const, values: [...this.#series.values()].map((s) => ({ labels: s.labels, value: s.value })) };
  }
  reset(): void {
    for (const s of this.#series.values()) s.value = 0;
  }
}

/** A histogram whose series are resolved once; an observation is a bucket scan and three increments. */
export class FastHistogram {
  readonly #series = new Map<string, _HistogramState>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    readonly buckets: readonly number[] = LATENCY_BUCKETS,
  ) {}

  series(...values: string[]): HistogramSeries {
    const id = values.join("\u0000");
    let s = this.#series.get(id);
    if (!s) {
      s = { labels: _labels(this.labelNames, values), counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.#series.set(id, s);
    }
    const state = s;
    const bounds = this.buckets;
    return {
      observe(value: number) {
        state.sum += value;
        state.count += 1;
        for (let i = 0; i < bounds.length; i++) {
          if (value <= bounds[i]!) {
            state.counts[i]! += 1;
            return;
          }
        }
      },
    };
  }

  get type(): "histogram" {
    return "histogram";
  }
  /** Each series' labels and observation count, without the buckets: cheap enough to read on a page draw. */
  counts(): Array<{ labels: Labels; count: number }> {
    return [...this.#series.values()].map((s) => ({ labels: s.labels, count: s.count }));
  }
  async get() {
    const values: Array<{ labels: Labels; value: number; metricName: string }> = [];
    for (const s of this.#series.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.buckets.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: String(this.buckets[i]) }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: "+Inf" }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: "sum" as const, values };
  }
  reset(): void {
    for (const s of this.#series.values()) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

export interface GatewayMetrics {
  readonly registry: Registry;
  /** Request latency by route id and public code ("OK" when none); its `_count` is the request count. */
  readonly requests: FastHistogram;
  readonly dependencyCalls: FastCounter;
  readonly quotaRefusals: FastCounter;
  readonly walletMovements: FastCounter;
  readonly walletAmountKobo: FastCounter;
  readonly alerts: FastCounter;
  readonly alertDeadLetters: FastCounter;
  /** Registers a counter of a plugin's own (its series resolved once, as the core's). */
  counter(name: string, help: string, labels: readonly string[]): FastCounter;
  histogram(name: string, help: string, labels: readonly string[]): FastHistogram;
  /** A gauge or counter whose samples are read at scrape time (from cached values only: never I/O). */
  collected(name: string, help: string, type: "gauge" | "counter", collect: () => Sample[]): void;
  /** The exposition text. */
  text(): Promise<string>;
  readonly contentType: string;
}

export function createGatewayMetrics(options: { defaultMetrics?: boolean } = {}): GatewayMetrics {
  const registry = new Registry();
  const processMetrics = options.defaultMetrics === false ? null : _processRegistry();
  const add = <T extends FastCounter | FastHistogram>(m: T): T => {
    registry.registerMetric(m as never);
    return m;
  };
  // Plugins' own metrics by name: a second registration (a plugin part built twice) gets the first.
  const owned = new Map<string, FastCounter | FastHistogram>();
  const own = <T extends FastCounter | FastHistogram>(name: string, create: () => T): T => {
    let m = owned.get(name);
    if (m === undefined) owned.set(name, (m = add(create())));
    return m as T;
  };
  return {
    registry,
    requests: add(new FastHistogram("gatehouse_http_request_duration_seconds", "Requests by route and public error code (OK: none), latency in seconds; _count counts requests.", ["route", "code"])),
    dependencyCalls: add(new FastCounter("gatehouse_dependency_calls_total", "Dependency calls by dependency and outcome (success, failure, neutral, refused).", ["dependency", "outcome"])),
    quotaRefusals: add(new FastCounter("gatehouse_quota_refusals_total", "Requests refused by a route quota (429), by quota class.", ["class"])),
    walletMovements: add(new FastCounter("gatehouse_wallet_movements_total", "Wallet ledger movements: debit (new charges), reversal and confirm (settlement calls that succeeded), credit (new top-ups).", ["type"])),
    walletAmountKobo: add(new FastCounter("gatehouse_wallet_movement_kobo_total", "Kobo moved by new debits and new credits.", ["type"])),
    alerts: add(new FastCounter("gatehouse_alerts_total", "Alerts sent, by signal and kind.", ["signal", "kind"])),
    alertDeadLetters: add(new FastCounter("gatehouse_alert_dead_letters_total", "Alerts whose chat delivery was exhausted (dead-lettered), by signal.", ["signal"])),
    counter: (name, help, labels) => own(name, () => new FastCounter(name, help, labels)),
    histogram: (name, help, labels) => own(name, () => new FastHistogram(name, help, labels)),
    collected(name, help, type, collect) {
      registry.registerMetric({
        name,
        help,
        type,
        async get() {
          return { name, help, type, aggregator: "sum", values: collect() };
        },
        reset() {},
      } as never);
    },
    text: async () => {
      const own = await registry.metrics();
      return processMetrics ? `${own}\n${await processMetrics.metrics()}` : own;
    },
    contentType: registry.contentType,
  };
}

// --- Internal helpers ---

let _process: Registry | null = null;

/**
 * prom-client's process and Node.js metrics (gatehouse_process_*, gatehouse_nodejs_*), collected once
 * per process however many gateways it builds: they install a GC observer and an event-loop monitor
 * that are never removed, so one set serves every gateway's exposition.
 */
function _processRegistry(): Registry {
  if (!_process) {
    _process = new Registry();
    collectDefaultMetrics({ register: _process, prefix: "gatehouse_" });
  }
  return _process;
}

interface _HistogramState {
  labels: Labels;
  counts: number[];
  sum: number;
  count: number;
}

function _labels(names: readonly string[], values: readonly string[]): Labels {
  if (names.length !== values.length) throw new RangeError(`[metrics] expected ${names.length} label values, got ${values.length}`);
  const out: Labels = {};
  names.forEach((n, i) => (out[n] = values[i]!));
  return out;
}

/**
 * A separate listener that serves only `GET /metrics`, without the operator key, for scrapers that
 * cannot send headers and for worker processes (which have no HTTP server). Bind it to a private
 * interface: anyone who reaches it reads the metrics.
 */
export async function serveMetrics(metrics: GatewayMetrics, options: { host: string; port: number }): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    metrics.text().then(
      (text) => res.writeHead(200, { "content-type": metrics.contentType, "cache-control": "no-store" }).end(text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host.includes(":") ? `[${options.host}]` : options.host}:${port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
