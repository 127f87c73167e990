import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../adapters/coordination/memory.ts";
import { guardCoordination, guardDocumentStore, safeErrorMessage, type DependencyCallEvent } from "../../adapters/guarded-stores.ts";
import { createDependencyPolicy, type DependencyPolicy } from "../../adapters/policies.ts";
import {
  InvalidQueryError,
  isInvalidQueryError,
  DependencyUnavailableError,
  DuplicateKeyError,
  isDependencyUnavailableError,
  type Collection,
  type CoordinationStore,
  type Doc,
  type DocumentStore,
  type FindPage,
} from "../../adapters/ports.ts";
import { manualClock } from "../support/manual-clock.ts";

const SECRET_URI = "mongodb://gatehouse:s3cretPassw0rd@db.internal:27017/gatehouse?authSource=admin";

interface Item extends Doc {
  n: number;
}

/** A minimal Map-backed DocumentStore with a fault switch and a count of calls that reached it. */
function tinyStore(): { store: DocumentStore; fault: { error: unknown; hang: boolean }; touched: { n: number } } {
  const fault: { error: unknown; hang: boolean } = { error: null, hang: false };
  const touched = { n: 0 };
  const data = new Map<string, Map<string, Doc>>();
  const collections = new Map<string, Collection<Doc>>();

  const enter = async (): Promise<void> => {
    touched.n += 1;
    if (fault.hang) await new Promise<never>(() => {});
    if (fault.error) throw fault.error;
  };

  function make(name: string): Collection<Doc> {
    const docs = data.get(name) ?? new Map<string, Doc>();
    data.set(name, docs);
    const match = (d: Doc, filter: Record<string, unknown>) => Object.entries(filter).every(([k, v]) => d[k] === v);
    return {
      name,
      async insert(doc) {
        await enter();
        if (docs.has(doc._id)) throw new DuplicateKeyError(name, "_id");
        docs.set(doc._id, structuredClone(doc));
        return doc;
      },
      async insertMany(many) {
        await enter();
        for (const doc of many) docs.set(doc._id, structuredClone(doc));
        return many.length;
      },
      async get(id) {
        await enter();
        return docs.get(id) ?? null;
      },
      async findOne(filter) {
        await enter();
        return [...docs.values()].find((d) => match(d, filter)) ?? null;
      },
      async find(filter): Promise<FindPage<Doc>> {
        await enter();
        return { items: [...docs.values()].filter((d) => match(d, filter)), nextCursor: null };
      },
      async count(filter) {
        await enter();
        return [...docs.values()].filter((d) => match(d, filter)).length;
      },
      async findOneAndUpdate(filter, update) {
        await enter();
        const d = [...docs.values()].find((x) => match(x, filter));
        if (!d) return null;
        Object.assign(d, update.$set ?? {});
        return d;
      },
      async updateOne(filter, update) {
        await enter();
        const d = [...docs.values()].find((x) => match(x, filter));
        if (!d) return false;
        Object.assign(d, update.$set ?? {});
        return true;
      },
      async delete(id) {
        await enter();
        return docs.delete(id);
      },
      async deleteMany(filter) {
        await enter();
        let n = 0;
        for (const d of [...docs.values()]) if (match(d, filter) && docs.delete(d._id)) n += 1;
        return n;
      },
      async claim(filter, owner, leaseMs) {
        await enter();
        const d = [...docs.values()].find((x) => match(x, filter));
        if (!d) return null;
        const lease = { owner, until: Date.now() + leaseMs };
        d.lease = lease;
        return { ...d, lease };
      },
      async release(id, owner) {
        await enter();
        const d = docs.get(id);
        if (!d || (d.lease as { owner?: string } | undefined)?.owner !== owner) return false;
        delete d.lease;
        return true;
      },
    };
  }

  const store: DocumentStore = {
    kind: "tiny",
    collection<T extends Doc>(name: string): Collection<T> {
      const c = collections.get(name) ?? make(name);
      collections.set(name, c);
      return c as unknown as Collection<T>;
    },
    ping: () => enter(),
    close: async () => {
      touched.n += 1;
    },
  };
  return { store, fault, touched };
}

