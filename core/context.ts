/**
 * RequestContext: every slot a stage or handler reads or writes, declared up front with its
 * initial value (STYLE.md habit 8). One object per request, created by the dispatcher.
 */
import type { ServerRequest } from "srvx";
import type { CompiledRoute } from "./route-table.ts";
import type { BusinessState, DomainRecord, Mode, Principal } from "./directory.ts";

export type Service = "gateway" | "collections";
export type HostKind = "gateway" | "collections" | "unknown";

export interface RequestContext {
  /** Authoritative request id (X-Request-ID on every response). */
  readonly requestId: string;
  /** Caller-supplied X-Request-ID, once validated (correlation only). */
  callerRequestId: string | null;
  readonly startedAt: number;
  readonly req: ServerRequest;
  readonly method: string;
  /** Path in wire encoding, no query. */
  readonly path: string;
  /** Query string including "?", or "". Never logged. */
  readonly search: string;
  /** Canonical host (lower-case, no port, no trailing dot). */
  host: string;
  hostKind: HostKind;
  /** Which error shape this request answers in. */
  service: Service;
  domain: DomainRecord | null;
  /** Client address: socket peer (direct mode) or the edge's header (trusted mode). */
  clientAddress: string | null;
  route: CompiledRoute | null;
  params: Record<string, string>;
  principal: Principal | null;
  /** Business the request acts for (domain owner or bearer key owner). */
  businessId: string | null;
  state: BusinessState | null;
  mode: Mode | null;
  /** Parsed, validated input (filled after the pipeline, before the handler). */
  body: unknown;
  /** The body's bytes as received (signature checks over the exact bytes); null before it is read. */
  rawBody: Uint8Array | null;
  query: Record<string, string>;
  /** x-idempotency-key, validated before the handler on routes that declare `idempotent`; else null. */
  idempotencyKey: string | null;
  /** Public error code of the response, for the completion log. */
  errorCode: string | null;
  /** Run once when the response is done, on every exit path (capacity release). */
  finishers: Array<() => void>;
}

export function createRequestContext(req: ServerRequest, requestId: string, url: URL): RequestContext {
  return {
    requestId,
    callerRequestId: null,
    startedAt: performance.now(),
    req,
    method: req.method,
    path: url.pathname,
    search: url.search,
    host: "",
    hostKind: "unknown",
    service: "gateway",
    domain: null,
    clientAddress: null,
    route: null,
    params: {},
    principal: null,
    businessId: null,
    state: null,
    mode: null,
    body: undefined,
    rawBody: null,
    query: {},
    idempotencyKey: null,
    errorCode: null,
    finishers: [],
  };
}
