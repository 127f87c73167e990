/**
 * The writes of a sign record after its claim: finishing it with its answer, releasing a claim
 * whose execution left no regulator effect, and the fate of a stale record (taken over before the
 * dispatch, frozen after it). Every write is scoped to the claim's holder (`owner`, `in_progress`).
 */
import type { RegulatorResponse } from "../../adapters/regulator/port.ts";
import { repeatUndo, UNDO_REPEAT_MS } from "../../core/background-retry.ts";
import { writeOutcome } from "../../core/outcome-write.ts";
import { answeredError, errorAnswer, interruptedSignError, type SignRecord, type StoredAnswer } from "../invoice/sign-attempts.ts";
import type { PassThrough, SignCaller, SigningServiceOptions } from "./types.ts";

/**
 * The record completed (or frozen) with its answer and where the money ended, tried again while the
 * store does not answer (core/outcome-write.ts). A write lost for good is logged and alerted.
 */
export async function finishRecord(o: SigningServiceOptions, rec: SignRecord, status: "completed" | "frozen", answer: StoredAnswer, money: string): Promise<void> {
  const at = o.now();
  const written = await writeOutcome(() =>
    o.store.idempotency.updateOne(
      { _id: rec._id, owner: rec.owner, status: "in_progress" },
      { $set: { status, phase: "done", answer, money, completedAtMs: at, expiresAtMs: at + o.retentionMs } },
    ),
  );
  if (written) return;
  // Left in progress, phase "dispatching": the stale path freezes it (never replays it).
  o.log.warn("signing_record_write_failed", { operationId: rec.operationId, status });
  o.alerts?.raise({ signal: "post_sign_state_missing", dependency: "documentStore", operation: "signing_idempotency.updateOne", operationId: rec.operationId });
}

/**
 * Releases a claim whose execution left no regulator effect (the same key may be retried). The
 * delete is repeated in the background (an outage is often why we are releasing, and a claim insert
 * the store did not acknowledge may land later): a claim left behind would make the same-key retry
 * wait and then answer "already processed" until the claim is stale.
 */
export async function releaseClaim(o: SigningServiceOptions, rec: SignRecord): Promise<void> {
  await repeatUndo(
    () => o.store.idempotency.deleteMany({ _id: rec._id, owner: rec.owner, status: "in_progress" }).then(() => true, () => false),
    UNDO_REPEAT_MS,
    () => o.log.warn("signing_claim_release_failed", { operationId: rec.operationId }),
  );
}

/**
 * A stale in-progress record: its holder is presumed dead. Before "dispatching" the regulator was
 * never called: take it over (the debit, if any, replays). From "dispatching" on the outcome cannot
 * be proved: freeze it (502, never replayed).
 */
export async function resolveStale(o: SigningServiceOptions, rec: SignRecord, caller: SignCaller): Promise<"takeover" | "resolved"> {
  const records = o.store.idempotency;
  if (rec.phase === "claimed") {
    const taken = await records.findOneAndUpdate(
      { _id: rec._id, owner: rec.owner, status: "in_progress", phase: "claimed" },
      { $set: { owner: caller.requestId, startedAtMs: o.now() } },
    );
    if (!taken) return "resolved";
    Object.assign(rec, taken);
    return "takeover";
  }
  const err = interruptedSignError(rec.operationId);
  o.log.error("signing_outcome_unconfirmed", { operationId: rec.operationId, reason: "stale_claim", alert: "immediate" });
  o.alerts?.raise({ signal: "sign_outcome_unconfirmed", operation: "sign", failureClass: "stale_claim", requestId: caller.requestId, operationId: rec.operationId, code: "GW_SIGN_OUTCOME_UNCONFIRMED" });
  const at = o.now();
  await records.updateOne(
    { _id: rec._id, owner: rec.owner, status: "in_progress" },
    { $set: { status: "frozen", phase: "done", answer: errorAnswer(err), money: "held", completedAtMs: at, expiresAtMs: at + o.retentionMs } },
  );
  return "resolved";
}

/** The stored answer again: the same regulator status and body, or the same GW_* error. */
export function replayAnswer(answer: StoredAnswer): PassThrough {
  if (answer.kind === "regulator")
    return { status: answer.status, contentType: answer.contentType, body: new Uint8Array(Buffer.from(answer.bodyBase64, "base64")), headers: answer.headers };
  throw answeredError(answer);
}

/** A regulator answer as the record keeps it (the body base64-encoded). */
export function regulatorAnswer(response: RegulatorResponse): StoredAnswer {
  return {
    kind: "regulator",
    status: response.status,
    contentType: response.contentType,
    bodyBase64: Buffer.from(response.body).toString("base64"),
    headers: response.headers,
  };
}
