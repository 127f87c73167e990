/**
 * The regulator client's transport: one target per configured state, one HTTP exchange on its pool,
 * and what a thrown transport error means.
 *
 * - the base URL comes from the business state (`baseUrls.TEST` / `baseUrls.LIVE`); a state without
 *   one has no target (the call is GW_REGULATOR_UNAVAILABLE, and nothing is called);
 * - one undici Pool per base-URL origin, keep-alive (ARCHITECTURE.md §8: ~4× global fetch);
 * - one dependency policy per state ("regulator:TEST", "regulator:LIVE") from the injected
 *   PolicyRegistry: the per-call deadline and the §3.5 circuit (run by ./call.ts);
 * - the deployment's own credentials as `x-api-key` + `x-api-secret`, the deployment's signed hop
 *   marker for the target's host as `X-Service-Gateway-Hop` (core/http/hop.ts), and the gateway's
 *   request id as `x-request-id` (correlation only);
 * - redirects are never followed (undici's dispatch does not follow them; a 3xx is a contract failure).
 */
import { Pool, type Dispatcher } from "undici";
import type { CallDeadline, DependencyPolicy } from "../../policies.ts";
import { isDependencyUnavailableError } from "../../ports.ts";
import { createHopMarker, HOP_HEADER } from "../../../core/http/hop.ts";
import { REGULATOR_ADAPTERS, REGULATOR_ADAPTER_VERSIONS } from "../port.ts";
import type { RegulatorCallContext, RegulatorFailure, RegulatorState, RegulatorTargetInfo } from "../port.ts";
import { check, type HttpRegulatorClientOptions } from "./options.ts";

export const JSON_TYPE = "application/json";
/** A token safe to send or log as a correlation id (x-request-id, the regulator's error.id). */
export const REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
/** Log names of the credential pairs, by slot. */
export const SLOT_NAMES = ["current", "next"] as const;

/** One configured state: where its calls go and the policy they run under. */
export interface Target {
  state: RegulatorState;
  dependency: string;
  policy: DependencyPolicy;
  pool: Pool;
  basePath: string;
  contractVersion: string;
  /** Which credential pair is in use: 0 current, 1 next (after the regulator rejected the current one). */
  slot: number;
  /** The deployment's hop marker for this target's host (made per call: it carries the time). */
  hop: () => string;
}

/** One outbound request. */
export interface Wire {
  method: string;
  /** Path (and query) below the base URL. */
  path: string;
  body?: Uint8Array | string;
  contentType?: string;
}

/** One answer, as received (the body read whole, or cut when over the size limit). */
export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
  tooLarge: boolean;
}

/** The configured states' targets, and the pools behind them (one per origin). */
export interface Targets {
  targets: Map<RegulatorState, Target>;
  pools: Map<string, Pool>;
}

/** The credential pairs' request headers as undici's flat [name, value, …] lists: [current, next?], built once. */
export function credentialHeaders(options: HttpRegulatorClientOptions): readonly (readonly string[])[] {
  const next = options.next;
  return [_headersOf(options.apiKey, options.apiSecret), ...(next ? [_headersOf(next.apiKey, next.apiSecret)] : [])];
}

/** One target per state with a base URL; an unsupported contract version stops the client's creation. */
export function createTargets(options: HttpRegulatorClientOptions, timeoutMs: number): Targets {
  const pools = new Map<string, Pool>();
  const targets = new Map<RegulatorState, Target>();
  // Keyed by the deployment secret (config `regulator.apiSecret`), as the routing-loop stage's check is.
  const markers = options.hopMarker ?? createHopMarker(options.apiSecret);
  for (const state of ["TEST", "LIVE"] as const) {
    const raw = options.baseUrls[state];
    if (raw === undefined || raw === "") continue;
    const { origin, basePath } = _parseBaseUrl(raw, state);
    let pool = pools.get(origin);
    if (!pool) {
      pool = _createPool(origin, options, timeoutMs);
      pools.set(origin, pool);
    }
    const dependency = `regulator:${state}`;
    const contractVersion = options.contractVersions?.[state] ?? "v1";
    // Spec §9: an unsupported version prevents the integration from starting.
    check(
      REGULATOR_ADAPTER_VERSIONS.includes(contractVersion),
      `contract version "${String(contractVersion).slice(0, 16)}" of ${state} is not supported by this adapter (${REGULATOR_ADAPTER_VERSIONS.join(", ")})`,
    );
    // One policy per state, shared by every client built on the same registry (the circuit is the
    // dependency's, not the client's).
    const policy = options.policies.get(dependency) ?? options.policies.create({ dependency, timeoutMs });
    const host = new URL(origin).host;
    targets.set(state, { state, dependency, policy, pool, basePath, contractVersion, slot: 0, hop: () => markers.forHost(host) });
  }
  return { pools, targets };
}

