/**
 * `pay`: one charge per session (a repeated call returns the first outcome), the outcome chosen by
 * the request's `simulate`. With a store, the first process to write the session's payment charges
 * it and every other call answers that payment's report.
 */
import { randomBytes } from "node:crypto";
import { PaymentRefusedError, isDuplicateKeyError, type Collection, type PaymentReport, type PaymentRequest } from "../../ports.ts";
import { deliver, later, laterBy, type PaymentDoc, type SandboxState } from "./state.ts";
import { SandboxLiveBusinessError, type SandboxPayment } from "./types.ts";

export function pay(s: SandboxState, request: PaymentRequest): Promise<PaymentReport> {
  const earlier = s.charging.get(request.sessionId);
  if (earlier) return earlier;
  if (request.businessState !== "TEST") return Promise.reject(new SandboxLiveBusinessError());
  if (!Number.isSafeInteger(request.amountKobo) || request.amountKobo <= 0)
    return Promise.reject(new PaymentRefusedError("amountKobo must be a positive integer"));
  const simulate = request.simulate ?? "success";
  const report: PaymentReport = {
    sessionId: request.sessionId,
    processorReference: `SBX-${randomBytes(8).toString("hex").toUpperCase()}`,
    status: simulate === "failure" ? "failed" : "succeeded",
    amountKobo: request.amountKobo,
    reportedAt: new Date(s.clock()).toISOString(),
    ...(simulate === "failure" ? { failureReason: "Declined by the sandbox (simulated failure)." } : {}),
  };
  const times = simulate === "duplicate_report" ? 2 : 1;
  if (s.stored) {
    const outcome = _payStored(s, s.stored, request, report, times);
    s.charging.set(request.sessionId, outcome);
    outcome.catch(() => s.charging.delete(request.sessionId)); // a failed attempt may be made again
    return outcome;
  }
  const entry: SandboxPayment = { request: { ...request }, report, deliveries: 0, decided: false, refund: null };
  s.payments.set(request.sessionId, entry);
  deliver(s, entry, times);
  const outcome = later(s, () => {
    entry.decided = true;
    return { ...report };
  });
  s.charging.set(request.sessionId, outcome);
  return outcome;
}

// --- Internal helpers ---

/**
 * The store path of `pay`: the first process to write the session's payment charges it; any other
 * call (another process, a retry after a lost answer) answers that payment's report once its
 * processing time has passed. A store failure rejects with the store's error: the outcome is
 * unknown to the caller, never a refusal.
 */
async function _payStored(s: SandboxState, collection: Collection<PaymentDoc>, request: PaymentRequest, report: PaymentReport, times: number): Promise<PaymentReport> {
  const doc: PaymentDoc = { _id: request.sessionId, request: { ...request }, report, decidedAt: s.clock() + s.delay, refund: null };
  let first = doc;
  try {
    await collection.insert(doc);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    const existing = await collection.get(request.sessionId);
    if (!existing) throw e;
    first = existing;
  }
  const entry: SandboxPayment = { request: first.request, report: first.report, deliveries: 0, decided: false, refund: first.refund };
  s.payments.set(request.sessionId, entry);
  if (first === doc) deliver(s, entry, times);
  return laterBy(s, Math.max(0, first.decidedAt - s.clock()), () => {
    entry.decided = true;
    return { ...entry.report };
  });
}
