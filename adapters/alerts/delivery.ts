/**
 * Sending one alert: always to the log (and the metrics callback), then, when a chat webhook is
 * configured, through the delivery queue; an alert the webhook refused after its attempts becomes a
 * dead letter in the document store.
 */
import { randomUUID } from "node:crypto";
import { describeError } from "../../core/log.ts";
import type { Alert, DeadLetter } from "../ports.ts";
import { buildAlert, type AlertFields } from "./context.ts";
import type { AlertEngineState } from "./state.ts";

/** An alert's fields as the engine knows them (times as epoch ms; id, environment and runbooks added here). */
export type SendFields = Omit<AlertFields, "id" | "environment" | "runbookBase" | "firstOccurrence" | "lastOccurrence"> & {
  firstOccurrence: number;
  lastOccurrence: number;
};

export function sendAlert(s: AlertEngineState, f: SendFields): void {
  const { log, o, webhook } = s;
  const alert = buildAlert({ ...f, id: randomUUID(), environment: o.environment, runbookBase: s.runbookBase });
  s.counts.sent++;
  const fields = alert as unknown as Record<string, unknown>;
  if (alert.kind === "recovered") log.event("gateway_alert", fields);
  else if (alert.severity === "critical") log.error("gateway_alert", fields);
  else log.warn("gateway_alert", fields);
  try {
    o.onAlert?.(alert);
  } catch {
    // metrics must not break delivery
  }
  if (!webhook) return;
  void s.queue.add(async () => {
    const r = await webhook.deliver(alert);
    s.lastDelivery = { at: new Date(s.clock()).toISOString(), outcome: r.ok ? "delivered" : "failed", alertId: alert.id };
    if (r.ok) return;
    s.counts.deliveryFailures++;
    log.error("chat_alert_delivery_failed", {
      alertId: alert.id,
      signal: alert.signal,
      attempts: r.attempts,
      failureClass: r.failureClass,
      upstreamStatus: r.upstreamStatus,
    });
    await _deadLetter(s, alert, r.attempts, { failureClass: r.failureClass, upstreamStatus: r.upstreamStatus });
  });
}

// --- Internal helpers ---

async function _deadLetter(s: AlertEngineState, alert: Alert, attempts: number, lastFailure: DeadLetter["lastFailure"]): Promise<void> {
  const at = s.clock();
  try {
    await s.letters.insert({ _id: alert.id, alert, status: "dead", attempts, lastFailure, deadAt: new Date(at).toISOString(), deadAtMs: at, replayedAt: null });
    try {
      s.o.onDeadLetter?.(alert);
    } catch {
      // metrics must not break delivery
    }
  } catch (e) {
    s.log.error("chat_alert_dead_letter_unwritable", { alertId: alert.id, signal: alert.signal, error: describeError(e) });
  }
}
