/**
 * One HTTP attempt: POST the stored body with fresh Standard Webhooks headers (one signature per
 * secret) and the deployment's hop marker for the endpoint's host, when given, bounded by the
 * deadline. The answer's body is never kept; an error is reduced to a class ("timeout",
 * "ECONNREFUSED"), never a message.
 */
import { request, type Agent } from "undici";
import { HOP_HEADER } from "../../../core/http/hop.ts";
import { webhookHeaders } from "../signature.ts";

/** An attempt's answer: its status (null without one) and what `lastError` records if it failed. */
export interface AttemptResult {
  statusCode: number | null;
  error: string;
}

export async function postWebhook(
  dispatcher: Agent,
  url: string,
  secrets: readonly string[],
  webhookId: string,
  body: string,
  clock: () => number,
  timeoutMs: number,
  hop?: string,
): Promise<AttemptResult> {
  const timestamp = Math.floor(clock() / 1000);
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const res = await request(url, {
      method: "POST",
      dispatcher,
      signal,
      headers: {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        ...webhookHeaders(secrets, webhookId, timestamp, body),
        ...(hop === undefined ? {} : { [HOP_HEADER]: hop }),
      },
      body,
    });
    // The answer's body is never read into memory or recorded: drain a little, then drop it.
    await res.body.dump({ limit: MAX_RESPONSE_BYTES }).catch(() => {});
    return { statusCode: res.statusCode, error: `http_${res.statusCode}` };
  } catch (e) {
    return { statusCode: null, error: _errorClass(e, signal) };
  }
}

// --- Internal helpers ---

const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = "Gatehouse-Webhooks/1.0";

function _errorClass(e: unknown, signal: AbortSignal): string {
  if (signal.aborted) return "timeout";
  const err = e as { name?: unknown; code?: unknown; cause?: { code?: unknown } } | null;
  const code = typeof err?.code === "string" ? err.code : typeof err?.cause?.code === "string" ? err.cause.code : undefined;
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT") return "timeout";
  if (code && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
  const name = typeof err?.name === "string" && /^[A-Za-z0-9_]{1,60}$/.test(err.name) ? err.name : "Error";
  return name === "TimeoutError" ? "timeout" : name;
}
