/**
 * Stage 5, admission: a cheap early limit keyed by canonical domain + trusted client address,
 * before any authentication work. Fixed windows in process memory; the map is replaced when the
 * window turns, and beyond `maxTrackedClients` new clients share one bucket, so a flood of
 * addresses cannot grow memory without bound.
 *
 * A route may declare a tighter limit of its own per client address (`admission` of its
 * declaration: an unauthenticated entry point that reads a large body, such as the regulator's
 * inbound deliveries), counted the same way in a window of its own.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "../core/stages/define.ts";

export const admissionStage = defineStage({
  name: "admission",
  create({ config, now }) {
    const { perClient, windowSeconds, maxTrackedClients } = config.limits.admission;
    const shared = _createWindow(windowSeconds * 1000, maxTrackedClients);
    const byRoute = new Map<string, FixedWindow>();

    return function admission(ctx) {
      const t = now();
      _admit(shared, `${ctx.host}|${ctx.clientAddress ?? "-"}`, perClient, t, "Too many requests from this client to this host.");
      const own = ctx.route?.decl.admission;
      if (own === undefined) return;
      let w = byRoute.get(ctx.route!.id);
      if (w === undefined) byRoute.set(ctx.route!.id, (w = _createWindow(own.windowSeconds * 1000, maxTrackedClients)));
      _admit(w, ctx.clientAddress ?? "-", own.perClient, t, `At most ${own.perClient} requests per ${own.windowSeconds} s from one client address on this route.`);
    };
  },
});

// --- Internal helpers ---

const OVERFLOW_KEY = "\u0000overflow";

/** Counts per key in the current fixed window. */
interface FixedWindow {
  readonly ms: number;
  readonly maxKeys: number;
  start: number;
  counts: Map<string, number>;
}

function _createWindow(ms: number, maxKeys: number): FixedWindow {
  return { ms, maxKeys, start: 0, counts: new Map() };
}

/** Counts one request of `key` at time `t`; past `limit` in the window, 429 with the window's remaining time. */
function _admit(w: FixedWindow, key: string, limit: number, t: number, detail: string): void {
  const start = t - (t % w.ms);
  if (start !== w.start) {
    w.start = start;
    w.counts = new Map();
  }
  if (!w.counts.has(key) && w.counts.size >= w.maxKeys) key = OVERFLOW_KEY;
  const n = (w.counts.get(key) ?? 0) + 1;
  w.counts.set(key, n);
  if (n > limit) throw gwError("GW_RATE_LIMIT_EXCEEDED", { detail, retryAfterSeconds: Math.max(1, Math.ceil((start + w.ms - t) / 1000)) });
}

