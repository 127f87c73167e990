/**
 * The client's retry policy (client/retry.ts) as a unit: each strategy of spec §7.2, both
 * exceptions, codeless failures, bounded attempts and time, jittered exponential backoff,
 * Retry-After / retry.afterSeconds, and the runner's persistence hook and key reuse. Problems are
 * built from the real catalog rows, so a catalog change shows here.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  CollectionsApiError,
  ConnectionError,
  ProblemError,
  UnexpectedResponseError,
  DEFAULT_RETRY,
  INVOICE_OPERATIONS as OP,
  backoffDelay,
  decide,
  parseRetryAfter,
  type AttemptRecord,
  type GatehouseError,
  type OperationSpec,
  type Problem,
} from "../../client/index.ts";
import { runWithRetries, type Sent } from "../../client/retry.ts";
import { CATALOG, type GwCode } from "../../core/errors/catalog.ts";

const CTX = { operation: "test.op", method: "POST", path: "/x", idempotencyKey: "key-00000001", attemptNumber: null };
const FIRST = { sends: 1, codelessRetries: 0, elapsedMs: 0 };
const HALF = () => 0.5;

function problem(code: GwCode, retryAfterHeader: number | null = null, extra: Partial<Problem> = {}): ProblemError {
  const row = CATALOG[code];
  const body = {
    type: "https://docs/x",
    title: row.title,
    status: row.status,
    statusCode: row.status,
    detail: row.description,
    message: row.description,
    instance: "urn:gatehouse:request:r1",
    code,
    requestId: "req-1",
    timestamp: new Date(0).toISOString(),
    action: { code: row.action, description: row.description, documentation: "https://docs/x" },
    retry: { strategy: row.strategy, sameIdempotencyKey: row.sameIdempotencyKey, ...("afterSeconds" in row ? { afterSeconds: row.afterSeconds } : {}) },
    path: "/x",
    ...extra,
  } as Problem;
  return new ProblemError(CTX, row.status, body, retryAfterHeader);
}

const lost = () => new ConnectionError(CTX, new Error("socket hang up"), false, "ECONNRESET");
const refused = () => new ConnectionError(CTX, new Error("connect ECONNREFUSED"), true, "ECONNREFUSED");
const proxy502 = () => new UnexpectedResponseError(CTX, 502, "text/html", "<html>bad gateway</html>", null, "not ours");
const envelope = (status: number, retryAfter: number | null = null) =>
  new CollectionsApiError(CTX, status, { requestId: "r", requestTimestamp: "t", message: "m", statusCode: status, errors: [] }, retryAfter);

const MUTATION: OperationSpec = { name: "m", kind: "mutation" };
const READ: OperationSpec = { name: "r", kind: "read" };
const decideFirst = (e: GatehouseError, op: OperationSpec) => decide(e, op, FIRST, DEFAULT_RETRY, HALF);

test("BACKOFF (429, capacity 503): retried, waiting at least Retry-After, else retry.afterSeconds", () => {
  const rate = decideFirst(problem("GW_RATE_LIMIT_EXCEEDED", 7), OP.sign);
  assert.equal(rate, { retry: true, delayMs: 7_000, codeless: false }, "Retry-After 7 s wins over a shorter backoff");
  const capacity = decideFirst(problem("GW_GATEWAY_CAPACITY_EXCEEDED", null, { retry: { strategy: "BACKOFF", sameIdempotencyKey: true, afterSeconds: 2 } }), MUTATION);
  assert.equal(capacity, { retry: true, delayMs: 2_000, codeless: false }, "no header: retry.afterSeconds");
  const bare = decideFirst(problem("GW_TENANT_AUTHORIZATION_UNAVAILABLE"), READ);
  assert.ok(bare.retry && bare.delayMs === backoffDelay(1, DEFAULT_RETRY, HALF), "neither: the backoff alone");
});

test("SAME_IDEMPOTENCY_KEY (billing unavailable, intake unavailable): retried with backoff", () => {
  for (const code of ["GW_BILLING_SERVICE_UNAVAILABLE", "GW_INVOICE_INTAKE_UNAVAILABLE", "GW_REG_AUTH_UNAVAILABLE"] as const) {
    const d = decideFirst(problem(code), MUTATION);
    assert.ok(d.retry, code);
  }
});

test("DO_NOT_RETRY, AFTER_CORRECTION, POLL_OPERATION, CONTACT_SUPPORT: never sent again, strategy kept", () => {
  const cases: Array<[GwCode, string]> = [
    ["GW_ROUTE_NOT_FOUND", "DO_NOT_RETRY"],
    ["GW_IDEMPOTENCY_CONTENT_CONFLICT", "DO_NOT_RETRY"],
    ["GW_REQUEST_VALIDATION_FAILED", "AFTER_CORRECTION"],
    ["GW_SIGN_REJECTED", "AFTER_CORRECTION"],
    ["GW_SIGN_OUTCOME_UNCONFIRMED", "CONTACT_SUPPORT"],
    ["GW_TRANSMIT_OUTCOME_UNCONFIRMED", "CONTACT_SUPPORT"],
    ["GW_SIGN_ATTEMPT_ALREADY_PROCESSED", "CONTACT_SUPPORT"],
    ["GW_UPSTREAM_TIMEOUT", "CONTACT_SUPPORT"],
  ];
  for (const [code, strategy] of cases) {
    assert.equal(decideFirst(problem(code), OP.sign), { retry: false, strategy, reason: "strategy" }, code);
    assert.equal(decideFirst(problem(code), READ), { retry: false, strategy, reason: "strategy" }, `${code} (read)`);
  }
  // No catalog code returns POLL_OPERATION today; the policy still never resubmits on it.
  const poll = problem("GW_INTERNAL_ERROR", null, { retry: { strategy: "POLL_OPERATION", sameIdempotencyKey: false } });
  assert.equal(decideFirst(poll, MUTATION), { retry: false, strategy: "POLL_OPERATION", reason: "strategy" });
});

test("exception 1: rotation is never retried after an uncertain 5xx, a lost or a held answer, even when told SAME_IDEMPOTENCY_KEY", () => {
  const rotation = OP.rotate;
  for (const e of [problem("GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE"), problem("GW_MANAGEMENT_SERVICE_UNAVAILABLE"), problem("GW_INTERNAL_ERROR"), lost(), proxy502()])
    assert.equal(decideFirst(e, rotation), { retry: false, strategy: "CONTACT_SUPPORT", reason: "exception_1_rotation" }, e.message);
  // Refusals that prove nothing was done stay retryable: the rotation was never attempted.
  assert.ok(decideFirst(problem("GW_RATE_LIMIT_EXCEEDED", 1), rotation).retry, "429");
  assert.ok(decideFirst(problem("GW_GATEWAY_CAPACITY_EXCEEDED", 1), rotation).retry, "capacity 503");
  assert.ok(decideFirst(refused(), rotation).retry, "a connection that never opened");
  // The same SAME_IDEMPOTENCY_KEY problem on another mutation is retried.
  assert.ok(decideFirst(problem("GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE"), MUTATION).retry);
});

test("exception 2: GW_IDEMPOTENCY_CONTENT_CONFLICT on onboarding or rotation becomes CONTACT_SUPPORT; elsewhere it stays DO_NOT_RETRY", () => {
  for (const op of [OP.onboard, OP.rotate])
    assert.equal(decideFirst(problem("GW_IDEMPOTENCY_CONTENT_CONFLICT"), op), { retry: false, strategy: "CONTACT_SUPPORT", reason: "exception_2_content_conflict" }, op.name);
  assert.equal(decideFirst(problem("GW_IDEMPOTENCY_CONTENT_CONFLICT"), OP.sign), { retry: false, strategy: "DO_NOT_RETRY", reason: "strategy" });
});

test("codeless failures: reads once, replay-safe mutations with the same key, other mutations never (outcome unknown)", () => {
  assert.ok(decideFirst(lost(), READ).retry, "a read is retried");
  assert.equal(decide(lost(), READ, { sends: 2, codelessRetries: 1, elapsedMs: 0 }, DEFAULT_RETRY, HALF), { retry: false, strategy: "BACKOFF", reason: "attempts_exhausted" }, "at most once");
  assert.ok(decideFirst(proxy502(), OP.submit).retry, "Stored intake answers a repeated key from its record");
  assert.ok(decideFirst(lost(), OP.onboard).retry, "onboarding too");
  for (const op of [OP.sign, OP.transmit, OP.transmitStored])
    assert.equal(decideFirst(lost(), op), { retry: false, strategy: "CONTACT_SUPPORT", reason: "outcome_unknown" }, op.name);
  assert.ok(decideFirst(refused(), OP.sign).retry, "never connected: nothing was sent, any operation may retry");
});

test("collections envelopes: 429 for everything; 5xx only for reads (the API has no idempotency keys)", () => {
  assert.equal(decideFirst(envelope(429, 3), MUTATION), { retry: true, delayMs: 3_000, codeless: false });
  assert.ok(decideFirst(envelope(503), READ).retry);
  assert.equal(decideFirst(envelope(503), MUTATION), { retry: false, strategy: "CONTACT_SUPPORT", reason: "strategy" });
  assert.equal(decideFirst(envelope(422), MUTATION), { retry: false, strategy: "AFTER_CORRECTION", reason: "strategy" });
});

test("bounded: attempts and total time (a wait past the budget is not started)", () => {
  const rate = problem("GW_RATE_LIMIT_EXCEEDED", 1);
  assert.equal(decide(rate, MUTATION, { sends: 4, codelessRetries: 0, elapsedMs: 0 }, DEFAULT_RETRY, HALF), { retry: false, strategy: "BACKOFF", reason: "attempts_exhausted" });
  assert.equal(decide(problem("GW_RATE_LIMIT_EXCEEDED", 60), MUTATION, FIRST, DEFAULT_RETRY, HALF), { retry: false, strategy: "BACKOFF", reason: "time_exhausted" });
  assert.equal(decide(rate, MUTATION, { sends: 1, codelessRetries: 0, elapsedMs: 29_500 }, DEFAULT_RETRY, HALF), { retry: false, strategy: "BACKOFF", reason: "time_exhausted" });
});

test("backoff: exponential, capped, jittered in [step/2, step)", () => {
  const o = { ...DEFAULT_RETRY, baseDelayMs: 100, maxDelayMs: 1_000 };
  assert.equal([1, 2, 3, 4, 5, 6].map((n) => backoffDelay(n, o, () => 0)), [50, 100, 200, 400, 500, 500]);
  assert.equal([1, 2, 3, 4, 5].map((n) => backoffDelay(n, o, () => 0.999999)), [100, 200, 400, 800, 1000]);
  const draws = new Set(Array.from({ length: 50 }, () => backoffDelay(3, o, Math.random)));
  assert.ok(draws.size > 10, "jitter spreads retries");
  for (const d of draws) assert.ok(d >= 200 && d <= 400);
});

test("Retry-After: delta-seconds or an HTTP date", () => {
  assert.is(parseRetryAfter("3", 0), 3);
  assert.is(parseRetryAfter(new Date(10_000).toUTCString(), 1_000), 9);
  assert.is(parseRetryAfter("soon", 0), null);
  assert.is(parseRetryAfter(undefined, 0), null);
});

test("runner: one key for every send, the hook called for each send before the next one and before returning", async () => {
  const events: string[] = [];
  const records: AttemptRecord[] = [];
  let now = 1_000;
  const failures = [problem("GW_BILLING_SERVICE_UNAVAILABLE"), problem("GW_RATE_LIMIT_EXCEEDED", 2)];
  const result = await runWithRetries(
    {
      op: OP.sign,
      method: "POST",
      path: "/api/v1/invoice/sign",
      idempotencyKey: "sign-key-0001",
      attemptNumber: 1,
      options: DEFAULT_RETRY,
      runtime: { now: () => now, sleep: async (ms) => void (events.push(`sleep ${ms}`), (now += ms)), random: HALF },
      onAttempt: async (r) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        events.push(`stored ${r.send} ${r.next}`);
        records.push(r);
      },
    },
    async (): Promise<Sent<string>> => {
      events.push("send");
      const f = failures.shift();
      if (f) throw f;
      return { status: 201, requestId: "req-ok", data: "signed" };
    },
  );
  assert.equal(events, ["send", "stored 1 retry", "sleep 188", "send", "stored 2 retry", "sleep 2000", "send", "stored 3 return"]);
  assert.is(result.data, "signed");
  assert.is(result.sends, 3);
  assert.equal(result.requestIds, ["req-1", "req-1", "req-ok"]);
  assert.ok(records.every((r) => r.idempotencyKey === "sign-key-0001" && r.attemptNumber === 1), "same key and attempt number on every send");
  assert.equal(records.map((r) => r.code), ["GW_BILLING_SERVICE_UNAVAILABLE", "GW_RATE_LIMIT_EXCEEDED", null]);
});

test("runner: a stopped operation throws the last error with what to do, every request id and the sends", async () => {
  const records: AttemptRecord[] = [];
  const err = await runWithRetries(
    {
      op: OP.rotate,
      method: "POST",
      path: "/sub-businesses/x/reg-crypto-material",
      idempotencyKey: "rot-key-0001",
      attemptNumber: null,
      options: DEFAULT_RETRY,
      runtime: { now: () => 0, sleep: async () => {}, random: HALF },
      onAttempt: (r) => void records.push(r),
    },
    async () => {
      throw problem("GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE");
    },
  ).then(
    (): ProblemError => {
      throw new Error("the rotation must fail");
    },
    (e: unknown) => e as ProblemError,
  );
  assert.instance(err, ProblemError);
  assert.is(err.returnedStrategy, "SAME_IDEMPOTENCY_KEY", "what the gateway said");
  assert.is(err.strategy, "CONTACT_SUPPORT", "what to do: exception 1");
  assert.is(err.stopReason, "exception_1_rotation");
  assert.ok(err.contactSupport);
  assert.is(err.sends, 1);
  assert.equal(err.requestIds, ["req-1"]);
  assert.is(records.length, 1);
  assert.is(records[0]!.next, "throw");
  assert.is(records[0]!.strategy, "CONTACT_SUPPORT");
});

test("runner: a persistence hook that throws stops the operation with its error (nothing more is sent)", async () => {
  let sends = 0;
  const boom = new Error("store down");
  const err = await runWithRetries(
    {
      op: OP.sign,
      method: "POST",
      path: "/api/v1/invoice/sign",
      idempotencyKey: "k-00000001",
      attemptNumber: 1,
      options: DEFAULT_RETRY,
      runtime: { now: () => 0, sleep: async () => {}, random: HALF },
      onAttempt: () => {
        throw boom;
      },
    },
    async () => {
      sends++;
      throw problem("GW_BILLING_SERVICE_UNAVAILABLE");
    },
  ).catch((e) => e);
  assert.is(err, boom);
  assert.is(sends, 1);
});

test.run();
