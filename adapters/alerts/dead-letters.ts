/** The dead-letter stream: alerts the chat webhook refused, listed newest first, replayed one at a time. */
import type { DeadLetter, Filter } from "../ports.ts";
import type { AlertEngineState, LetterDoc } from "./state.ts";

export async function listDeadLetters(s: AlertEngineState, q: { limit: number; cursor?: string | null; status?: "dead" | "replayed" }) {
  const filter: Filter = q.status ? { status: q.status } : {};
  const page = await s.letters.find(filter, { sort: [{ field: "deadAtMs", direction: -1 }], limit: q.limit, cursor: q.cursor ?? null });
  return { items: page.items.map(_letterView), nextCursor: page.nextCursor };
}

/** One more delivery attempt of a dead letter; a replayed letter is not sent again. Null when unknown. */
export async function replayDeadLetter(s: AlertEngineState, id: string): Promise<{ letter: DeadLetter; delivered: boolean } | null> {
  const { letters, webhook, clock } = s;
  const doc = await letters.get(id);
  if (!doc) return null;
  if (doc.status === "replayed") return { letter: _letterView(doc), delivered: true };
  const r = webhook ? await webhook.attempt(doc.alert) : ({ ok: false, failureClass: "not_configured", upstreamStatus: null } as const);
  s.lastDelivery = { at: new Date(clock()).toISOString(), outcome: r.ok ? "delivered" : "failed", alertId: doc.alert.id };
  const updated = r.ok
    ? await letters.findOneAndUpdate({ _id: id, status: "dead" }, { $set: { status: "replayed", replayedAt: new Date(clock()).toISOString() }, $inc: { attempts: 1 } })
    : await letters.findOneAndUpdate(
        { _id: id, status: "dead" },
        { $set: { lastFailure: { failureClass: r.failureClass, upstreamStatus: r.upstreamStatus } }, $inc: { attempts: 1 } },
      );
  const now = updated ?? (await letters.get(id));
  if (!now) return null;
  s.log.event("chat_alert_replayed", { alertId: id, delivered: r.ok, ...(r.ok ? {} : { failureClass: r.failureClass }) });
  return { letter: _letterView(now), delivered: r.ok || now.status === "replayed" };
}

// --- Internal helpers ---

function _letterView(d: LetterDoc): DeadLetter {
  return { id: d._id, alert: d.alert, status: d.status, attempts: d.attempts, lastFailure: d.lastFailure, deadAt: d.deadAt, replayedAt: d.replayedAt };
}
