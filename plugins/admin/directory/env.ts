/**
 * What every directory-admin use case works with, built once: the directory store and the live
 * directory (announces changes), the HMAC key of idempotency records, the log, the clock and the
 * idempotency engine. Also the two steps every mutation shares: `mutate` (idempotent on the
 * operator's x-idempotency-key, resumed by a retry) and `audit` (appended once per mutation).
 */
import { createHash } from "node:crypto";
import type { RequestContext } from "../../../core/context.ts";
import type { TenantDirectory } from "../../../core/directory.ts";
import { appendAudit, type AuditTargetType, type DirectoryStore } from "../../../core/directory-store.ts";
import { createIdempotency, idempotencyId, type Idempotency, type IdempotentAnswer, type Outcome } from "../../../core/idempotency.ts";
import { canonicalJson, keyedHash } from "../../../core/keyed-hash.ts";
import type { Logger } from "../../../core/log.ts";

export interface DirectoryAdminOptions {
  store: DirectoryStore;
  directory: TenantDirectory;
  /** HMAC key for idempotency keys and content fingerprints. */
  secret: Buffer;
  log: Logger;
  now: () => number;
  /** The 503 Retry-After customers get while a domain drains (shown in the mode-change answer). */
  drainRetryAfterSeconds: number;
}

export interface DirectoryEnv extends DirectoryAdminOptions {
  idempotency: Idempotency;
}

/** Who asks: the operator credential, the request, the route and its idempotency key. */
export interface OperatorCall {
  credentialId: string;
  requestId: string;
  route: string;
  idempotencyKey: string;
  /** Who the audit log names and whose idempotency keys these are; default `operator:<credentialId>` (the dashboard: `dashboard:<userId>`). */
  actor?: string;
}

/** A mutation's answer; `plainKey` is set on the first answer of a key create or roll only. */
export interface AdminAnswer extends IdempotentAnswer {
  plainKey?: string;
}

export function operatorCall(ctx: RequestContext): OperatorCall {
  return { credentialId: ctx.principal!.credentialId, requestId: ctx.requestId, route: ctx.route!.id, idempotencyKey: ctx.idempotencyKey! };
}

export function createDirectoryEnv(o: DirectoryAdminOptions): DirectoryEnv {
  const idempotency = createIdempotency(o.store.operations, {
    now: o.now,
    staleAfterMs: 60_000,
    waitMs: 5_000,
    pollMs: 25,
    retentionMs: 30 * 24 * 60 * 60 * 1000,
    // A store outage reaches the route, which declares what it answers (GW_MANAGEMENT_SERVICE_UNAVAILABLE).
    unavailable: (e) => e,
  });
  return { ...o, idempotency };
}

/** The env's clock as an ISO 8601 time (stored documents). */
export function isoNow(env: Pick<DirectoryEnv, "now">): string {
  return new Date(env.now()).toISOString();
}

/**
 * Runs `execute` once per (operator credential, route, idempotency key); `content` is the request's
 * content (its keyed hash is the fingerprint). A dead holder's mutation is resumed by the next try.
 */
export function mutate(
  env: DirectoryEnv,
  op: OperatorCall,
  content: Record<string, unknown>,
  execute: (recordId: string) => Promise<Outcome>,
): Promise<IdempotentAnswer> {
  const scope = op.actor ?? `operator:${op.credentialId}`;
  const recordId = idempotencyId(env.secret, scope, op.route, op.idempotencyKey);
  return env.idempotency.run({
    recordId,
    scope,
    route: op.route,
    fingerprint: { content: keyedHash(env.secret, canonicalJson(content)) },
    owner: op.requestId,
    // Every mutation resumes where a dead holder stopped.
    onStale: async () => "takeover",
    execute: () => execute(recordId),
  });
}

/** The mutation's audit record; its `_id` is derived from the idempotency record, so it is appended once. */
export function audit(
  env: DirectoryEnv,
  op: OperatorCall,
  recordId: string,
  action: string,
  target: { type: AuditTargetType; id: string },
  changes: Record<string, unknown>,
): Promise<void> {
  return appendAudit(
    env.store.audit,
    { _id: _auditId(recordId), actor: op.actor ?? `operator:${op.credentialId}`, requestId: op.requestId, action, target, changes },
    env.now(),
  );
}

// --- Internal helpers ---

function _auditId(recordId: string): string {
  return "op_" + createHash("sha256").update(recordId).digest("base64url").slice(0, 32);
}
