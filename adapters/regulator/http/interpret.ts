/**
 * Interpretation of the regulator's answers: one raw answer → the value the operation wanted, or the
 * failure it is (./outcomes.ts turns failures into the port's outcomes and GW errors).
 *
 * Failures are classified from what the real API sends (docs/regulator-client.md, with sources): the
 * HTTP status, the envelope's structure (`{ code, data: null, message, error: { id, handler, details,
 * public_message } }`, or the router's un-enveloped `{ code: 404, message }`), and message text only
 * where nothing better exists ("unable to validate api key", the webhook precondition). Never from
 * `error.id`: the real one is a per-request UUID. The mapping to public codes is in ../port.ts.
 */
import { ENTITY_LIMITS } from "../port.ts";
import type { InvalidResponseReason, RegulatorAuthResult, RegulatorFailure, RegulatorRejection, RegulatorResponse } from "../port.ts";
import { passThroughResponse } from "./relay.ts";
import { REQUEST_ID, type RawResponse } from "./transport.ts";

/** An answer interpreted: the value, or the failure. */
export type Interpreted<T> = { ok: true; value: T } | { ok: false; failure: RegulatorFailure };

type Envelope = { ok: true; data: Record<string, unknown> } | { ok: false; failure: RegulatorFailure };

export const any2xx = (code: number): boolean => code >= 200 && code <= 299;

/** Validate / sign / transmit / confirm: success only with an accepted `code` and `data.ok === true` (when `needsOk`). */
export function interpretOk(acceptCode: (code: number) => boolean, needsOk = true): (raw: RawResponse) => Interpreted<RegulatorResponse> {
  return (raw) => {
    if (raw.status < 200 || raw.status > 299) return { ok: false, failure: errorFailure(raw, "other") };
    const env = successEnvelope(raw, acceptCode);
    if (!env.ok) return env;
    if (needsOk && env.data.ok !== true) {
      return { ok: false, failure: { kind: "invalid_response", reason: "not_ok", upstreamStatus: raw.status } };
    }
    return { ok: true, value: passThroughResponse(raw) };
  };
}

/** A direct route: any 2xx answer within the size limit, passed through whatever its body. */
export function interpretRelay(raw: RawResponse): Interpreted<RegulatorResponse> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: errorFailure(raw, "other") };
  if (raw.tooLarge) return { ok: false, failure: { kind: "invalid_response", reason: "response_too_large", upstreamStatus: raw.status } };
  return { ok: true, value: passThroughResponse(raw) };
}

/** The taxpayer login: the entity id of its envelope. */
export function interpretAuth(raw: RawResponse): Interpreted<RegulatorAuthResult> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: errorFailure(raw, "authenticate") };
  const env = successEnvelope(raw, any2xx);
  if (!env.ok) return env;
  const entityId = env.data.entity_id;
  if (typeof entityId !== "string" || entityId === "" || entityId.length > ENTITY_LIMITS.idLength) {
    return { ok: false, failure: { kind: "invalid_response", reason: "unrecognized_envelope", upstreamStatus: raw.status } };
  }
  return { ok: true, value: { entityId } };
}

/**
 * A 2xx answer's `{ code, data }` envelope: `code` accepted by `acceptCode`, `data` an object. Anything
 * else is an invalid answer (empty, not JSON, renamed or unrecognised envelope, too large).
 */
export function successEnvelope(raw: RawResponse, acceptCode: (code: number) => boolean): Envelope {
  const invalid = (reason: InvalidResponseReason): Envelope => ({
    ok: false,
    failure: { kind: "invalid_response", reason, upstreamStatus: raw.status },
  });
  if (raw.tooLarge) return invalid("response_too_large");
  const parsed = _parse(raw);
  if (parsed.kind === "empty") return invalid("empty_body");
  if (parsed.kind === "malformed") return invalid("malformed_body");
  const v = parsed.value;
  if (!isObject(v) || typeof v.code !== "number" || !acceptCode(v.code) || !isObject(v.data)) {
    return invalid("unrecognized_envelope");
  }
  return { ok: true, data: v.data };
}

/**
 * A non-2xx answer → the failure, from the status, the envelope's structure and (two cases) its text.
 * `op` "authenticate": a 401/403 whose message does not name the API key is the taxpayer's login, not
 * the deployment's credentials.
 */