function storePolicy(clock = manualClock(), timeoutMs = 2_000): DependencyPolicy {
  return createDependencyPolicy({ dependency: "document-store", timeoutMs, clock });
}

async function caught(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error("expected a rejection");
}

// ---------------------------------------------------------------------------
const docs = suite("guarded-stores: document store");

docs("passes results through and reports each call", async () => {
  const { store } = tinyStore();
  const events: DependencyCallEvent[] = [];
  const guarded = guardDocumentStore(store, storePolicy(), { onCall: (e) => events.push(e) });
  assert.is(guarded.kind, "tiny");
  const items = guarded.collection<Item>("items");
  assert.is(items.name, "items");
  assert.is(guarded.collection<Item>("items"), items, "one wrapper per underlying collection");
  await items.insert({ _id: "a", n: 1 });
  await items.insert({ _id: "b", n: 2 });
  assert.equal(await items.get("a"), { _id: "a", n: 1 });
  assert.is(await items.count({}), 2);
  assert.equal((await items.find({ n: 2 })).items, [{ _id: "b", n: 2 }]);
  assert.equal(await items.findOneAndUpdate({ _id: "a" }, { $set: { n: 5 } }), { _id: "a", n: 5 });
  assert.is((await items.claim({ _id: "b" }, "w1", 1_000))?.lease.owner, "w1");
  assert.is(await items.release("b", "w1"), true);
  assert.is(await items.delete("a"), true);
  assert.is(await items.deleteMany({}), 1);
  await guarded.ping();
  assert.equal(
    events.map((e) => e.operation),
    [
      "items.insert",
      "items.insert",
      "items.get",
      "items.count",
      "items.find",
      "items.findOneAndUpdate",
      "items.claim",
      "items.release",
      "items.delete",
      "items.deleteMany",
      "ping",
    ],
  );
  assert.equal(events[0], {
    dependency: "document-store",
    operation: "items.insert",
    latencyMs: 0,
    outcome: "ok",
    circuitState: "closed",
  });
});

docs("errors come out as DependencyUnavailableError without secrets", async () => {
  const { store, fault } = tinyStore();
  const events: DependencyCallEvent[] = [];
  const guarded = guardDocumentStore(store, storePolicy(), { onCall: (e) => events.push(e) });
  const cause = Object.assign(new Error(`connection to ${SECRET_URI} refused (password=hunter2)`), {
    name: "MongoNetworkError",
    uri: SECRET_URI,
  });
  fault.error = cause;
  const e = await caught(guarded.collection<Item>("items").insert({ _id: "x", n: 1 }));
  assert.ok(isDependencyUnavailableError(e));
  const err = e as DependencyUnavailableError;
  assert.is.not(err, cause);
  assert.is(err.dependency, "document-store");
  assert.is(err.failureClass, "transport");
  assert.ok(err.message.startsWith("items.insert failed: connection to "), err.message);
  const everything = JSON.stringify({ message: err.message, stack: err.stack, own: { ...err }, events });
  for (const secret of ["s3cretPassw0rd", "hunter2", "mongodb://", "db.internal", "gatehouse:"]) {
    assert.not.ok(everything.includes(secret), `leaked ${secret}: ${everything}`);
  }
  assert.equal(events, [
    {
      dependency: "document-store",
      operation: "items.insert",
      latencyMs: 0,
      outcome: "failure",
      failureClass: "transport",
      circuitState: "closed",
    },
  ]);
  // ping too
  assert.ok(isDependencyUnavailableError(await caught(guarded.ping())));
});

docs("an adapter's DependencyUnavailableError keeps its class, gains the dependency name", async () => {
  const { store, fault } = tinyStore();
  const guarded = guardDocumentStore(store, storePolicy());
  fault.error = new DependencyUnavailableError("mongodb", "server selection: 503 from primary", "server_error");
  const err = (await caught(guarded.collection<Item>("items").get("x"))) as DependencyUnavailableError;
  assert.is(err.dependency, "document-store");
  assert.is(err.failureClass, "server_error");
  assert.is(err.message, "items.get failed: server selection: 503 from primary");
});