/** Per configured state: contract adapter version, interface version, the credentials in use (health). */
export function describeTargets(targets: Map<RegulatorState, Target>, staged: boolean): RegulatorTargetInfo[] {
  return [...targets.values()].map((t) => ({
    state: t.state,
    dependency: t.dependency,
    contractVersion: t.contractVersion,
    interfaceVersion: REGULATOR_ADAPTERS[t.contractVersion]!.interfaceVersion,
    credentials: SLOT_NAMES[t.slot]!,
    staged,
  }));
}

export async function closePools(pools: Map<string, Pool>): Promise<void> {
  await Promise.all([...pools.values()].map((p) => p.close().catch(() => p.destroy())));
}

/**
 * One HTTP exchange on the target's pool, the body read whole (at most `maxBytes`: past it, the
 * exchange is cut and answers `tooLarge`). Through undici's `dispatch` with a small handler rather
 * than `request()`: no body stream, no async iterator, no AbortSignal per call (the deadline aborts
 * the exchange through `onExpire`); measured in docs/bench.md.
 */
export function exchange(
  target: Target,
  baseHeaders: readonly string[],
  wire: Wire,
  ctx: RegulatorCallContext,
  deadline: CallDeadline,
  maxBytes: number,
): Promise<RawResponse> {
  const headers = baseHeaders.slice();
  headers.push(HOP_HEADER, target.hop());
  if (typeof ctx?.requestId === "string" && REQUEST_ID.test(ctx.requestId)) headers.push("x-request-id", ctx.requestId);
  if (wire.body !== undefined) headers.push("content-type", wire.contentType ?? JSON_TYPE);
  return new Promise<RawResponse>((resolve, reject) => {
    target.pool.dispatch(
      { method: wire.method as Dispatcher.HttpMethod, path: target.basePath + wire.path, headers, body: wire.body ?? null },
      new _ExchangeHandler(resolve, reject, deadline, maxBytes),
    );
  });
}

/** A thrown error → the failure: the policy's timeout and refusal, or a transport error. */
export function failureOf(error: unknown): RegulatorFailure {
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

// --- Internal helpers ---

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

/** Why an exchange was cut (never seen by a caller: its answer is settled before the abort). */
const DEADLINE_ABORT = Object.assign(new Error("the regulator call's deadline passed"), { name: "AbortError" });
const TOO_LARGE_ABORT = new Error("the regulator's answer is larger than the limit");

function _headersOf(key: string, secret: string): readonly string[] {
  return ["x-api-key", key, "x-api-secret", secret, "accept", "application/json"];
}

function _createPool(origin: string, options: HttpRegulatorClientOptions, timeoutMs: number): Pool {
  return new Pool(origin, {
    connections: options.connections ?? 128,
    pipelining: 1,
    ...(options.keepAliveTimeoutMs === undefined ? {} : { keepAliveTimeout: options.keepAliveTimeoutMs }),
    connect: { timeout: options.connectTimeoutMs ?? Math.min(timeoutMs, 5_000) },
  });
}

function _parseBaseUrl(raw: string, state: RegulatorState): { origin: string; basePath: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new RangeError(`[regulator] baseUrls.${state} is not a valid URL`);
  }
  check(url.protocol === "http:" || url.protocol === "https:", `baseUrls.${state} must be http(s)`);
  check(url.username === "" && url.password === "" && url.search === "" && url.hash === "", `baseUrls.${state} must not carry credentials, a query or a fragment`);
  return { origin: url.origin, basePath: url.pathname.replace(/\/+$/, "") };
}

/** Collects one response for `exchange`; settles its promise once. */
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