export function errorFailure(raw: RawResponse, op: "authenticate" | "other"): RegulatorFailure {
  const s = raw.status;
  if (s >= 300 && s <= 399) return { kind: "redirect", upstreamStatus: s };
  if (s >= 500 && s <= 599) return { kind: "server_error", upstreamStatus: s };
  if (s === 429) return { kind: "rate_limited", retryAfterSeconds: _retryAfter(raw.headers["retry-after"]) };
  if (s === 408) return { kind: "timeout", upstreamStatus: s };
  if (s < 400 || s > 499) return { kind: "invalid_response", reason: "unrecognized_envelope", upstreamStatus: s };
  const answer = _errorAnswer(raw);
  if (answer !== null && API_KEY_TEXT.test(answer.text)) return { kind: "credentials_rejected", upstreamStatus: s };
  if ((s === 401 || s === 403) && op !== "authenticate") return { kind: "credentials_rejected", upstreamStatus: s };
  if (answer?.shape === "router" && (s === 404 || s === 405)) return { kind: "route_not_found", upstreamStatus: s };
  // A 413 without the regulator's envelope comes from something in front of it: not processed.
  if (s === 413 && answer?.shape !== "envelope") return { kind: "rejected", status: s, reason: "payload_too_large", errorId: null };
  if (answer?.shape !== "envelope") return { kind: "invalid_response", reason: "unrecognized_error", upstreamStatus: s };
  const rejection: RegulatorRejection = { kind: "rejected", status: s, reason: _rejectionReason(s, answer.text), errorId: answer.errorId };
  if (answer.explanation !== "") rejection.message = answer.explanation;
  return rejection;
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

// --- Internal helpers ---

/** The regulator's wording when it refuses the deployment's key or secret ("unable to validate api key"). */
const API_KEY_TEXT = /\bapi[\s_-]?(?:key|secret)\b/i;
/** The transmission precondition ("webhook url is not setup"). */
const WEBHOOK_TEXT = /\bwebhook\b/i;

type Parsed = { kind: "ok"; value: unknown } | { kind: "empty" } | { kind: "malformed" };

function _parse(raw: RawResponse): Parsed {
  if (raw.body.length === 0) return { kind: "empty" };
  const text = Buffer.from(raw.body.buffer, raw.body.byteOffset, raw.body.byteLength).toString("utf8");
  if (text.trim() === "") return { kind: "empty" };
  try {
    return { kind: "ok", value: JSON.parse(text) };
  } catch {
    return { kind: "malformed" };
  }
}

function _rejectionReason(status: number, text: string): RegulatorRejection["reason"] {
  if (WEBHOOK_TEXT.test(text)) return "webhook_not_configured";
  switch (status) {
    case 401:
      return "unauthorized";
    case 403:
      return "forbidden";
    case 404:
      return "not_found";
    case 409:
      return "conflict";
    case 413:
      return "payload_too_large";
    default:
      return "bad_request";
  }
}

interface ErrorAnswer {
  /** "envelope": an `error` object (the API's errors); "router": `{ code, message }` without one (unknown path). */
  shape: "envelope" | "router";
  /** `error.id` when it is a safe token (a per-request UUID on the real API): correlation only. */
  errorId: string | null;
  /** `error.public_message` and `message`, for the two text rules only; never logged or returned. */
  text: string;
  /** `error.details` (else `error.public_message`), bounded: RegulatorRejection.message. */
  explanation: string;
}

/** The regulator's error answer, or null when the body is not one of its two JSON shapes. */
function _errorAnswer(raw: RawResponse): ErrorAnswer | null {
  if (raw.tooLarge) return null;
  const parsed = _parse(raw);
  if (parsed.kind !== "ok" || !isObject(parsed.value)) return null;
  const v = parsed.value;
  const message = typeof v.message === "string" ? v.message : "";
  if (isObject(v.error)) {
    const e = v.error;
    const publicMessage = typeof e.public_message === "string" ? e.public_message : "";
    if (typeof e.id !== "string" && publicMessage === "") return null;
    const errorId = typeof e.id === "string" && REQUEST_ID.test(e.id) ? e.id : null;
    const explanation = _explanation(typeof e.details === "string" && e.details.trim() !== "" ? e.details : publicMessage);
    return { shape: "envelope", errorId, text: `${publicMessage}\n${message}`, explanation };
  }
  if (typeof v.code === "number" && message !== "") return { shape: "router", errorId: null, text: message, explanation: "" };
  return null;
}

/** Free text made safe to store: control characters become spaces, at most 500 characters. */
function _explanation(text: string): string {
  const clean = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  return clean.length > 500 ? clean.slice(0, 499) + "…" : clean;
}

/** Retry-After in seconds (delta or HTTP date), at least 1, at most 3600; 1 when absent or unreadable. */
function _retryAfter(value: string | string[] | undefined): number {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return 1;
  const t = v.trim();
  let seconds: number;
  if (/^\d+$/.test(t)) seconds = Number(t);
  else {
    const at = Date.parse(t);
    if (Number.isNaN(at)) return 1;
    seconds = Math.ceil((at - Date.now()) / 1000);
  }
  return Math.min(3600, Math.max(1, seconds));
}
