/**
 * One HTTP exchange over undici (the client's only dependency): build the request, send it once, and
 * turn the answer into the route's success or a typed error. Retrying is not done here
 * (client/retry.ts decides; undici's own request() never retries).
 *
 * Construction knobs for deployments and test topologies: a base URL, a `host` that overrides the
 * Host header (reach `passthrough.demo.localhost` through 127.0.0.1, or a service behind nginx), a
 * custom undici Dispatcher (Agent, Pool, MockAgent, interceptors), extra headers, a per-send timeout.
 */
import { randomUUID } from "node:crypto";
import { request, type Dispatcher } from "undici";
import {
  CollectionsApiError,
  ConnectionError,
  ProblemError,
  UnexpectedResponseError,
  type ErrorContext,
} from "./errors.ts";
import {
  DEFAULT_RETRY,
  REAL_RUNTIME,
  parseRetryAfter,
  runWithRetries,
  type AttemptRecord,
  type OperationSpec,
  type RetryOptions,
  type RetryRuntime,
  type RunResult,
  type Sent,
} from "./retry.ts";
import type { Problem } from "./types.ts";

export interface ConnectionOptions {
  /** Where to connect, e.g. "http://127.0.0.1:3000" (no trailing path). */
  baseUrl: string;
  /** Host header to send (an approved gateway hostname) when it differs from the base URL's host. */
  host?: string;
  /** An undici Dispatcher (Agent, Pool, ProxyAgent, MockAgent, a composed interceptor). */
  dispatcher?: Dispatcher;
  /** Per-send timeout for the answer's headers and between body chunks. Default 30 000 ms. */
  timeoutMs?: number;
  /** Headers added to every request (a trusted edge's secret in a test topology, a User-Agent). */
  headers?: Record<string, string>;
  retry?: RetryOptions;
  /** Clock, sleep and jitter (tests and topologies inject their own). */
  runtime?: Partial<RetryRuntime>;
  /**
   * Called after every send, before the client retries, returns or throws (spec §7.1 rule 3: store
   * requestId with the key and attempt number). Also the way to observe retries (`record.next`).
   */
  onAttempt?: (record: AttemptRecord) => void | Promise<void>;
  /** New idempotency keys (one per logical operation). Default `${prefix}-${randomUUID()}`. */
  newIdempotencyKey?: () => string;
  /** Prefix of generated idempotency keys. Default "gh". */
  idempotencyKeyPrefix?: string;
}

/** Options of one call. */
export interface CallOptions {
  /**
   * The operation's idempotency key. Omit it for a new operation (the client generates one and
   * reuses it for every retry); pass the persisted key to resume an operation after a crash.
   */
  idempotencyKey?: string;
  /** Caller correlation id sent as X-Request-ID (spec §4.1: not the authoritative id). */
  requestId?: string;
  /** Retry limits for this call only. */
  retry?: RetryOptions;
}

/** What a method returns: the typed body and everything support may ask about. */
export interface Result<T> {
  data: T;
  status: number;
  /** The gateway's authoritative request id of the answer (X-Request-ID). */
  requestId: string | null;
  /** Request ids of every send, oldest first. */
  requestIds: string[];
  /** HTTP sends the operation took (1 = no retry). */
  sends: number;
  idempotencyKey: string | null;
  /** x-attempt-number of a Pass-through sign. */
  attemptNumber: number | null;
}

/** How the success body is read. */
export type Expect =
  /** JSON of the gateway or the collections envelope. */
  | "json"
  /** A regulator answer relayed as it came: JSON when it says so, else the text. */
  | "relayed";

export interface RouteCall {
  op: OperationSpec;
  method: "GET" | "POST" | "PATCH";
  /** Path with parameters already encoded (use `path` below). */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  headers?: Record<string, string>;
  body?: unknown;
  /** Send an idempotency key (mutations). */
  keyed?: boolean;
  attemptNumber?: number;
  expect?: Expect;
  /** Extra success check (a sign must be a confirmed success, spec §3.2). Returns why it is not. */
  check?: (data: unknown) => string | null;
}

export type Service = "gateway" | "collections";

/** The connection of one client: the request builder and the retry runner. */
export interface Connection {
  call<T>(route: RouteCall, options?: CallOptions): Promise<Result<T>>;
  newIdempotencyKey(): string;
}

