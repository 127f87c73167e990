/**
 * Guarded stores: a DocumentStore or CoordinationStore whose every call goes through the dependency's
 * resilience policy (adapters/policies.ts, spec §3.5). The composition root wraps the chosen adapter
 * once; stages and plugins only ever see the guarded port.
 *
 * - Every data method (each collection method, `ping`, every coordination method) runs through
 *   `policy.execute`: refused while the circuit is open, bounded by the policy's timeout.
 *   `collection()` itself does no I/O and only wraps the collection it returns; `close()` bypasses the
 *   circuit so shutdown always releases the connection.
 * - DuplicateKeyError passes through untouched (a value to branch on, and neutral for the circuit).
 *   Every other error comes out as DependencyUnavailableError(policy.dependency, "<operation> failed:
 *   <message>", failureClass) with URIs (connection strings), credentials and tokens removed from the
 *   message; the original error is not attached (its fields may hold the connection string).
 * - `onCall` receives one `gateway_dependency_call` event per call: dependency, operation (collection
 *   name + method, or the coordination method), latency, outcome, failure class, circuit state. Never
 *   keys, filters, documents or messages.
 * - Stores do not take an AbortSignal, so a call that times out may still complete in the background;
 *   callers stay correct through unique keys and conditional updates (ARCHITECTURE.md §6).
 */
import type { CallReport, DependencyPolicy } from "./policies.ts";
import {
  DependencyUnavailableError,
  isDependencyUnavailableError,
  isDuplicateKeyError,
  isInvalidQueryError,
  type Collection,
  type CollectionSpec,
  type CoordinationStore,
  type Doc,
  type DocumentStore,
} from "./ports.ts";

export interface DependencyCallEvent {
  dependency: string;
  /** "invoices.insert", "ping", "takePermit"… */
  operation: string;
  latencyMs: number;
  /** "ok": the dependency answered (a DuplicateKeyError included); "failure": it did not, or was refused. */
  outcome: "ok" | "failure";
  failureClass?: string;
  circuitState: "closed" | "open" | "half_open";
}

export interface GuardOptions {
  /** For `gateway_dependency_call` logging by the caller; exceptions it throws are ignored. */
  onCall?: (event: DependencyCallEvent) => void;
}

export function guardDocumentStore(store: DocumentStore, policy: DependencyPolicy, options: GuardOptions = {}): DocumentStore {
  const call = _caller(policy, options);
  const wrapped = new WeakMap<object, Collection<Doc>>();

  return {
    kind: store.kind,

    collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T> {
      const inner = store.collection<T>(name, spec);
      const known = wrapped.get(inner) as Collection<T> | undefined;
      if (known) return known;
      const guarded = _guardCollection(inner, call);
      wrapped.set(inner, guarded as unknown as Collection<Doc>);
      return guarded;
    },

    ping: () => call("ping", () => store.ping()),

    async close(): Promise<void> {
      try {
        await store.close();
      } catch (error) {
        throw _translate(policy, "close", error);
      }
    },
  };
}

export function guardCoordination(
  store: CoordinationStore,
  policy: DependencyPolicy,
  options: GuardOptions = {},
): CoordinationStore {
  const call = _caller(policy, options);
  return {
    kind: store.kind,
    takePermit: (key, limit, windowMs) => call("takePermit", () => store.takePermit(key, limit, windowMs)),
    acquireLease: (key, owner, ttlMs) => call("acquireLease", () => store.acquireLease(key, owner, ttlMs)),
    releaseLease: (key, owner) => call("releaseLease", () => store.releaseLease(key, owner)),
    adjustInFlight: (key, delta, ttlMs) => call("adjustInFlight", () => store.adjustInFlight(key, delta, ttlMs)),
    ping: () => call("ping", () => store.ping()),
    async close(): Promise<void> {
      try {
        await store.close();
      } catch (error) {
        throw _translate(policy, "close", error);
      }
    },
  };
}

/**
 * An error's message made safe for logs and error bodies: URIs (connection strings) and `user:pass@host`
 * pairs removed, `password=…`/`token: …`/`Bearer …` values redacted, at most 200 characters.
 */
