/**
 * Idempotent mutations (spec §7.2): onboarding and the operator's Admin API. One record per (scope, route, key),
 * claimed with a unique insert in state `in_progress` BEFORE any external call, so a concurrent
 * duplicate never starts a second one:
 *
 *   no record            → claim it (insert), run, store the answer (`completed`)
 *   different content    → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT
 *   completed            → the stored answer again (201 becomes 200), nothing runs
 *   in_progress, fresh   → wait for the holder (bounded), then answer as above; still running at the
 *                          deadline → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT ("in progress")
 *   in_progress, holder  → the holder's own answer again (its effect is unconfirmed until the claim
 *     ended uncertain      is stale), with Retry-After for the retryable codes
 *   in_progress, stale   → the operation's `onStale` decides: a recovered answer, "takeover" (run
 *                          again, claim moved by compare-and-set), or an error (onboarding:
 *                          GW_ONBOARDING_NOT_RESUMABLE)
 *
 * A failure before any durable effect releases the claim (the same key can be retried); a failure
 * whose effect is uncertain (`KeepClaim`) leaves it, so the stale path resolves it later.
 */
import { CATALOG, type GwCode } from "./errors/catalog.ts";
import { gwError, type GatewayError } from "./errors/gateway-error.ts";
import { keyedHash } from "./keyed-hash.ts";
import { isDuplicateKeyError, type Collection, type Doc } from "../adapters/ports.ts";

/** Content fingerprint: component → keyed hash, or null for "absent". */
export type Fingerprint = Record<string, string | null>;

export interface IdempotencyDoc extends Doc {
  /** Top-level business, or `operator:<credential id>`. */
  scope: string;
  /** Route id ("POST /sub-businesses"). */
  route: string;
  fingerprint: Fingerprint;
  status: "in_progress" | "completed";
  /** Request id of the request that holds (or held) the claim. */
  owner: string;
  startedAt: string;
  startedAtMs: number;
  completedAt: string | null;
  response: { status: number; body: unknown } | null;
  /**
   * Set when the holder ended with an unconfirmed effect (the claim is kept): the public code it
   * answered, repeated to a retry until the claim is stale and can be resolved.
   */
  uncertainCode?: string | null;
  /** TTL (epoch ms). */
  expiresAtMs: number;
}

/** `${scope}|${route}|${HMAC(key)}`: the idempotency record id; the raw key is never stored. */
export function idempotencyId(secret: Buffer, scope: string, route: string, key: string): string {
  return `${scope}|${route}|${keyedHash(secret, `${scope}\u0000${route}\u0000${key}`)}`;
}

/** Content as presented: a component `undefined` was omitted by the caller. */
export type PresentedFingerprint = Record<string, string | null | undefined>;

export interface Outcome {
  status: number;
  body: unknown;
}

export interface IdempotentAnswer extends Outcome {
  replayed: boolean;
}

export interface IdempotentRun {
  recordId: string;
  scope: string;
  route: string;
  fingerprint: PresentedFingerprint;
  /** Components a replay may omit (credentials, QR material). */
  omittable?: readonly string[];
  /** Request id: the claim's owner. */
  owner: string;
  /** Runs when no record exists, before claiming (e.g. GW_REG_CREDENTIALS_REQUIRED). */
  beforeClaim?: () => void;
  /** A stale in-progress record: a recovered answer, "takeover", or throw. */
  onStale: (record: IdempotencyDoc) => Promise<Outcome | "takeover">;
  execute: () => Promise<Outcome>;
}

export interface IdempotencyOptions {
  now: () => number;
  /** An in-progress record older than this is stale (its holder is presumed dead). */
  staleAfterMs: number;
  /** How long a duplicate waits for the holder before answering 409. */
  waitMs: number;
  pollMs: number;
  /** How long records are kept. */
  retentionMs: number;
  /** Maps a store failure before any effect (claim, reads) to the error to throw. */
  unavailable: (cause: unknown) => unknown;
  /**
   * What a duplicate answers when the holder is still running at the wait's end; default 409
   * GW_IDEMPOTENCY_CONTENT_CONFLICT ("still in progress").
   */
  inProgress?: () => GatewayError;
}

/** Thrown by `execute` when the effect may have happened: the claim is kept, `error` is answered. */
export class KeepClaim extends Error {
  readonly isKeepClaim = true;
  constructor(readonly error: GatewayError) {
    super(error.message);
    this.name = "KeepClaim";
  }
}

export function isKeepClaim(e: unknown): e is KeepClaim {
  return typeof e === "object" && e !== null && (e as { isKeepClaim?: unknown }).isKeepClaim === true;
}

/** The idempotency engine of one record collection. */
export interface Idempotency {
  /** Runs `r.execute` at most once per record (see above): its answer, or the stored one replayed. */
  run(r: IdempotentRun): Promise<IdempotentAnswer>;
}

export function createIdempotency(records: Collection<IdempotencyDoc>, options: IdempotencyOptions): Idempotency {
  const engine: _Engine = { records, options, now: options.now };
  return { run: (r) => _run(engine, r) };
}

/**
 * Same content? Every component must be equal, except that a component the caller omitted
 * (`undefined`) and declared omittable is not compared.
 */
export function fingerprintMatches(stored: Fingerprint, presented: PresentedFingerprint, omittable: readonly string[]): boolean {
  const keys = new Set([...Object.keys(stored), ...Object.keys(presented)]);
  for (const k of keys) {
    let p = presented[k];
    if (p === undefined) {
      if (omittable.includes(k)) continue;
      p = null;
    }
    if ((stored[k] ?? null) !== p) return false;
  }
  return true;
}

// --- Internal helpers ---

interface _Engine {
  records: Collection<IdempotencyDoc>;
  options: IdempotencyOptions;
  now: () => number;
}