docs("DuplicateKeyError passes through untouched and does not trip the circuit", async () => {
  const { store } = tinyStore();
  const policy = storePolicy();
  const events: DependencyCallEvent[] = [];
  const items = guardDocumentStore(store, policy, { onCall: (e) => events.push(e) }).collection<Item>("items");
  await items.insert({ _id: "dup", n: 0 });
  for (let i = 0; i < 40; i++) {
    const e = await caught(items.insert({ _id: "dup", n: i }));
    assert.instance(e, DuplicateKeyError);
    assert.is((e as DuplicateKeyError).collection, "items");
  }
  const s = policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowFailures, 0);
  assert.is(s.windowCalls, 1);
  assert.is(events.at(-1)?.outcome, "ok");
  assert.is(events.at(-1)?.failureClass, undefined);
});

docs("InvalidQueryError (a caller bug) passes through untouched and does not trip the circuit", async () => {
  const { store, fault } = tinyStore();
  const policy = storePolicy();
  const items = guardDocumentStore(store, policy).collection<Item>("items");
  fault.error = new InvalidQueryError("unknown operator $where");
  for (let i = 0; i < 40; i++) {
    const e = await caught(items.find({ n: i }));
    assert.ok(isInvalidQueryError(e), "the caller sees the typed error, not DependencyUnavailableError");
  }
  const s = policy.snapshot();
  assert.is(s.state, "closed");
  assert.is(s.windowFailures, 0);
});

docs("the circuit opens after the threshold, then refuses without touching the store", async () => {
  const clock = manualClock();
  const { store, fault, touched } = tinyStore();
  const policy = storePolicy(clock);
  const events: DependencyCallEvent[] = [];
  const guarded = guardDocumentStore(store, policy, { onCall: (e) => events.push(e) });
  const items = guarded.collection<Item>("items");
  fault.error = new Error("connect ECONNREFUSED 10.0.0.5:27017");
  for (let i = 0; i < 19; i++) await caught(items.get("x"));
  assert.is(policy.snapshot().state, "closed");
  await caught(items.get("x"));
  assert.is(policy.snapshot().state, "open");
  assert.is(touched.n, 20);

  fault.error = null; // the store is back, but the circuit has not waited yet
  for (const call of [() => items.insert({ _id: "y", n: 1 }), () => items.find({}), () => guarded.ping()]) {
    const e = (await caught(call())) as DependencyUnavailableError;
    assert.ok(isDependencyUnavailableError(e));
    assert.is(e.failureClass, "circuit_open");
    assert.is(e.message, "circuit open");
    assert.is(e.dependency, "document-store");
  }
  assert.is(touched.n, 20, "refused calls never reached the store");
  assert.equal(events.at(-1), {
    dependency: "document-store",
    operation: "ping",
    latencyMs: 0,
    outcome: "failure",
    failureClass: "circuit_open",
    circuitState: "open",
  });

  clock.advance(30_000);
  assert.is(await items.get("nothing"), null); // the probe
  assert.is(policy.snapshot().state, "closed");
  assert.is(touched.n, 21);
});

docs("close bypasses an open circuit", async () => {
  const { store, fault, touched } = tinyStore();
  const policy = storePolicy();
  const guarded = guardDocumentStore(store, policy);
  fault.error = new Error("down");
  for (let i = 0; i < 20; i++) await caught(guarded.ping());
  assert.is(policy.snapshot().state, "open");
  await guarded.close();
  assert.is(touched.n, 21);
});

docs("a hanging store call times out (real 20 ms)", async () => {
  const { store, fault } = tinyStore();
  const guarded = guardDocumentStore(store, storePolicy(manualClock(), 20));
  fault.hang = true;
  const e = (await caught(guarded.collection<Item>("items").count({}))) as DependencyUnavailableError;
  assert.ok(isDependencyUnavailableError(e));
  assert.is(e.failureClass, "timeout");
  assert.is(e.message, "timed out after 20ms");
});

docs.run();

// ---------------------------------------------------------------------------
const coord = suite("guarded-stores: coordination");

function _throws(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.unreachable("expected a synchronous throw");
  return undefined;
}

