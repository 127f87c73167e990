/**
 * The regulator client over HTTP (undici): the RegulatorClient port (./port.ts) against the regulator's
 * e-invoicing interface v1.1.6, or the built-in simulator, which it cannot tell apart.
 *
 * Wire rules, on every outbound call:
 * - the base URL comes from the business state (`baseUrls.TEST` / `baseUrls.LIVE`); a state without one
 *   is GW_REGULATOR_UNAVAILABLE (503) and nothing is called;
 * - the deployment's own credentials as `x-api-key` + `x-api-secret`, `X-Service-Gateway-Hop: 1`, and the
 *   gateway's request id as `x-request-id` (correlation only);
 * - redirects are never followed (undici's request does not follow them; a 3xx is a contract failure);
 * - one undici Pool per base-URL origin, keep-alive (ARCHITECTURE.md §8: ~4× global fetch);
 * - one dependency policy per state ("regulator:TEST", "regulator:LIVE") from the injected PolicyRegistry:
 *   the per-call deadline (`timeoutMs`, default 10 s) and the §3.5 circuit. The whole exchange, body
 *   included, runs inside the deadline; the policy's AbortSignal aborts the undici request.
 * - one `gateway_dependency_call` log event per call (never bodies, credentials, paths or queries),
 *   plus `regulator_credentials_rejected` (error level, `alert: "immediate"`: the immediate signal of
 *   spec §6, raised in `call()` below) whenever the regulator rejects the deployment's credentials.
 *
 * Failures are classified from what the real API sends (docs/regulator-client.md, with sources): the
 * HTTP status, the envelope's structure (`{ code, data: null, message, error: { id, handler, details,
 * public_message } }`, or the router's un-enveloped `{ code: 404, message }`), and message text only
 * where nothing better exists ("unable to validate api key", the webhook precondition). Never from
 * `error.id`: the real one is a per-request UUID. The mapping to public codes is in ./port.ts.
 */
import { Pool, type Dispatcher } from "undici";
import type { CallDeadline, CallReport, DependencyPolicy, PolicyRegistry, ResultVerdict } from "../policies.ts";
import { isDependencyUnavailableError, type AlertChannel } from "../ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import type { EventShape, Logger } from "../../core/log.ts";
import { HOP_HEADER } from "../../core/http/hop.ts";
import { serviceIdOfTemplate } from "./irn.ts";
import {
  ENTITY_LIMITS,
  REGULATOR_ADAPTERS,
  REGULATOR_ADAPTER_VERSIONS,
  mapRegulatorFailure,
  regulatorFailureClass,
  regulatorFailureCounts,
} from "./port.ts";
import type {
  AmbiguousReason,
  InvoiceConfirmation,
  InvalidResponseReason,
  InvoiceDocument,
  IrnValidationRequest,
  RegulatorAuthResult,
  RegulatorBusiness,
  RegulatorCallContext,
  RegulatorClient,
  RegulatorEntity,
  RegulatorFailure,
  RegulatorOperation,
  RegulatorRejection,
  RegulatorResponse,
  RegulatorState,
  RegulatorTargetInfo,
  RelayRequest,
  SignOutcome,
  TaxpayerLogin,
  TransmitOutcome,
  ValidationOutcome,
} from "./port.ts";

// ---------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------

export interface HttpRegulatorClientOptions {
  /** Base URL per state ("https://host[/prefix]"); a state without one is not configured. */
  baseUrls: { TEST?: string; LIVE?: string };
  /** The deployment's own credentials (config `regulator.apiKey` / `regulator.apiSecret`). */
  apiKey: string;
  apiSecret: string;
  /** Where the "regulator:TEST" / "regulator:LIVE" policies are created (or found) and shown in health. */
  policies: PolicyRegistry;
  log: Logger;
  /** Per-call deadline, body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Connections per origin. Default 128. */
  connections?: number;
  /** Idle keep-alive of pooled sockets when the server sends no hint. Default undici's (4 s). */
  keepAliveTimeoutMs?: number;
  /** TCP/TLS connect deadline (a connect failure is "nothing was sent"). Default min(timeoutMs, 5 000). */
  connectTimeoutMs?: number;
  /** Largest accepted response body; larger is an invalid answer. Default 10 MiB. */
  maxResponseBytes?: number;
  /**
   * The next deployment credentials, staged for a rotation (spec §9). A call the regulator refuses
   * with the credentials in use — credentials rejected: certainly not performed — is sent once more
   * with the other pair, and the pair that worked is used from then on. Nothing else is ever retried
   * with the other pair: a mutation whose first dispatch is uncertain (timeout, lost connection, 5xx,
   * unusable answer) stays uncertain.
   */
  next?: { apiKey: string; apiSecret: string };
  /** Contract adapter version per state (spec §9); each must be one of REGULATOR_ADAPTER_VERSIONS. Default "v1". */
  contractVersions?: { TEST?: string; LIVE?: string };
  /** One report per call made (metrics and alert thresholds); exceptions it throws are ignored. */
  onCall?: (call: RegulatorCallEvent) => void;
  /** Immediate signals (every staged credential rejected). */
  alerts?: AlertChannel;
}

