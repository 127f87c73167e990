/**
 * Stage 5, admission: a cheap early limit keyed by canonical domain + trusted client address,
 * before any authentication work. Fixed windows in process memory; the map is replaced when the
 * window turns, and beyond `maxTrackedClients` new clients share one bucket, so a flood of
 * addresses cannot grow memory without bound.
 */
import { gwError } from "../core/errors/gateway-error.ts";
import { defineStage } from "../core/stages/define.ts";

const OVERFLOW_KEY = "\u0000overflow";

export const admissionStage = defineStage({
  name: "admission",
  create({ config, now }) {
    const { perClient, windowSeconds, maxTrackedClients } = config.limits.admission;
    const windowMs = windowSeconds * 1000;
    let windowStart = 0;
    let counts = new Map<string, number>();

    return function admission(ctx) {
      const t = now();
      const start = t - (t % windowMs);
      if (start !== windowStart) {
        windowStart = start;
        counts = new Map();
      }
      let key = `${ctx.host}|${ctx.clientAddress ?? "-"}`;
      if (!counts.has(key) && counts.size >= maxTrackedClients) key = OVERFLOW_KEY;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      if (n > perClient)
        throw gwError("GW_RATE_LIMIT_EXCEEDED", {
          detail: "Too many requests from this client to this host.",
          retryAfterSeconds: Math.max(1, Math.ceil((start + windowMs - t) / 1000)),
        });
    };
  },
});