/** The in-process coordination with a fault switch in front of it. */
function faultyCoordination(): { store: CoordinationStore; fault: { error: unknown }; touched: { n: number } } {
  const inner = createMemoryCoordination();
  const fault: { error: unknown } = { error: null };
  const touched = { n: 0 };
  const gate = async <T>(fn: () => Promise<T>): Promise<T> => {
    touched.n += 1;
    if (fault.error) throw fault.error;
    return fn();
  };
  const store: CoordinationStore = {
    kind: inner.kind,
    takePermit: (k, l, w) => gate(() => inner.takePermit(k, l, w)),
    acquireLease: (k, o, t) => gate(() => inner.acquireLease(k, o, t)),
    releaseLease: (k, o) => gate(() => inner.releaseLease(k, o)),
    adjustInFlight: (k, d, t) => gate(() => inner.adjustInFlight(k, d, t)),
    publish: (c, m) => gate(() => inner.publish(c, m)),
    subscribe: (c, h) => gate(() => inner.subscribe(c, h)),
    ping: () => gate(() => inner.ping()),
    close: () => inner.close(),
  };
  return { store, fault, touched };
}

coord("passes through to the in-process coordination", async () => {
  const { store } = faultyCoordination();
  const events: DependencyCallEvent[] = [];
  const policy = createDependencyPolicy({ dependency: "coordination", timeoutMs: 1_000, clock: manualClock() });
  const guarded = guardCoordination(store, policy, { onCall: (e) => events.push(e) });
  assert.is(guarded.kind, "memory");
  assert.is((await guarded.takePermit("tenant-a:sign", 2, 60_000)).allowed, true);
  assert.is((await guarded.takePermit("tenant-a:sign", 2, 60_000)).allowed, true);
  assert.is((await guarded.takePermit("tenant-a:sign", 2, 60_000)).allowed, false);
  assert.is(await guarded.acquireLease("job", "w1", 1_000), true);
  assert.is(await guarded.acquireLease("job", "w2", 1_000), false);
  assert.is(await guarded.releaseLease("job", "w1"), true);
  assert.is(await guarded.adjustInFlight("inflight", 1, 1_000), 1);
  await guarded.ping();
  assert.equal(
    events.map((e) => [e.operation, e.outcome]),
    [
      ["takePermit", "ok"],
      ["takePermit", "ok"],
      ["takePermit", "ok"],
      ["acquireLease", "ok"],
      ["acquireLease", "ok"],
      ["releaseLease", "ok"],
      ["adjustInFlight", "ok"],
      ["ping", "ok"],
    ],
  );
  assert.not.ok(JSON.stringify(events).includes("tenant-a"), "keys are not logged");
  await guarded.close();
});

coord("errors translate, the circuit opens, then refuses without touching the store", async () => {
  const { store, fault, touched } = faultyCoordination();
  const policy = createDependencyPolicy({ dependency: "coordination", timeoutMs: 1_000, clock: manualClock() });
  const events: DependencyCallEvent[] = [];
  const guarded = guardCoordination(store, policy, { onCall: (e) => events.push(e) });
  fault.error = Object.assign(new Error("connect ECONNREFUSED redis://:r3disPass@cache.internal:6379"), {
    code: "ECONNREFUSED",
  });
  const first = (await caught(guarded.takePermit("k", 5, 1_000))) as DependencyUnavailableError;
  assert.ok(isDependencyUnavailableError(first));
  assert.is(first.dependency, "coordination");
  assert.is(first.failureClass, "transport");
  assert.not.ok(first.message.includes("r3disPass"), first.message);
  assert.not.ok(first.message.includes("redis://"), first.message);
  for (let i = 0; i < 19; i++) await caught(guarded.adjustInFlight("k", 1, 1_000));
  assert.is(policy.snapshot().state, "open");
  assert.is(touched.n, 20);
  fault.error = null;
  const refused = (await caught(guarded.acquireLease("k", "w", 1_000))) as DependencyUnavailableError;
  assert.is(refused.failureClass, "circuit_open");
  assert.is(touched.n, 20);
  assert.is(events.length, 21);
  assert.not.ok(JSON.stringify(events).includes("r3disPass"));
  await guarded.close();
});