/** What `onCall` receives about one call (never a body, path, query or credential). */
export interface RegulatorCallEvent {
  dependency: string;
  operation: string;
  outcome: "success" | "failure" | "neutral" | "refused";
  failureClass?: string;
  requestId?: string;
}

export interface HttpRegulatorClient extends RegulatorClient {
  /** Closes every pool (shutdown). Calls made afterwards fail as transport errors. */
  close(): Promise<void>;
  describe(): RegulatorTargetInfo[];
}

export const DEFAULT_REGULATOR_TIMEOUT_MS = 10_000;

// ---------------------------------------------------------------------------
// Client
// ---------------------------------------------------------------------------

export function createHttpRegulatorClient(options: HttpRegulatorClientOptions): HttpRegulatorClient {
  const { apiKey, apiSecret, policies, log } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REGULATOR_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;
  _check(typeof apiKey === "string" && apiKey !== "", "apiKey must be a non-empty string");
  _check(typeof apiSecret === "string" && apiSecret !== "", "apiSecret must be a non-empty string");
  _check(Number.isFinite(timeoutMs) && timeoutMs > 0, "timeoutMs must be a positive number");
  _check(Number.isInteger(maxResponseBytes) && maxResponseBytes > 0, "maxResponseBytes must be a positive integer");
  const next = options.next;
  if (next) _check(typeof next.apiKey === "string" && next.apiKey !== "" && typeof next.apiSecret === "string" && next.apiSecret !== "", "next credentials must be non-empty strings");

  /** One credential pair's request headers as undici's flat [name, value, …] list (built once). */
  const headersOf = (key: string, secret: string): readonly string[] => ["x-api-key", key, "x-api-secret", secret, HOP_HEADER, "1", "accept", "application/json"];
  /** The credential pairs: [current, next?]. */
  const credentialHeaders = [headersOf(apiKey, apiSecret), ...(next ? [headersOf(next.apiKey, next.apiSecret)] : [])];
  const callEvent = log.shape("gateway_dependency_call", CALL_FIELDS, CALL_REPEATING);
  const pools = new Map<string, Pool>();
  const targets = new Map<RegulatorState, Target>();
  for (const state of ["TEST", "LIVE"] as const) {
    const raw = options.baseUrls[state];
    if (raw === undefined || raw === "") continue;
    const { origin, basePath } = _parseBaseUrl(raw, state);
    let pool = pools.get(origin);
    if (!pool) {
      pool = new Pool(origin, {
        connections: options.connections ?? 128,
        pipelining: 1,
        ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
        connect: { timeout: options.connectTimeoutMs ?? Math.min(timeoutMs, 5_000) },
      });
      pools.set(origin, pool);
    }
    const dependency = `regulator:${state}`;
    const contractVersion = options.contractVersions?.[state] ?? "v1";
    // Spec §9: an unsupported version prevents the integration from starting.
    _check(
      REGULATOR_ADAPTER_VERSIONS.includes(contractVersion),
      `contract version "${String(contractVersion).slice(0, 16)}" of ${state} is not supported by this adapter (${REGULATOR_ADAPTER_VERSIONS.join(", ")})`,
    );
    // One policy per state, shared by every client built on the same registry (the circuit is the
    // dependency's, not the client's).
    const policy = policies.get(dependency) ?? policies.create({ dependency, timeoutMs });
    targets.set(state, { state, dependency, policy, pool, basePath, contractVersion, slot: 0 });
  }

  /**
   * Runs one call through the state's policy with the credentials in use; when the regulator rejects
   * them (certainly not performed) and another pair is staged, once more with that pair. Never throws
   * (every failure is a value).
   */
  async function call<T>(
    state: RegulatorState,
    operation: RegulatorOperation,
    logOperation: string,
    wire: Wire,
    interpret: (raw: RawResponse) => Interpreted<T>,
    ctx: RegulatorCallContext,
  ): Promise<Interpreted<T>> {
    const target = targets.get(state);
    if (!target) {
      const result: Interpreted<T> = { ok: false, failure: { kind: "not_configured" } };
      _logCall(callEvent, { dependency: _dependencyName(state), operation: logOperation, ctx, latencyMs: 0, result, mutation: _isMutation(operation) });
      return result;
    }
    const first = target.slot;
    let result = await attempt(target, first, operation, logOperation, wire, interpret, ctx);
    if (!result.ok && result.failure.kind === "credentials_rejected" && credentialHeaders.length > 1) {
      // Rejected credentials: the regulator refused before doing anything, so the other staged pair
      // may be tried — this is the only failure that is ever sent again with other credentials.
      const other = 1 - first;
      const second = await attempt(target, other, operation, logOperation, wire, interpret, ctx);
      if (second.ok || second.failure.kind !== "credentials_rejected") {
        if (target.slot === first) {
          target.slot = other;
          log.warn("regulator_credentials_switched", { dependency: target.dependency, from: SLOT_NAMES[first], to: SLOT_NAMES[other] });
        }
      }
      result = second;
    }
    if (!result.ok && result.failure.kind === "credentials_rejected") {
      // The immediate signal (spec §6 "rejected internal credentials"): no staged pair is accepted.
      log.error("regulator_credentials_rejected", {
        requestId: ctx.requestId,
        dependency: target.dependency,
        operation: logOperation,
        upstreamStatus: result.failure.upstreamStatus,
        alert: "immediate",
      });
      options.alerts?.raise({ signal: "regulator_credentials_rejected", dependency: target.dependency, operation: logOperation, failureClass: "credentials_rejected", requestId: ctx.requestId });
    }
    return result;
  }

  async function attempt<T>(
    target: Target,
    slot: number,
    operation: RegulatorOperation,
    logOperation: string,
    wire: Wire,
    interpret: (raw: RawResponse) => Interpreted<T>,
    ctx: RegulatorCallContext,
  ): Promise<Interpreted<T>> {
    const started = performance.now();
    let report: CallReport | undefined;
    let exchange: Exchange<T> | undefined;
    let result: Interpreted<T>;
    try {
      exchange = await target.policy.execute(
        (deadline) => _exchange(target, credentialHeaders[slot]!, wire, ctx, deadline, maxResponseBytes).then((raw) => ({ raw, interpreted: interpret(raw) })),
        {
          classify: _classifyExchange<T>,
          observe: (r) => {
            report = r;
          },
        },
      );
      result = exchange.interpreted;
    } catch (error) {
      result = { ok: false, failure: _failureOf(error) };
    }
    const outcome = _logCall(callEvent, {
      dependency: target.dependency,
      operation: logOperation,
      ctx,
      latencyMs: performance.now() - started,
      result,
      mutation: _isMutation(operation),
      raw: exchange?.raw,
      circuitState: report?.circuitState ?? target.policy.snapshot().state,
      outcome: report?.outcome,
      contractVersion: target.contractVersion,
      credentials: credentialHeaders.length > 1 ? SLOT_NAMES[slot] : undefined,
    });
    if (options.onCall) {
      try {
        const event: RegulatorCallEvent = { dependency: target.dependency, operation: logOperation, outcome };
        if (!result.ok) event.failureClass = regulatorFailureClass(result.failure);
        if (typeof ctx?.requestId === "string") event.requestId = ctx.requestId;
        options.onCall(event);
      } catch {
        // metrics and alerts must not change the call's outcome
      }
    }
    return result;
  }

  const client: HttpRegulatorClient = {
    async authenticate(state: RegulatorState, login: TaxpayerLogin, ctx: RegulatorCallContext): Promise<RegulatorAuthResult> {
      const email = login?.email;
      const password = login?.password;
      if (typeof email !== "string" || email.trim() === "" || typeof password !== "string" || password === "") {
        throw gwError("GW_REG_CREDENTIALS_REQUIRED", { detail: "regulatorCredentials needs a non-empty email and password." });
      }
      const wire: Wire = {
        method: "POST",
        path: "/api/v1/utilities/authenticate",
        body: JSON.stringify({ email, password }),
        contentType: JSON_TYPE,
      };
      const r = await call(state, "authenticate", "authenticate", wire, _interpretAuth, ctx);
      if (r.ok) return r.value;
      throw mapRegulatorFailure(r.failure, "authenticate");
    },

    async getEntity(state: RegulatorState, entityId: string, ctx: RegulatorCallContext): Promise<RegulatorEntity> {
      _check(typeof entityId === "string" && entityId !== "", "getEntity needs a non-empty entity id");
      const wire: Wire = { method: "GET", path: `/api/v1/entity/${encodeURIComponent(entityId)}` };
      const r = await call(state, "getEntity", "getEntity", wire, (raw) => _interpretEntity(raw, entityId), ctx);
      if (r.ok) return r.value;
      throw mapRegulatorFailure(r.failure, "getEntity");
    },

    async validateIrn(state: RegulatorState, body: IrnValidationRequest, ctx: RegulatorCallContext): Promise<ValidationOutcome> {
      const wire: Wire = {
        method: "POST",
        path: "/api/v1/invoice/irn/validate",
        body: JSON.stringify({ invoice_reference: body.invoice_reference, business_id: body.business_id, irn: body.irn }),
        contentType: JSON_TYPE,
      };
      return _validation(await call(state, "validateIrn", "validateIrn", wire, _interpretOk(_any2xx), ctx), "validateIrn");
    },

    async validateInvoice(state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<ValidationOutcome> {
      const wire: Wire = { method: "POST", path: "/api/v1/invoice/validate", body: _documentBody(invoiceDocument), contentType: JSON_TYPE };
      return _validation(await call(state, "validateInvoice", "validateInvoice", wire, _interpretOk(_any2xx), ctx), "validateInvoice");
    },

    async sign(state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<SignOutcome> {
      const wire: Wire = { method: "POST", path: "/api/v1/invoice/sign", body: _documentBody(invoiceDocument), contentType: JSON_TYPE };
      const r = await call(state, "sign", "sign", wire, _interpretOk((code) => code === 201), ctx);
      if (r.ok) return { kind: "signed", response: r.value };
      return _mutationFailure(r.failure, "sign");
    },

    async transmit(state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<TransmitOutcome> {
      _check(typeof irn === "string" && irn !== "", "transmit needs a non-empty IRN");
      const wire: Wire = { method: "POST", path: `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, body: "{}", contentType: JSON_TYPE };
      const r = await call(state, "transmit", "transmit", wire, _interpretOk((code) => code === 200 || code === 201), ctx);
      if (r.ok) return { kind: "transmitted", response: r.value };
      return _mutationFailure(r.failure, "transmit");
    },

    async confirm(state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<InvoiceConfirmation> {
      _check(typeof irn === "string" && irn !== "", "confirm needs a non-empty IRN");
      const wire: Wire = { method: "GET", path: `/api/v1/invoice/confirm/${encodeURIComponent(irn)}` };
      const r = await call(state, "relay", "confirm", wire, _interpretOk(_any2xx, false), ctx);
      if (r.ok) return { kind: "found" };
      // Only the regulator's own "no such invoice" (404 in its error envelope) proves it is not there.
      if (r.failure.kind === "rejected" && r.failure.reason === "not_found") return { kind: "not_found" };
      return { kind: "unknown", failureClass: regulatorFailureClass(r.failure) };
    },

    describe() {
      return [...targets.values()].map((t) => ({
        state: t.state,
        dependency: t.dependency,
        contractVersion: t.contractVersion,
        interfaceVersion: REGULATOR_ADAPTERS[t.contractVersion]!.interfaceVersion,
        credentials: SLOT_NAMES[t.slot]!,
        staged: credentialHeaders.length > 1,
      }));
    },

    async relay(state: RegulatorState, request: RelayRequest, ctx: RegulatorCallContext): Promise<RegulatorResponse> {
      const wire = _relayWire(request);
      const operation = request.operation !== undefined && OPERATION_NAME.test(request.operation) ? request.operation : _relayOperation(request.path);
      const r = await call(state, "relay", operation, wire, _interpretRelay, ctx);
      if (r.ok) return r.value;
      throw mapRegulatorFailure(r.failure, "relay");
    },

    async close(): Promise<void> {
      await Promise.all([...pools.values()].map((p) => p.close().catch(() => p.destroy())));
    },
  };
  return client;
}

// --- Internal helpers ---

const JSON_TYPE = "application/json";
const OPERATION_NAME = /^[A-Za-z0-9._:-]{1,64}$/;
const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** The regulator's wording when it refuses the deployment's key or secret ("unable to validate api key"). */
const API_KEY_TEXT = /\bapi[\s_-]?(?:key|secret)\b/i;
/** The transmission precondition ("webhook url is not setup"). */
const WEBHOOK_TEXT = /\bwebhook\b/i;
/** Response headers that may be passed through to the caller (spec §4.2 rule 3). */
const SAFE_RESPONSE_HEADERS = ["content-disposition", "content-language", "etag", "last-modified"] as const;
/** Error codes that prove the request never left: the connection was never established. */
const NOT_DISPATCHED_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_INVALID_ARG",
  "UND_ERR_CLOSED",
  "UND_ERR_DESTROYED",
  "ERR_INVALID_URL",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
]);

interface Target {
  state: RegulatorState;
  dependency: string;
  policy: DependencyPolicy;
  pool: Pool;
  basePath: string;
  contractVersion: string;
  /** Which credential pair is in use: 0 current, 1 next (after the regulator rejected the current one). */
  slot: number;
}

const SLOT_NAMES = ["current", "next"] as const;

interface Wire {
  method: string;
  /** Path (and query) below the base URL. */
  path: string;
  body?: Uint8Array | string;
  contentType?: string;
}

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  tooLarge: boolean;
}

type Interpreted<T> = { ok: true; value: T } | { ok: false; failure: RegulatorFailure };

interface Exchange<T> {
  raw: RawResponse;
  interpreted: Interpreted<T>;
}

/**
 * One HTTP exchange on the target's pool, the body read whole (at most `maxBytes`: past it, the
 * exchange is cut and answers `tooLarge`). Through undici's `dispatch` with a small handler rather
 * than `request()`: no body stream, no async iterator, no AbortSignal per call (the deadline aborts
 * the exchange through `onExpire`); a relayed read went from 85 to 63 µs of CPU (docs/bench.md, issue 12).
 */
function _exchange(
  target: Target,
  baseHeaders: readonly string[],
  wire: Wire,
  ctx: RegulatorCallContext,
  deadline: CallDeadline,
  maxBytes: number,
): Promise<RawResponse> {
  const headers = baseHeaders.slice();
  if (typeof ctx?.requestId === "string" && REQUEST_ID.test(ctx.requestId)) headers.push("x-request-id", ctx.requestId);
  if (wire.body !== undefined) headers.push("content-type", wire.contentType ?? JSON_TYPE);
  return new Promise<RawResponse>((resolve, reject) => {
    target.pool.dispatch(
      { method: wire.method as Dispatcher.HttpMethod, path: target.basePath + wire.path, headers, body: wire.body ?? null },
      new _ExchangeHandler(resolve, reject, deadline, maxBytes),
    );
  });
}

/** Collects one response for `_exchange`; settles its promise once. */
class _ExchangeHandler implements Dispatcher.DispatchHandler {
  #status = 0;
  #headers: RawResponse["headers"] = {};
  #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;

  constructor(
    private readonly resolve: (raw: RawResponse) => void,
    private readonly reject: (error: unknown) => void,
    private readonly deadline: CallDeadline,
    private readonly maxBytes: number,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    // The policy's deadline passed (it has answered the caller already): stop the exchange.
    this.deadline.onExpire(() => controller.abort(DEADLINE_ABORT));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: Record<string, string | string[]>): void {
    if (statusCode < 200) return; // 1xx: the final answer follows
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    if (this.#size > this.maxBytes) {
      // Too large: answered as such, and the exchange (its socket) is cut.
      this.#settle();
      this.resolve({ status: this.#status, headers: this.#headers, body: new Uint8Array(0), tooLarge: true });
      controller.abort(TOO_LARGE_ABORT);
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    const body = new Uint8Array(this.#size); // a copy of its own: never a view of a socket's buffer
    let offset = 0;
    for (const c of this.#chunks) {
      body.set(c, offset);
      offset += c.length;
    }
    this.#settle();
    this.resolve({ status: this.#status, headers: this.#headers, body, tooLarge: false });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.reject(error);
  }

  #settle(): void {
    this.#settled = true;
    this.#chunks = [];
  }
}

/** Why an exchange was cut (never seen by a caller: its answer is settled before the abort). */
const DEADLINE_ABORT = Object.assign(new Error("the regulator call's deadline passed"), { name: "AbortError" });
const TOO_LARGE_ABORT = new Error("the regulator's answer is larger than the limit");

/** How the policy counts an exchange: by its interpreted answer. */
function _classifyExchange<T>(x: Exchange<T>): ResultVerdict {
  return _verdict(x.interpreted);
}

/** A thrown error → the failure: the policy's timeout and refusal, or a transport error. */
function _failureOf(error: unknown): RegulatorFailure {
  if (isDependencyUnavailableError(error)) {
    if (error.failureClass === "circuit_open") return { kind: "circuit_open" };
    if (error.failureClass === "timeout") return { kind: "timeout" };
    return { kind: "transport", dispatched: true };
  }
  const e = typeof error === "object" && error !== null ? (error as { code?: unknown; name?: unknown }) : {};
  // The only abort source while the exchange runs is the policy's deadline, which answers first (a
  // DependencyUnavailableError "timeout", above); an abort seen here is that deadline all the same.
  if (e.name === "AbortError" || e.name === "TimeoutError" || e.code === "UND_ERR_ABORTED") {
    return { kind: "timeout" };
  }
  const code = e.code;
  if (typeof code === "string" && (NOT_DISPATCHED_CODES.has(code) || code.startsWith("ERR_TLS_") || code.startsWith("CERT_"))) {
    return { kind: "transport", dispatched: false };
  }
  // Reset, "other side closed", anything else: the request may have been (partly) sent.
  return { kind: "transport", dispatched: true };
}

function _verdict<T>(r: Interpreted<T>): ResultVerdict {
  if (r.ok) return "success";
  return regulatorFailureCounts(r.failure) ? { verdict: "failure", failureClass: regulatorFailureClass(r.failure) } : "neutral";
}

function _isMutation(operation: RegulatorOperation): boolean {
  return operation === "sign" || operation === "transmit";
}

function _dependencyName(state: unknown): string {
  return state === "TEST" || state === "LIVE" ? `regulator:${state}` : "regulator:unknown";
}

// --- Interpretation of answers ---

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

function _isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

type Envelope = { ok: true; data: Record<string, unknown> } | { ok: false; failure: RegulatorFailure };

/**
 * A 2xx answer's `{ code, data }` envelope: `code` accepted by `acceptCode`, `data` an object. Anything
 * else is an invalid answer (empty, not JSON, renamed or unrecognised envelope, too large).
 */
function _successEnvelope(raw: RawResponse, acceptCode: (code: number) => boolean): Envelope {
  const invalid = (reason: InvalidResponseReason): Envelope => ({
    ok: false,
    failure: { kind: "invalid_response", reason, upstreamStatus: raw.status },
  });
  if (raw.tooLarge) return invalid("response_too_large");
  const parsed = _parse(raw);
  if (parsed.kind === "empty") return invalid("empty_body");
  if (parsed.kind === "malformed") return invalid("malformed_body");
  const v = parsed.value;
  if (!_isObject(v) || typeof v.code !== "number" || !acceptCode(v.code) || !_isObject(v.data)) {
    return invalid("unrecognized_envelope");
  }
  return { ok: true, data: v.data };
}

const _any2xx = (code: number): boolean => code >= 200 && code <= 299;

/** Validate / sign / transmit: success only with an accepted `code` and `data.ok === true` (when `needsOk`). */
function _interpretOk(acceptCode: (code: number) => boolean, needsOk = true): (raw: RawResponse) => Interpreted<RegulatorResponse> {
  return (raw) => {
    if (raw.status < 200 || raw.status > 299) return { ok: false, failure: _errorFailure(raw, "other") };
    const env = _successEnvelope(raw, acceptCode);
    if (!env.ok) return env;
    if (needsOk && env.data.ok !== true) {
      return { ok: false, failure: { kind: "invalid_response", reason: "not_ok", upstreamStatus: raw.status } };
    }
    return { ok: true, value: _response(raw) };
  };
}

function _interpretRelay(raw: RawResponse): Interpreted<RegulatorResponse> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: _errorFailure(raw, "other") };
  if (raw.tooLarge) return { ok: false, failure: { kind: "invalid_response", reason: "response_too_large", upstreamStatus: raw.status } };
  return { ok: true, value: _response(raw) };
}

function _interpretAuth(raw: RawResponse): Interpreted<RegulatorAuthResult> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: _errorFailure(raw, "authenticate") };
  const env = _successEnvelope(raw, _any2xx);
  if (!env.ok) return env;
  const entityId = env.data.entity_id;
  if (typeof entityId !== "string" || entityId === "" || entityId.length > ENTITY_LIMITS.idLength) {
    return { ok: false, failure: { kind: "invalid_response", reason: "unrecognized_envelope", upstreamStatus: raw.status } };
  }
  return { ok: true, value: { entityId } };
}

function _interpretEntity(raw: RawResponse, requestedId: string): Interpreted<RegulatorEntity> {
  if (raw.status < 200 || raw.status > 299) return { ok: false, failure: _errorFailure(raw, "other") };
  const env = _successEnvelope(raw, _any2xx);
  if (!env.ok) return env;
  const parsed = _parseEntity(env.data, requestedId);
  if (typeof parsed === "string") return { ok: false, failure: { kind: "entity_metadata", problem: parsed } };
  return { ok: true, value: parsed };
}

/**
 * The fields the gateway needs, checked one by one; "invalid" wins over "unsupported". The real answer
 * (`id, reference, custom_settings, created_at, updated_at, businesses[], is_active, app_reference`;
 * per business `id, reference, name?, …, tin, sector, annual_turnover, support_peppol, …, irn_template,
 * is_active`) carries no `service_id`: it is derived from the template.
 */
function _parseEntity(d: Record<string, unknown>, requestedId: string): RegulatorEntity | "invalid" | "unsupported" {
  const L = ENTITY_LIMITS;
  let invalid = false;
  let unsupported = false;
  const str = (v: unknown, max: number, nonEmpty: boolean): string => {
    if (typeof v !== "string" || (nonEmpty && v === "")) {
      invalid = true;
      return "";
    }
    if (v.length > max) unsupported = true;
    return v;
  };
  const bool = (v: unknown): boolean => {
    if (typeof v !== "boolean") invalid = true;
    return v === true;
  };

  const id = str(d.id, L.idLength, true);
  if (id !== "" && id !== requestedId) invalid = true;
  const reference = str(d.reference, L.referenceLength, false);
  const active = bool(d.is_active);
  const businesses: RegulatorBusiness[] = [];
  if (!Array.isArray(d.businesses)) invalid = true;
  else if (d.businesses.length > L.businesses) unsupported = true;
  else {
    const seen = new Set<string>();
    for (const b of d.businesses) {
      if (!_isObject(b)) {
        invalid = true;
        continue;
      }
      const bid = str(b.id, L.businessIdLength, true);
      if (seen.has(bid)) invalid = true;
      seen.add(bid);
      let irnTemplate: string | null = null;
      let serviceId: string | null = null;
      if (b.irn_template !== undefined && b.irn_template !== null && b.irn_template !== "") {
        irnTemplate = str(b.irn_template, L.irnTemplateLength, true);
        // The service ID lives in the template: one without it where the IRN format needs it is malformed
        // metadata (an over-long one is already "unsupported").
        serviceId = serviceIdOfTemplate(irnTemplate);
        if (serviceId === null && irnTemplate.length <= L.irnTemplateLength) invalid = true;
      }
      businesses.push({
        id: bid,
        name: b.name === undefined || b.name === null ? "" : str(b.name, L.businessNameLength, false),
        tin: str(b.tin, L.tinLength, true),
        irnTemplate,
        serviceId,
        active: bool(b.is_active),
      });
    }
  }
  if (invalid) return "invalid";
  if (unsupported) return "unsupported";
  return { id, reference, active, businesses };
}

/**
 * A non-2xx answer → the failure, from the status, the envelope's structure and (two cases) its text.
 * `op` "authenticate": a 401/403 whose message does not name the API key is the taxpayer's login, not
 * the deployment's credentials.
 */
function _errorFailure(raw: RawResponse, op: "authenticate" | "other"): RegulatorFailure {
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
  if (parsed.kind !== "ok" || !_isObject(parsed.value)) return null;
  const v = parsed.value;
  const message = typeof v.message === "string" ? v.message : "";
  if (_isObject(v.error)) {
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

function _response(raw: RawResponse): RegulatorResponse {
  const ct = raw.headers["content-type"];
  const contentType = typeof ct === "string" && ct !== "" ? ct : "application/octet-stream";
  const headers: Record<string, string> = {};
  for (const name of SAFE_RESPONSE_HEADERS) {
    const v = raw.headers[name];
    if (typeof v === "string" && !/[\r\n]/.test(v)) headers[name] = v;
  }
  return { status: raw.status, contentType, body: raw.body, headers };
}

// --- Outcomes ---

function _validation(r: Interpreted<RegulatorResponse>, operation: RegulatorOperation): ValidationOutcome {
  if (r.ok) return { kind: "valid", response: r.value };
  if (r.failure.kind === "rejected") return r.failure;
  throw mapRegulatorFailure(r.failure, operation);
}

type MutationDisposition = { kind: "rejected"; rejection: RegulatorRejection } | { kind: "ambiguous"; reason: AmbiguousReason; upstreamStatus?: number } | { kind: "not_performed" };

/**
 * sign / transmit failures: a rejection, an ambiguous result, or (throwing) "certainly not performed":
 * nothing called (no base URL, circuit open), no connection, the deployment's credentials refused, the
 * regulator's router knows no such path, throttled.
 */
function _disposition(f: RegulatorFailure): MutationDisposition {
  switch (f.kind) {
    case "rejected":
      return { kind: "rejected", rejection: f };
    case "not_configured":
    case "circuit_open":
    case "credentials_rejected":
    case "route_not_found":
    case "rate_limited":
      return { kind: "not_performed" };
    case "transport":
      return f.dispatched ? { kind: "ambiguous", reason: "connection_lost" } : { kind: "not_performed" };
    case "timeout":
      return { kind: "ambiguous", reason: "timeout", ...(f.upstreamStatus === undefined ? {} : { upstreamStatus: f.upstreamStatus }) };
    case "server_error":
      return { kind: "ambiguous", reason: "server_error", upstreamStatus: f.upstreamStatus };
    case "redirect":
      return { kind: "ambiguous", reason: "redirect", upstreamStatus: f.upstreamStatus };
    case "invalid_response":
      return { kind: "ambiguous", reason: f.reason, upstreamStatus: f.upstreamStatus };
    case "entity_metadata":
      return { kind: "ambiguous", reason: "unrecognized_envelope" };
  }
}

function _mutationFailure(f: RegulatorFailure, operation: "sign" | "transmit"): RegulatorRejection | { kind: "ambiguous"; reason: AmbiguousReason; upstreamStatus?: number } {
  const d = _disposition(f);
  if (d.kind === "rejected") return d.rejection;
  if (d.kind === "ambiguous") return { kind: "ambiguous", reason: d.reason, ...(d.upstreamStatus === undefined ? {} : { upstreamStatus: d.upstreamStatus }) };
  throw mapRegulatorFailure(f, operation);
}

// --- Requests ---

function _documentBody(doc: InvoiceDocument): Uint8Array | string {
  if (doc instanceof Uint8Array || typeof doc === "string") return doc;
  _check(_isObject(doc), "an invoice document must be bytes, a string or a JSON object");
  return JSON.stringify(doc);
}

const RELAY_METHODS = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const RELAY_PATH_CHARS = /^[A-Za-z0-9\-._~%!$&'()*+,;=:@/]+$/;
const RELAY_PATH_TRAVERSAL = /\/\/|\/\.{1,2}(\/|$)|%2e|%2f|%5c/i;

function _relayWire(request: RelayRequest): Wire {
  const { method, path } = request;
  _check(RELAY_METHODS.has(method), `relay method must be one of ${[...RELAY_METHODS].join(", ")}`);
  _check(
    typeof path === "string" && path.startsWith("/api/v1/") && path.length <= 2048 && RELAY_PATH_CHARS.test(path) && !RELAY_PATH_TRAVERSAL.test(path),
    "relay path must be a plain regulator path under /api/v1/ (encoded parameters, no query, no dot segments)",
  );
  let query = "";
  if (request.query !== undefined) {
    const params = request.query instanceof URLSearchParams ? request.query : new URLSearchParams();
    if (!(request.query instanceof URLSearchParams)) {
      for (const [k, v] of Object.entries(request.query)) {
        if (v === undefined) continue;
        for (const item of Array.isArray(v) ? v : [v]) params.append(k, String(item));
      }
    }
    const text = params.toString();
    if (text !== "") query = `?${text}`;
  }
  const wire: Wire = { method, path: path + query };
  if (request.body !== undefined) {
    _check(method === "POST" || method === "PUT" || method === "PATCH", "relay body only on POST, PUT or PATCH");
    const b = request.body;
    wire.body = b instanceof Uint8Array || typeof b === "string" ? b : JSON.stringify(b);
    wire.contentType = request.contentType ?? JSON_TYPE;
  }
  return wire;
}

/** The log name of a direct route, from its path (the path itself is never logged: it holds IRNs). */
function _relayOperation(path: string): string {
  const m = /^\/api\/v1\/invoice\/(resources|confirm|download|update|irn)\//.exec(path);
  if (!m) return "relay";
  return m[1] === "irn" ? "relay.irn-validate" : `relay.${m[1]}`;
}

function _parseBaseUrl(raw: string, state: RegulatorState): { origin: string; basePath: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RangeError(`[regulator] baseUrls.${state} is not a valid URL`);
  }
  _check(url.protocol === "http:" || url.protocol === "https:", `baseUrls.${state} must be http(s)`);
  _check(url.username === "" && url.password === "" && url.search === "" && url.hash === "", `baseUrls.${state} must not carry credentials, a query or a fragment`);
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, "") };
}

// --- Logging ---

interface CallLog<T> {
  dependency: string;
  operation: string;
  ctx: RegulatorCallContext;
  latencyMs: number;
  result: Interpreted<T>;
  mutation: boolean;
  raw?: RawResponse;
  circuitState?: string;
  outcome?: CallReport["outcome"];
  contractVersion?: string;
  /** Which staged credential pair was used ("current" / "next"), when a next pair is staged. */
  credentials?: string;
}

/** The fields of `gateway_dependency_call`, in order (spec §6; `_logCall` leaves out those that do not apply). */
const CALL_FIELDS = [
  "requestId", "dependency", "operation", "latencyMs", "upstreamStatus", "outcome", "contractVersion", "adapterVersion",
  "stagedPair", "failureClass", "rejectionReason", "invalidReason", "result", "providerCorrelationId", "circuitState",
] as const;
/** Its fields that take few values (their JSON is remembered by the logger). */
const CALL_REPEATING = ["dependency", "operation", "outcome", "contractVersion", "adapterVersion", "failureClass", "circuitState"];

/** One `gateway_dependency_call` (spec §6): no body, path, query, credential or upstream message. Returns the outcome. */
function _logCall<T>(event: EventShape, c: CallLog<T>): CallReport["outcome"] {
  const { result } = c;
  const failure = result.ok ? undefined : result.failure;
  const outcome = c.outcome ?? (failure ? "refused" : "success");
  // The regulator's per-request error.id when it sent one, else its x-request-id header.
  const correlation = failure?.kind === "rejected" && failure.errorId !== null ? failure.errorId : c.raw?.headers["x-request-id"];
  const values = [
    c.ctx?.requestId,
    c.dependency,
    c.operation,
    Math.round(c.latencyMs * 10) / 10,
    c.raw?.status ?? null,
    outcome,
    REGULATOR_ADAPTERS[c.contractVersion ?? "v1"]?.interfaceVersion ?? null,
    c.contractVersion ?? "v1",
    c.credentials,
    failure ? regulatorFailureClass(failure) : undefined,
    failure?.kind === "rejected" ? failure.reason : undefined,
    failure?.kind === "invalid_response" ? failure.reason : undefined,
    c.mutation ? (failure ? _disposition(failure).kind : "succeeded") : undefined,
    typeof correlation === "string" && REQUEST_ID.test(correlation) ? correlation : undefined,
    c.circuitState,
  ];
  try {
    if (outcome === "failure" || outcome === "refused") event.warn(values);
    else event.event(values);
  } catch {
    // Logging must not change the call's outcome.
  }
  return outcome;
}

function _check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RangeError(`[regulator] ${message}`);
}