/** Returned by a step that found the record changed under it: read it again. */
const AGAIN = Symbol("again");
type _Step = IdempotentAnswer | typeof AGAIN;

async function _run(e: _Engine, r: IdempotentRun): Promise<IdempotentAnswer> {
  const deadline = e.now() + e.options.waitMs;
  for (;;) {
    const rec = await _read(e, r.recordId);
    const step = rec ? await _existing(e, r, rec, deadline) : await _claim(e, r);
    if (step !== AGAIN) return step;
  }
}

async function _read(e: _Engine, id: string): Promise<IdempotencyDoc | null> {
  try {
    return await e.records.get(id);
  } catch (err) {
    throw e.options.unavailable(err);
  }
}

/** A record exists: a content conflict, the stored answer, the stale path, or waiting for its holder. */
async function _existing(e: _Engine, r: IdempotentRun, rec: IdempotencyDoc, deadline: number): Promise<_Step> {
  if (!fingerprintMatches(rec.fingerprint, r.fingerprint, r.omittable ?? []))
    throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
      detail: "This idempotency key was used with different content; never reuse a key for different content.",
    });
  if (rec.status === "completed" && rec.response) return _replay(rec.response);
  if (e.now() - rec.startedAtMs >= e.options.staleAfterMs) return _stale(e, r, rec);
  if (rec.uncertainCode && rec.uncertainCode in CATALOG) throw _uncertain(e, rec, rec.uncertainCode as GwCode);
  if (e.now() >= deadline)
    throw (
      e.options.inProgress?.() ??
      gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
        detail: "A request with this idempotency key is still in progress; read the resource before doing anything else.",
      })
    );
  await _sleep(e.options.pollMs);
  return AGAIN;
}

/** The holder is presumed dead: the operation's `onStale` answers, or the claim is taken over (compare-and-set). */
async function _stale(e: _Engine, r: IdempotentRun, rec: IdempotencyDoc): Promise<_Step> {
  const resolved = await r.onStale(rec);
  if (resolved !== "takeover") {
    await _complete(e, r.recordId, rec.owner, resolved).catch(() => undefined);
    return _replay(resolved);
  }
  const startedAtMs = e.now();
  let taken: IdempotencyDoc | null;
  try {
    taken = await e.records.findOneAndUpdate(
      { _id: r.recordId, owner: rec.owner, status: "in_progress" },
      { $set: { owner: r.owner, startedAtMs, startedAt: new Date(startedAtMs).toISOString(), uncertainCode: null } },
    );
  } catch (err) {
    throw e.options.unavailable(err);
  }
  if (!taken) return AGAIN;
  return _execute(e, r);
}

/** The holder ended with an unconfirmed effect: its code again, with Retry-After until the claim is stale. */
function _uncertain(e: _Engine, rec: IdempotencyDoc, code: GwCode): GatewayError {
  const strategy = CATALOG[code].strategy;
  const wait = Math.max(1, Math.ceil((rec.startedAtMs + e.options.staleAfterMs - e.now()) / 1000));
  return gwError(code, {
    detail: "An earlier request with this key ended with an unconfirmed outcome; it is resolved once its claim expires.",
    ...(strategy === "SAME_IDEMPOTENCY_KEY" || strategy === "BACKOFF" ? { retryAfterSeconds: wait } : {}),
  });
}

/** No record: claim it (a unique insert) before any effect, then run. */
async function _claim(e: _Engine, r: IdempotentRun): Promise<_Step> {
  r.beforeClaim?.();
  const startedAtMs = e.now();
  try {
    await e.records.insert({
      _id: r.recordId,
      scope: r.scope,
      route: r.route,
      fingerprint: _stored(r.fingerprint),
      status: "in_progress",
      owner: r.owner,
      startedAt: new Date(startedAtMs).toISOString(),
      startedAtMs,
      completedAt: null,
      response: null,
      expiresAtMs: startedAtMs + e.options.retentionMs,
    });
  } catch (err) {
    if (isDuplicateKeyError(err)) return AGAIN; // a concurrent duplicate claimed it first
    throw e.options.unavailable(err);
  }
  return _execute(e, r);
}

async function _execute(e: _Engine, r: IdempotentRun): Promise<IdempotentAnswer> {
  let outcome: Outcome;
  try {
    outcome = await r.execute();
  } catch (err) {
    if (isKeepClaim(err)) {
      await e.records
        .findOneAndUpdate({ _id: r.recordId, owner: r.owner, status: "in_progress" }, { $set: { uncertainCode: err.error.code } })
        .catch(() => null);
      throw err.error;
    }
    await e.records.deleteMany({ _id: r.recordId, owner: r.owner, status: "in_progress" }).catch(() => 0);
    throw err;
  }
  // The effect is done: a failure to record the answer leaves the claim to the stale path.
  await _complete(e, r.recordId, r.owner, outcome).catch(() => undefined);
  return { ...outcome, replayed: false };
}

async function _complete(e: _Engine, id: string, owner: string, outcome: Outcome): Promise<void> {
  const at = e.now();
  await e.records.findOneAndUpdate(
    { _id: id, owner, status: "in_progress" },
    {
      $set: {
        status: "completed",
        completedAt: new Date(at).toISOString(),
        response: { status: outcome.status, body: outcome.body },
        expiresAtMs: at + e.options.retentionMs,
      },
    },
  );
}

function _replay(o: Outcome): IdempotentAnswer {
  return { status: o.status === 201 ? 200 : o.status, body: o.body, replayed: true };
}

function _stored(f: PresentedFingerprint): Fingerprint {
  const out: Fingerprint = {};
  for (const [k, v] of Object.entries(f)) out[k] = v ?? null;
  return out;
}

function _sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
