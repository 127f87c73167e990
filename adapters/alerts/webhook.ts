/**
 * The chat-webhook channel: one JSON POST per alert to a Slack-compatible incoming webhook
 * (`{ text, alert }`: Slack, Mattermost and Rocket.Chat read `text`; other receivers may read the
 * allowlisted `alert` object). Each attempt has a 3 s deadline (connect, headers and body); a 2xx is
 * delivered, anything else (timeout, connection failure, 3xx — redirects are never followed —, 4xx,
 * 5xx) is a failed attempt. The URL itself is a secret (Slack's carries its token): it is never logged
 * or shown; logs name only the failure class and status.
 */
import { request } from "undici";
import { HOP_HEADER, type HopMarker } from "../../core/http/hop.ts";
import type { Alert } from "../ports.ts";
import { webhookUrlProblems } from "../../config/url-rules.ts";
import { chatText } from "./context.ts";

export interface WebhookChannelOptions {
  /** https:// URL (http:// only to a loopback address: tests and local receivers). */
  url: string;
  /** Per-attempt deadline. Default 3000 ms. */
  timeoutMs?: number;
  /** Attempts before the alert is dead-lettered. Default 5. */
  attempts?: number;
  /** Wait after the first failed attempt; doubled after each (capped by backoffMaxMs). Default 1000 ms. */
  backoffBaseMs?: number;
  backoffMaxMs?: number;
  /** The deployment's hop markers: each post carries the one for the channel's host (X-Service-Gateway-Hop). */
  hopMarker?: HopMarker;
}

/** Spec §6: a 3-second deadline per attempt, up to five attempts with exponential backoff. */
export const WEBHOOK_DEFAULTS = { timeoutMs: 3_000, attempts: 5, backoffBaseMs: 1_000, backoffMaxMs: 30_000 } as const;

export type AttemptResult = { ok: true; upstreamStatus: number } | { ok: false; failureClass: string; upstreamStatus: number | null };

export interface WebhookChannel {
  /** One attempt. Never throws. */
  attempt(alert: Alert): Promise<AttemptResult>;
  /** Up to `attempts` attempts with exponential backoff; the last result. */
  deliver(alert: Alert): Promise<AttemptResult & { attempts: number }>;
}

export function createWebhookChannel(options: WebhookChannelOptions): WebhookChannel {
  const problems = webhookUrlProblems(options.url);
  if (problems.length > 0) throw new RangeError(`[alerts] webhook url ${problems.join("; ")}`);
  const url = options.url;
  const timeoutMs = options.timeoutMs ?? WEBHOOK_DEFAULTS.timeoutMs;
  const attempts = options.attempts ?? WEBHOOK_DEFAULTS.attempts;
  const base = options.backoffBaseMs ?? WEBHOOK_DEFAULTS.backoffBaseMs;
  const max = options.backoffMaxMs ?? WEBHOOK_DEFAULTS.backoffMaxMs;

  async function attempt(alert: Alert): Promise<AttemptResult> {
    const body = JSON.stringify({ text: chatText(alert), alert });
    try {
      const res = await request(url, {
        method: "POST",
        headers: { "content-type": "application/json", ...(options.hopMarker ? { [HOP_HEADER]: options.hopMarker.forUrl(url) } : {}) },
        body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.body.dump().catch(() => undefined);
      if (res.statusCode >= 200 && res.statusCode <= 299) return { ok: true, upstreamStatus: res.statusCode };
      const failureClass = res.statusCode >= 500 ? "server_error" : res.statusCode === 429 ? "rate_limited" : res.statusCode >= 400 ? "rejected" : "redirect";
      return { ok: false, failureClass, upstreamStatus: res.statusCode };
    } catch (e) {
      const err = e as { name?: string; code?: string };
      const timedOut = err.name === "TimeoutError" || err.name === "AbortError" || err.code === "UND_ERR_HEADERS_TIMEOUT" || err.code === "UND_ERR_BODY_TIMEOUT";
      return { ok: false, failureClass: timedOut ? "timeout" : "transport", upstreamStatus: null };
    }
  }

  async function deliver(alert: Alert): Promise<AttemptResult & { attempts: number }> {
    let last: AttemptResult = { ok: false, failureClass: "transport", upstreamStatus: null };
    for (let n = 1; n <= attempts; n++) {
      last = await attempt(alert);
      if (last.ok || n === attempts) return { ...last, attempts: n };
      await new Promise((r) => setTimeout(r, Math.min(max, base * 2 ** (n - 1))));
    }
    return { ...last, attempts };
  }

  return { attempt, deliver };
}