export function safeErrorMessage(error: unknown): string {
  const raw =
    typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string"
      ? (error as { message: string }).message
      : typeof error === "string"
        ? error
        : "unknown error";
  const cleaned = raw
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>,;]+/gi, "[uri]")
    .replace(/[^\s:/@'"]+:[^\s:/@'"]+@[^\s'"]+/g, "[credentials]")
    .replace(/\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+/gi, "$1 [redacted]")
    .replace(
      /\b(password|passwd|pwd|secret|token|api[-_]?key|authorization|auth)\b(["']?\s*[:=]\s*)(?!bearer\b|basic\b|\[)("[^"]*"|'[^']*'|[^\s,;&)\]}]+)/gi,
      "$1$2[redacted]",
    )
    .replace(/\s+/g, " ")
    .trim();
  const text = cleaned === "" ? "unknown error" : cleaned;
  return text.length > 200 ? `${text.slice(0, 199)}…` : text;
}

// --- Internal helpers ---

type _Call = <T>(operation: string, fn: () => Promise<T>) => Promise<T>;

function _caller(policy: DependencyPolicy, options: GuardOptions): _Call {
  const { onCall } = options;
  return async function guardedCall<T>(operation: string, fn: () => Promise<T>): Promise<T> {
    const observe = onCall ? (report: CallReport) => onCall(_toEvent(report, operation)) : undefined;
    try {
      return await policy.execute(() => fn(), observe ? { observe } : {});
    } catch (error) {
      throw _translate(policy, operation, error);
    }
  };
}

function _guardCollection<T extends Doc>(inner: Collection<T>, call: _Call): Collection<T> {
  const op = (method: string): string => `${inner.name}.${method}`;
  return {
    name: inner.name,
    insert: (doc) => call(op("insert"), () => inner.insert(doc)),
    get: (id) => call(op("get"), () => inner.get(id)),
    findOne: (filter) => call(op("findOne"), () => inner.findOne(filter)),
    find: (filter, options) => call(op("find"), () => inner.find(filter, options)),
    count: (filter) => call(op("count"), () => inner.count(filter)),
    findOneAndUpdate: (filter, update, options) =>
      call(op("findOneAndUpdate"), () => inner.findOneAndUpdate(filter, update, options)),
    delete: (id) => call(op("delete"), () => inner.delete(id)),
    deleteMany: (filter) => call(op("deleteMany"), () => inner.deleteMany(filter)),
    claim: (filter, owner, leaseMs, sort) => call(op("claim"), () => inner.claim(filter, owner, leaseMs, sort)),
    release: (id, owner) => call(op("release"), () => inner.release(id, owner)),
  };
}

function _toEvent(report: CallReport, operation: string): DependencyCallEvent {
  const failed = report.outcome === "failure" || report.outcome === "refused";
  return {
    dependency: report.dependency,
    operation,
    latencyMs: report.latencyMs,
    outcome: failed ? "failure" : "ok",
    ...(failed && report.failureClass !== undefined ? { failureClass: report.failureClass } : {}),
    circuitState: report.circuitState,
  };
}

const PORT_FAILURE_CLASSES = new Set<string>(["timeout", "transport", "circuit_open", "server_error", "invalid_response"]);

/**
 * DuplicateKeyError, and this dependency's own DependencyUnavailableError with a clean message (the
 * policy's refusals and timeouts), as they are; anything else translated.
 */
function _translate(policy: DependencyPolicy, operation: string, error: unknown): unknown {
  if (isDuplicateKeyError(error) || isInvalidQueryError(error)) return error;
  if (
    isDependencyUnavailableError(error) &&
    error.dependency === policy.dependency &&
    safeErrorMessage(error) === error.message
  ) {
    return error;
  }
  const c = policy.classify(error);
  const cls = c.verdict === "failure" && PORT_FAILURE_CLASSES.has(c.failureClass) ? c.failureClass : "transport";
  return new DependencyUnavailableError(
    policy.dependency,
    `${operation} failed: ${safeErrorMessage(error)}`,
    cls as DependencyUnavailableError["failureClass"],
  );
}
