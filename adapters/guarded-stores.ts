/**
 * Guarded stores: a DocumentStore or CoordinationStore whose every call goes through the dependency's
 * resilience policy (adapters/policies.ts, spec §3.5). The composition root wraps the chosen adapter
 * once; stages and plugins only ever see the guarded port.
 *
 * - Every data method (each collection method, `ping`, every coordination method, `subscribe` once) runs through
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
 * - The in-process fast path: when the adapter answers an operation synchronously (`takePermitNow`,
 *   `countNow`: the embedded stores) and the policy has no deadline (in-process stores get none,
 *   boot/compose.ts), the guarded store offers it too, through `policy.executeNow`: the same circuit,
 *   counting and `onCall` event, without a promise. Otherwise the `…Now` member is absent and callers
 *   use the asynchronous operation.
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
  type Filter,
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
  const now = _nowCaller(policy, options);
  const ping = call("ping");
  const wrapped = new WeakMap<object, Collection<Doc>>();

  return {
    kind: store.kind,

    collection<T extends Doc>(name: string, spec?: CollectionSpec): Collection<T> {
      const inner = store.collection<T>(name, spec);
      const known = wrapped.get(inner) as Collection<T> | undefined;
      if (known) return known;
      const guarded = _guardCollection(inner, call, now);
      wrapped.set(inner, guarded as unknown as Collection<Doc>);
      return guarded;
    },

    ping: () => ping(() => store.ping()),
    // The engine's own figures: an observation for health, not a dependency call (no circuit, no count).
    ...(store.stats ? { stats: () => store.stats!() } : {}),
    close: () => _close(store, policy),
  };
}

export function guardCoordination(
  store: CoordinationStore,
  policy: DependencyPolicy,
  options: GuardOptions = {},
): CoordinationStore {
  const call = _caller(policy, options);
  const now = _nowCaller(policy, options);
  const takePermitNow = now && store.takePermitNow ? now("takePermit") : null;
  const takePermit = call("takePermit");
  const acquireLease = call("acquireLease");
  const releaseLease = call("releaseLease");
  const adjustInFlight = call("adjustInFlight");
  const publish = call("publish");
  const subscribe = call("subscribe");
  const ping = call("ping");
  return {
    kind: store.kind,
    takePermit: (key, limit, windowMs) => takePermit(() => store.takePermit(key, limit, windowMs)),
    ...(takePermitNow ? { takePermitNow: (key: string, limit: number, windowMs: number) => takePermitNow(() => store.takePermitNow!(key, limit, windowMs)) } : {}),
    acquireLease: (key, owner, ttlMs) => acquireLease(() => store.acquireLease(key, owner, ttlMs)),
    releaseLease: (key, owner) => releaseLease(() => store.releaseLease(key, owner)),
    adjustInFlight: (key, delta, ttlMs) => adjustInFlight(() => store.adjustInFlight(key, delta, ttlMs)),
    publish: (channel, message) => publish(() => store.publish(channel, message)),
    // Setting up a subscription is one call; the messages it delivers later are not calls.
    subscribe: (channel, handlers) => subscribe(() => store.subscribe(channel, handlers)),
    ping: () => ping(() => store.ping()),
    close: () => _close(store, policy),
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

/** Runs one call of an operation through the policy. */
type _OperationCall = <T>(fn: () => Promise<T>) => Promise<T>;
/** Binds an operation name once, when the store or collection is wrapped (nothing per call beyond the call itself). */
type _Call = (operation: string) => _OperationCall;

function _caller(policy: DependencyPolicy, options: GuardOptions): _Call {
  return (operation) => {
    const executeOptions = _observer(options, operation);
    return async function guardedCall<T>(fn: () => Promise<T>): Promise<T> {
      try {
        return await policy.execute(fn, executeOptions);
      } catch (error) {
        throw _translate(policy, operation, error);
      }
    };
  };
}

/** Runs one synchronous call of an operation through the policy (`policy.executeNow`). */
type _OperationCallNow = <T>(fn: () => T) => T;
type _CallNow = (operation: string) => _OperationCallNow;

/** The synchronous caller, or null when the policy has a deadline (synchronous work could not keep it). */
function _nowCaller(policy: DependencyPolicy, options: GuardOptions): _CallNow | null {
  if (Number.isFinite(policy.timeoutMs)) return null;
  return (operation) => {
    const executeOptions = _observer(options, operation);
    return function guardedCallNow<T>(fn: () => T): T {
      try {
        return policy.executeNow(fn, executeOptions);
      } catch (error) {
        throw _translate(policy, operation, error);
      }
    };
  };
}

/** The execute options that hand each call's report to `onCall` as an event of `operation`. */
function _observer(options: GuardOptions, operation: string): { observe(report: CallReport): void } | undefined {
  const { onCall } = options;
  return onCall ? { observe: (report: CallReport) => onCall(_toEvent(report, operation)) } : undefined;
}

async function _close(store: { close(): Promise<void> }, policy: DependencyPolicy): Promise<void> {
  try {
    await store.close();
  } catch (error) {
    throw _translate(policy, "close", error);
  }
}

function _guardCollection<T extends Doc>(inner: Collection<T>, call: _Call, now: _CallNow | null): Collection<T> {
  const op = (method: string): _OperationCall => call(`${inner.name}.${method}`);
  const countNow = now && inner.countNow ? now(`${inner.name}.count`) : null;
  const insert = op("insert");
  const insertMany = op("insertMany");
  const get = op("get");
  const findOne = op("findOne");
  const find = op("find");
  const count = op("count");
  const findOneAndUpdate = op("findOneAndUpdate");
  const updateOne = op("updateOne");
  const del = op("delete");
  const deleteMany = op("deleteMany");
  const claim = op("claim");
  const release = op("release");
  return {
    name: inner.name,
    insert: (doc) => insert(() => inner.insert(doc)),
    insertMany: (docs) => insertMany(() => inner.insertMany(docs)),
    get: (id) => get(() => inner.get(id)),
    findOne: (filter) => findOne(() => inner.findOne(filter)),
    find: (filter, options) => find(() => inner.find(filter, options)),
    count: (filter) => count(() => inner.count(filter)),
    ...(countNow ? { countNow: (filter: Filter) => countNow(() => inner.countNow!(filter)) } : {}),
    findOneAndUpdate: (filter, update, options) => findOneAndUpdate(() => inner.findOneAndUpdate(filter, update, options)),
    updateOne: (filter, update) => updateOne(() => inner.updateOne(filter, update)),
    delete: (id) => del(() => inner.delete(id)),
    deleteMany: (filter) => deleteMany(() => inner.deleteMany(filter)),
    claim: (filter, owner, leaseMs, sort) => claim(() => inner.claim(filter, owner, leaseMs, sort)),
    release: (id, owner) => release(() => inner.release(id, owner)),
  };
}

function _toEvent(report: CallReport, operation: string): DependencyCallEvent {
  const failed = report.outcome === "failure" || report.outcome === "refused";
  const { dependency, latencyMs, failureClass, circuitState } = report;
  if (!failed) return { dependency, operation, latencyMs, outcome: "ok", circuitState };
  return failureClass === undefined
    ? { dependency, operation, latencyMs, outcome: "failure", circuitState }
    : { dependency, operation, latencyMs, outcome: "failure", failureClass, circuitState };
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
