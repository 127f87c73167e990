/**
 * Pass-through signing (spec §3.2), one billed sign request, in order:
 *   1. the key's idempotency record, when it exists: same key + same content already signed → 409
 *      GW_SIGN_ATTEMPT_ALREADY_PROCESSED with its operationId (§3.2: never a second 201); ended with a
 *      GW_* error → that error again; different content → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT; in
 *      progress → wait (bounded) for it. A first attempt does not read it: its claim (3) finds it,
 *      and a failed check (2) or a claim the store refused reads it before answering, so a
 *      recorded answer always comes first
 *   2. represented business + invoice checks (§4.2 rule 4), before anything is claimed
 *   3. claim: unique insert of the record (`_id` per key, unique `attemptKey` per billing identity:
 *      held by another key → 409 GW_BILLING_ATTEMPT_CONFLICT)
 *   4. the claimed sign carried out by the settlement table (dispatch.ts)
 * A store that cannot answer throws its DependencyUnavailableError: the route answers 503.
 */
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { newId } from "../../core/ids.ts";
import { attemptKeyOf, type SignRecord } from "../invoice/sign-attempts.ts";
import { executeSign } from "./dispatch.ts";
import { releaseClaim, replayAnswer, resolveStale } from "./records.ts";
import { canonicalJson, keyedHash } from "./store.ts";
import { SIGN_ROUTE, type PassThrough, type SignCaller, type SigningServiceOptions, type SignRequest } from "./types.ts";
import { checkedInvoice, type CheckedInvoice } from "./validate.ts";

export async function sign(o: SigningServiceOptions, caller: SignCaller, r: SignRequest): Promise<PassThrough> {
  const recordId = `${caller.businessId}|${SIGN_ROUTE}|${keyedHash(o.secret, `${caller.businessId}\u0000${SIGN_ROUTE}\u0000${r.idempotencyKey}`)}`;
  const fingerprint = keyedHash(o.secret, `${canonicalJson(r.document)}\u0000${r.subBusinessId}\u0000${r.attemptNumber}`);
  const deadline = o.now() + o.waitMs;
  let checked: CheckedInvoice | null = null;
  // A first attempt (the common case) is checked and claimed without a read of the key: a replay
  // shows itself as a duplicate claim, or as a failed check or refused claim with the record there.
  let optimistic = true;
  for (;;) {
    const rec = optimistic ? null : await o.store.idempotency.get(recordId);
    if (rec) {
      const seen = await _existing(o, caller, rec, fingerprint, deadline);
      if (seen === "takeover") return executeSign(o, caller, r, rec, fingerprint, checked, true);
      if (seen !== "again") return seen;
      checked = null; // checked again after the wait, before any claim
      continue;
    }
    let claimed: SignRecord | null = null;
    try {
      checked ??= await checkedInvoice(o, caller, r.subBusinessId, r.document);
      const claim = _claim(o, caller, r, recordId, fingerprint, checked);
      if (await _inserted(o, claim, recordId)) claimed = claim;
    } catch (e) {
      // The key's recorded answer comes before what the checks, or a store refusing the claim, say.
      if (optimistic && (await o.store.idempotency.get(recordId))) {
        optimistic = false;
        continue;
      }
      throw e;
    }
    optimistic = false;
    if (claimed) return executeSign(o, caller, r, claimed, fingerprint, checked, false);
  }
}

// --- Internal helpers ---

/**
 * The key's record exists: its answer again, a conflict, a takeover of a stale record, or (while
 * it is in progress) a bounded wait before "still being processed".
 */
async function _existing(o: SigningServiceOptions, caller: SignCaller, rec: SignRecord, fingerprint: string, deadline: number): Promise<PassThrough | "takeover" | "again"> {
  if (rec.fingerprint !== fingerprint)
    throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
      detail: "This idempotency key was used with different content; never reuse a key for different content.",
    });
  if (rec.status !== "in_progress" && rec.answer) {
    if (rec.answer.kind === "regulator") throw _alreadyProcessed(rec);
    return replayAnswer(rec.answer);
  }
  if (o.now() - rec.startedAtMs >= o.staleAfterMs) return (await resolveStale(o, rec, caller)) === "takeover" ? "takeover" : "again";
  if (o.now() >= deadline)
    throw gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
      detail: "A request with this key and attempt number is still being processed; do not resubmit.",
      operationId: rec.operationId,
    });
  await new Promise((resolve) => setTimeout(resolve, o.pollMs));
  return "again";
}

function _claim(o: SigningServiceOptions, caller: SignCaller, r: SignRequest, recordId: string, fingerprint: string, checked: CheckedInvoice): SignRecord {
  const startedAtMs = o.now();
  return {
    _id: recordId,
    businessId: caller.businessId,
    route: SIGN_ROUTE,
    fingerprint,
    attemptKey: attemptKeyOf({ state: caller.state, domain: caller.domain, subBusinessId: r.subBusinessId, irn: checked.irn.irn, attemptNumber: r.attemptNumber }),
    operationId: newId(),
    status: "in_progress",
    phase: "claimed",
    owner: caller.requestId,
    startedAtMs,
    completedAtMs: null,
    answer: null,
    money: "none",
    expiresAtMs: startedAtMs + o.retentionMs,
  };
}

/**
 * The claim inserted (true), or the loop goes round again (false): the key's own record appeared
 * (a concurrent duplicate). The billing identity held by another key is answered here: this
 * attempt number is taken.
 */
async function _inserted(o: SigningServiceOptions, claim: SignRecord, recordId: string): Promise<boolean> {
  const records = o.store.idempotency;
  try {
    await records.insert(claim);
    return true;
  } catch (e) {
    if (!isDuplicateKeyError(e)) {
      // Not acknowledged, but it may land: nothing ran for it, so it is taken back.
      await releaseClaim(o, claim);
      throw e;
    }
  }
  if (await records.get(recordId)) return false;
  const other = await records.findOne({ attemptKey: claim.attemptKey });
  if (!other) return false;
  throw gwError("GW_BILLING_ATTEMPT_CONFLICT", {
    detail: "This billing identity (represented business, domain, IRN, attempt number) belongs to an attempt made with another idempotency key; do not resubmit, contact support with the operationId.",
    operationId: other.operationId,
  });
}

/** The key's attempt was signed: the merchant is told so (with the operationId), never given a second 201. */
function _alreadyProcessed(rec: SignRecord): Error {
  return gwError("GW_SIGN_ATTEMPT_ALREADY_PROCESSED", {
    detail: "This idempotency key and attempt number were already processed and the invoice signed; read it with confirm or download by IRN.",
    operationId: rec.operationId,
  });
}