export function createConnection(service: Service, auth: Record<string, string>, o: ConnectionOptions): Connection {
  const base = new URL(o.baseUrl);
  if (base.pathname !== "/" || base.search || base.hash) throw new TypeError("baseUrl must be an origin such as http://127.0.0.1:3000");
  const origin = base.origin;
  const runtime: RetryRuntime = { ...REAL_RUNTIME, ...o.runtime };
  const retry = { ...DEFAULT_RETRY, ...o.retry };
  const timeoutMs = o.timeoutMs ?? 30_000;
  const prefix = o.idempotencyKeyPrefix ?? "gh";
  const newKey = o.newIdempotencyKey ?? (() => `${prefix}-${randomUUID()}`);
  const fixedHeaders: Record<string, string> = { accept: "application/json", ...o.headers, ...auth };
  if (o.host) fixedHeaders.host = o.host;

  async function call<T>(route: RouteCall, options: CallOptions = {}): Promise<Result<T>> {
    const idempotencyKey = route.keyed ? (options.idempotencyKey ?? newKey()) : null;
    const attemptNumber = route.attemptNumber ?? null;
    const url = origin + route.path + _query(route.query);
    const headers: Record<string, string> = { ...fixedHeaders, ...route.headers };
    if (idempotencyKey) headers["x-idempotency-key"] = idempotencyKey;
    if (attemptNumber !== null) headers["x-attempt-number"] = String(attemptNumber);
    if (options.requestId) headers["x-request-id"] = options.requestId;
    // The content is serialised once: every retry sends exactly the same bytes (SAME_IDEMPOTENCY_KEY).
    let body: string | undefined;
    if (route.body !== undefined) {
      body = JSON.stringify(route.body);
      headers["content-type"] = "application/json";
    }
    const context: ErrorContext = { operation: route.op.name, method: route.method, path: route.path, idempotencyKey, attemptNumber };
    const send = (): Promise<Sent<T>> => _exchange<T>(service, context, route, url, headers, body, o.dispatcher, timeoutMs, runtime);
    const run: RunResult<T> = await runWithRetries(
      {
        op: route.op,
        method: route.method,
        path: route.path,
        idempotencyKey,
        attemptNumber,
        options: { ...retry, ...options.retry },
        runtime,
        ...(o.onAttempt ? { onAttempt: o.onAttempt } : {}),
      },
      send,
    );
    return { data: run.data, status: run.status, requestId: run.requestId, requestIds: run.requestIds, sends: run.sends, idempotencyKey, attemptNumber };
  }

  return { call, newIdempotencyKey: newKey };
}

/** A path with its parameters percent-encoded: path`/invoices/${id}/transmit`. */
export function path(strings: TemplateStringsArray, ...params: Array<string | number>): string {
  return strings.reduce((out, s, i) => out + s + (i < params.length ? encodeURIComponent(String(params[i])) : ""), "");
}

// --- Internal helpers ---

/** undici/Node codes of a connection that never opened: the request certainly was not sent. */
const NOT_SENT = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "UND_ERR_CONNECT_TIMEOUT"]);

async function _exchange<T>(
  service: Service,
  context: ErrorContext,
  route: RouteCall,
  url: string,
  headers: Record<string, string>,
  body: string | undefined,
  dispatcher: Dispatcher | undefined,
  timeoutMs: number,
  runtime: RetryRuntime,
): Promise<Sent<T>> {
  let res: Dispatcher.ResponseData;
  let text: string;
  try {
    res = await request(url, {
      method: route.method,
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      ...(dispatcher ? { dispatcher } : {}),
    });
    text = await res.body.text();
  } catch (e) {
    const code = _transportCode(e);
    throw new ConnectionError(context, e, code !== null && NOT_SENT.has(code), code);
  }
  const status = res.statusCode;
  const contentType = _header(res.headers, "content-type") ?? "";
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase();
  const requestId = _header(res.headers, "x-request-id") ?? null;
  const retryAfter = parseRetryAfter(_header(res.headers, "retry-after"), runtime.now());
  const unexpected = (why: string) => new UnexpectedResponseError(context, status, contentType, text, requestId, why);

  if (status >= 200 && status < 300) {
    let data: unknown = text;
    if (mediaType === "application/json" || mediaType.endsWith("+json")) {
      try {
        data = text === "" ? null : JSON.parse(text);
      } catch {
        throw unexpected("the success answer is not valid JSON");
      }
    } else if ((route.expect ?? "json") === "json") throw unexpected(`the success answer is ${mediaType || "untyped"}, not JSON`);
    const why = route.check?.(data);
    if (why) throw unexpected(why);
    return { status, requestId, data: data as T };
  }
  // spec §7.1 rule 1: only application/problem+json is a gateway error.
  if (service === "gateway" && mediaType === "application/problem+json") {
    const problem = _json(text) as Problem | null;
    if (!problem || typeof problem.code !== "string" || typeof problem.retry?.strategy !== "string")
      throw unexpected("a problem+json answer without code or retry.strategy");
    throw new ProblemError(context, status, problem, retryAfter);
  }
  if (service === "collections" && mediaType === "application/json") {
    const envelope = _json(text) as CollectionsApiError["envelope"] | null;
    if (envelope && typeof envelope.message === "string" && envelope.statusCode === status)
      throw new CollectionsApiError(context, status, { ...envelope, errors: envelope.errors ?? [] }, retryAfter);
  }
  throw unexpected("not an error answer of the service (a proxy or load balancer may have answered)");
}

function _query(query: RouteCall["query"]): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, value] of Object.entries(query)) if (value !== undefined) params.set(k, String(value));
  const text = params.toString();
  return text ? `?${text}` : "";
}

function _header(headers: Dispatcher.ResponseData["headers"], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(", ") : value;
}

function _json(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function _transportCode(e: unknown): string | null {
  for (let cur: unknown = e, depth = 0; cur && depth < 4; cur = (cur as { cause?: unknown }).cause, depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === "string") return code;
    const name = (cur as { name?: unknown }).name;
    if (name === "AbortError" || name === "TimeoutError") return name;
  }
  return null;
}
