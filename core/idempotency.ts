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

export function createIdempotency(records: Collection<IdempotencyDoc>, options: IdempotencyOptions) {
  const { now } = options;

  const read = async (id: string) => {
    try {
      return await records.get(id);
    } catch (e) {
      throw options.unavailable(e);
    }
  };

  async function run(r: IdempotentRun): Promise<IdempotentAnswer> {
    const deadline = now() + options.waitMs;
    for (;;) {
      const rec = await read(r.recordId);
      if (rec) {
        if (!fingerprintMatches(rec.fingerprint, r.fingerprint, r.omittable ?? []))
          throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
            detail: "This idempotency key was used with different content; never reuse a key for different content.",
          });
        if (rec.status === "completed" && rec.response) return _replay(rec.response);
        if (now() - rec.startedAtMs >= options.staleAfterMs) {
          const resolved = await r.onStale(rec);
          if (resolved !== "takeover") {
            await _complete(r.recordId, rec.owner, resolved).catch(() => undefined);
            return _replay(resolved);
          }
          const startedAtMs = now();
          let taken: IdempotencyDoc | null;
          try {
            taken = await records.findOneAndUpdate(
              { _id: r.recordId, owner: rec.owner, status: "in_progress" },
              { $set: { owner: r.owner, startedAtMs, startedAt: new Date(startedAtMs).toISOString(), uncertainCode: null } },
            );
          } catch (e) {
            throw options.unavailable(e);
          }
          if (!taken) continue;
          return _execute(r);
        }
        if (rec.uncertainCode && rec.uncertainCode in CATALOG) {
          const code = rec.uncertainCode as GwCode;
          const strategy = CATALOG[code].strategy;
          const wait = Math.max(1, Math.ceil((rec.startedAtMs + options.staleAfterMs - now()) / 1000));
          throw gwError(code, {
            detail: "An earlier request with this key ended with an unconfirmed outcome; it is resolved once its claim expires.",
            ...(strategy === "SAME_IDEMPOTENCY_KEY" || strategy === "BACKOFF" ? { retryAfterSeconds: wait } : {}),
          });
        }
        if (now() >= deadline)
          throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
            detail: "A request with this idempotency key is still in progress; read the resource before doing anything else.",
          });
        await _sleep(options.pollMs);
        continue;
      }
      r.beforeClaim?.();
      const startedAtMs = now();
      try {
        await records.insert({
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
          expiresAtMs: startedAtMs + options.retentionMs,
        });
      } catch (e) {
        if (isDuplicateKeyError(e)) continue; // a concurrent duplicate claimed it first
        throw options.unavailable(e);
      }
      return _execute(r);
    }
  }

  async function _execute(r: IdempotentRun): Promise<IdempotentAnswer> {
    let outcome: Outcome;
    try {
      outcome = await r.execute();
    } catch (e) {
      if (isKeepClaim(e)) {
        await records
          .findOneAndUpdate({ _id: r.recordId, owner: r.owner, status: "in_progress" }, { $set: { uncertainCode: e.error.code } })
          .catch(() => null);
        throw e.error;
      }
      await records.deleteMany({ _id: r.recordId, owner: r.owner, status: "in_progress" }).catch(() => 0);
      throw e;
    }
    // The effect is done: a failure to record the answer leaves the claim to the stale path.
    await _complete(r.recordId, r.owner, outcome).catch(() => undefined);
    return { ...outcome, replayed: false };
  }

  async function _complete(id: string, owner: string, outcome: Outcome): Promise<void> {
    const at = now();
    await records.findOneAndUpdate(
      { _id: id, owner, status: "in_progress" },
      {
        $set: {
          status: "completed",
          completedAt: new Date(at).toISOString(),
          response: { status: outcome.status, body: outcome.body },
          expiresAtMs: at + options.retentionMs,
        },
      },
    );
  }

  return { run };
}

export type Idempotency = ReturnType<typeof createIdempotency>;

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
