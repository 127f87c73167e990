/**
 * The gauges of /metrics: read at scrape time from in-memory state and the cached snapshot only,
 * so a scrape never fans out to dependencies.
 */
import type { AlertChannelStatus, DocumentStoreStats } from "../../adapters/ports.ts";
import type { Sample } from "../../core/metrics.ts";
import type { PluginKit } from "../../core/plugin.ts";

const CIRCUIT_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** Registers the gauges; `workers`, `alerts` and `engine` read what the background refresh last saw. */
export function registerGauges(
  kit: PluginKit,
  workers: () => Record<string, unknown>,
  alerts: () => AlertChannelStatus | null,
  engine: () => DocumentStoreStats | null,
): void {
  const m = kit.metrics;
  m.collected("gatehouse_circuit_state", "Circuit state per dependency: 0 closed, 1 half-open, 2 open.", "gauge", () =>
    kit.dependencyHealth.snapshot().map((c) => ({ labels: { dependency: c.dependency }, value: CIRCUIT_VALUE[c.state] })),
  );
  m.collected("gatehouse_inflight_requests", "Requests in flight in this process (the capacity guard's count).", "gauge", () => [
    { labels: {}, value: kit.runtime.inFlight().total },
  ]);
  m.collected("gatehouse_capacity_limit", "The capacity guard's in-flight limits.", "gauge", () => [
    { labels: { scope: "total" }, value: kit.config.limits.capacity.total },
    { labels: { scope: "per_domain" }, value: kit.config.limits.capacity.perDomain },
  ]);
  m.collected("gatehouse_stored_backlog", "Stored invoices waiting for the processor, by status (deployment-wide, cached).", "gauge", () => {
    const sp = workers().storedProcessor as { backlog?: Record<string, number>; frozen?: number } | undefined;
    const out: Sample[] = Object.entries(sp?.backlog ?? {}).map(([status, value]) => ({ labels: { status }, value }));
    if (typeof sp?.frozen === "number") out.push({ labels: { status: "frozen" }, value: sp.frozen });
    return out;
  });
  m.collected("gatehouse_outbox_messages", "Webhook outbox messages by state: pending (backlog) and dead (dead letters).", "gauge", () => {
    const o = workers().webhookOutbox as { pending?: number; dead?: number } | undefined;
    return o ? [{ labels: { state: "pending" }, value: o.pending ?? 0 }, { labels: { state: "dead" }, value: o.dead ?? 0 }] : [];
  });
  m.collected("gatehouse_alert_dead_letters", "Alerts in the dead-letter stream (not replayed).", "gauge", () => {
    const a = alerts();
    return a && a.deadLetters !== null ? [{ labels: {}, value: a.deadLetters }] : [];
  });
  _engineGauges(kit, engine);
  m.collected("gatehouse_recovery_open", "What the recovery jobs still see unresolved, by kind (cached).", "gauge", () => {
    const r = workers().recovery as { open?: Record<string, number> } | undefined;
    return Object.entries(r?.open ?? {}).map(([kind, value]) => ({ labels: { kind }, value }));
  });
}

// --- Internal helpers ---

/** The document store engine's figures (SQLite: file, WAL and free bytes, commits and their latency, the caches). */
function _engineGauges(kit: PluginKit, engine: () => DocumentStoreStats | null): void {
  const m = kit.metrics;
  m.collected("gatehouse_document_store_bytes", "The document store's files, in bytes: the database, its write-ahead log, free pages inside it (cached).", "gauge", () => {
    const e = engine();
    const parts: Array<[string, number | undefined]> = [["file", e?.fileBytes], ["wal", e?.walBytes], ["free", e?.freeBytes]];
    return parts.filter(([, v]) => typeof v === "number").map(([part, value]) => ({ labels: { part }, value: value! }));
  });
  m.collected("gatehouse_document_store_commits", "Transactions this process's document store committed since it started (cached).", "counter", () => {
    const e = engine();
    return typeof e?.commits === "number" ? [{ labels: {}, value: e.commits }] : [];
  });
  m.collected("gatehouse_document_store_commit_seconds", "Commit latency of the document store (BEGIN..COMMIT, fsync included) over its recent commits: last, p50, p99 (cached).", "gauge", () => {
    const c = engine()?.commitMs;
    return c ? (["last", "p50", "p99"] as const).map((stat) => ({ labels: { stat }, value: c[stat] / 1000 })) : [];
  });
  m.collected("gatehouse_document_store_remembered_reads", "Point reads of the document store answered from memory (answer=hit) or by the engine (answer=miss) since start; absent unless the process is the file's sole writer (cached).", "counter", () => {
    const r = engine()?.readCache;
    return r ? [{ labels: { answer: "hit" }, value: r.hits }, { labels: { answer: "miss" }, value: r.misses }] : [];
  });
  m.collected("gatehouse_document_store_remembered_answers", "Read answers the document store holds in memory now (cached).", "gauge", () => {
    const r = engine()?.readCache;
    return r ? [{ labels: {}, value: r.entries }] : [];
  });
  m.collected("gatehouse_document_store_cache_limit_bytes", "The bound of the document store engine's page cache in this process, in bytes.", "gauge", () => {
    const e = engine();
    return typeof e?.cacheLimitBytes === "number" ? [{ labels: {}, value: e.cacheLimitBytes }] : [];
  });
}
