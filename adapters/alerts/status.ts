/** What the alert channel reports: its health (dead letters, last delivery, counts) and its per-dependency observations. */
import type { AlertChannelStatus, DependencyObservation } from "../ports.ts";
import type { AlertEngineState } from "./state.ts";

export async function channelStatus(s: AlertEngineState): Promise<AlertChannelStatus> {
  let dead: number | null = null;
  try {
    dead = await s.letters.count({ status: "dead" });
  } catch {
    dead = null;
  }
  const lastDelivery = s.lastDelivery;
  const failing = lastDelivery?.outcome === "failed";
  return {
    status: dead === null ? "unknown" : failing ? "unhealthy" : "healthy",
    channels: s.webhook ? ["log", "webhook"] : ["log"],
    webhook: { configured: s.webhook !== null, lastDelivery, pending: s.queue.size + s.queue.pending },
    deadLetters: dead,
    ...s.counts,
  };
}

export function observations(s: AlertEngineState): DependencyObservation[] {
  const out: DependencyObservation[] = [];
  for (const byOp of s.trackers.values())
    for (const k of byOp.values())
      out.push({
        dependency: k.dependency,
        operation: k.operation,
        lastSuccessAt: k.lastSuccessAt === null ? null : new Date(k.lastSuccessAt).toISOString(),
        lastFailureAt: k.lastFailureAt === null ? null : new Date(k.lastFailureAt).toISOString(),
        lastFailureClass: k.lastFailureClass,
        consecutiveFailures: k.consecutiveFailures,
        incident: k.incident,
      });
  return out;
}
