/**
 * The gauges of /metrics: read at scrape time from in-memory state and the cached snapshot only,
 * so a scrape never fans out to dependencies.
 */
import type { AlertChannelStatus } from "../../adapters/ports.ts";
import type { Sample } from "../../core/metrics.ts";
import type { PluginKit } from "../../core/plugin.ts";

const CIRCUIT_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** Registers the gauges; `workers` and `alerts` read what the background refresh last saw. */
export function registerGauges(kit: PluginKit, workers: () => Record<string, unknown>, alerts: () => AlertChannelStatus | null): void {
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
  m.collected("gatehouse_recovery_open", "What the recovery jobs still see unresolved, by kind (cached).", "gauge", () => {
    const r = workers().recovery as { open?: Record<string, number> } | undefined;
    return Object.entries(r?.open ?? {}).map(([kind, value]) => ({ labels: { kind }, value }));
  });
}