coord("the in-process fast path: takePermitNow through the same circuit, only for a store that answers synchronously and a policy without deadline", async () => {
  const inner = createMemoryCoordination();
  const fault: { error: unknown } = { error: null };
  const touched = { n: 0 };
  // The in-process store with a fault switch in front of its synchronous variant.
  const store: CoordinationStore = {
    ...inner,
    kind: inner.kind,
    takePermitNow(k, l, w) {
      touched.n += 1;
      if (fault.error) throw fault.error;
      return inner.takePermitNow!(k, l, w);
    },
  };
  const events: DependencyCallEvent[] = [];
  const policy = createDependencyPolicy({ dependency: "coordination", timeoutMs: Number.POSITIVE_INFINITY, clock: manualClock() });
  const guarded = guardCoordination(store, policy, { onCall: (e) => events.push(e) });
  assert.type(guarded.takePermitNow, "function");
  const r = guarded.takePermitNow!("tenant-a:sign", 1, 60_000);
  assert.not.ok((r as unknown) instanceof Promise, "answered synchronously");
  assert.equal(r, { allowed: true, remaining: 0, retryAfterMs: 0 });
  assert.is(guarded.takePermitNow!("tenant-a:sign", 1, 60_000).allowed, false, "the same counter");
  assert.equal(events.map((e) => [e.operation, e.outcome]), [["takePermit", "ok"], ["takePermit", "ok"]], "one dependency call event each, as the asynchronous path");
  fault.error = Object.assign(new Error("boom redis://:r3disPass@cache:6379"), { code: "ECONNRESET" });
  const first = _throws(() => guarded.takePermitNow!("k", 5, 1_000)) as DependencyUnavailableError;
  assert.ok(isDependencyUnavailableError(first), "thrown synchronously, translated");
  assert.is(first.failureClass, "transport");
  assert.not.ok(first.message.includes("r3disPass"));
  for (let i = 0; i < 19; i++) _throws(() => guarded.takePermitNow!("k", 5, 1_000));
  assert.is(policy.snapshot().state, "open", "its failures count");
  fault.error = null;
  const before = touched.n;
  assert.is((_throws(() => guarded.takePermitNow!("k", 5, 1_000)) as DependencyUnavailableError).failureClass, "circuit_open");
  assert.is(touched.n, before, "refused without touching the store");

  // No synchronous variant where the store has none, or where the policy has a deadline.
  const { store: asyncOnly } = faultyCoordination();
  assert.is(guardCoordination(asyncOnly, createDependencyPolicy({ dependency: "c2", timeoutMs: Number.POSITIVE_INFINITY })).takePermitNow, undefined);
  assert.is(guardCoordination(inner, createDependencyPolicy({ dependency: "c3", timeoutMs: 1_000 })).takePermitNow, undefined);
  await inner.close();
});

coord.run();

// ---------------------------------------------------------------------------
const messages = suite("guarded-stores: safeErrorMessage");

messages("removes URIs, credentials and tokens", () => {
  const cases: [unknown, string[]][] = [
    [new Error(`failed ${SECRET_URI}`), ["s3cretPassw0rd", "mongodb://"]],
    [new Error("auth failed for admin:pa55@10.0.0.1:27017"), ["pa55"]],
    [new Error("bad password=hunter2; retry"), ["hunter2"]],
    [new Error('config {"token": "tok_123"}'), ["tok_123"]],
    [new Error("Authorization: Bearer eyJhbGciOi.abc.def"), ["eyJhbGciOi"]],
    [new Error("api_key=AKIA1234 rejected"), ["AKIA1234"]],
  ];
  for (const [error, secrets] of cases) {
    const msg = safeErrorMessage(error);
    for (const s of secrets) assert.not.ok(msg.includes(s), `${s} in ${msg}`);
  }
  assert.is(safeErrorMessage(new Error("connect ECONNREFUSED 127.0.0.1:6379")), "connect ECONNREFUSED 127.0.0.1:6379");
  assert.is(safeErrorMessage("plain"), "plain");
  assert.is(safeErrorMessage(42), "unknown error");
  assert.is(safeErrorMessage(new Error("x".repeat(500))).length, 200);
});

messages.run();
