/**
 * The Stored intake (DECISIONS.md "Stored mode"): 202, written durably before the answer,
 * idempotent per key. Intake is one insert of one document: the invoice is either wholly stored or
 * not at all, and a store that cannot confirm it answers 503 GW_INVOICE_INTAKE_UNAVAILABLE (the
 * route's declaration; the same key then finds the invoice if the write did land). The same key
 * with other content is refused, and so is a second live invoice for the same IRN of the
 * represented business (under another key).
 */
import { randomUUID } from "node:crypto";
import { isDuplicateKeyError } from "../../adapters/ports.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { newId } from "../../core/ids.ts";
import { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";
import { checkInvoice, irnOfTemplate } from "../invoice/checks.ts";
import { checkNoPendingMigration, ownedBusiness, type RepresentedBusiness } from "../invoice/represented-businesses.ts";
import type { InvoiceDoc } from "../invoice/stored-invoices.ts";
import { INVOICE_REFERENCE } from "./schemas.ts";
import type { IntakeRequest, StoredCaller, StoredDeps } from "./types.ts";

/** The intake document as the regulator will see it, and the fields the gateway filled in. */
interface Completed {
  document: Record<string, unknown>;
  filled: string[];
  irn: string;
}

export async function intake(o: StoredDeps, caller: StoredCaller, r: IntakeRequest): Promise<InvoiceDoc> {
  const intakeKey = `${caller.businessId}|${keyedHash(o.secret, `${caller.businessId}\u0000intake\u0000${r.idempotencyKey}`)}`;
  // Optimistic: a first intake (the common case) is checked and inserted without a read of the key;
  // a replay shows itself as a refused check or a duplicate key, and then answers the stored invoice.
  let checked: Completed;
  try {
    checked = await _check(o, caller, r);
  } catch (e) {
    const existing = await o.invoices.findOne({ intakeKey });
    if (existing) return _replay(existing, r);
    throw e;
  }
  const doc = _newInvoice(o, caller, r, intakeKey, checked);
  try {
    await o.invoices.insert(doc);
  } catch (e) {
    if (!isDuplicateKeyError(e)) throw e;
    return _taken(o, doc, r);
  }
  o.log.event("stored_invoice_accepted", { requestId: caller.requestId, invoiceId: doc._id, operationId: doc.operationId });
  o.onDue();
  // The webhook is asked for now and not waited for: its event is recorded on the invoice the insert
  // stored, and the processor enqueues what is recorded (idempotent), so the 202 promises nothing of
  // it and waits for one commit, not one more per endpoint.
  if (doc.events.length > 0) void o.webhooks.enqueue(doc, doc.events).catch(() => undefined);
  return doc;
}

// --- Internal helpers ---

/** The represented business (§7.7) and the invoice identity (§4.2 rule 4), on the completed document. */
async function _check(o: StoredDeps, caller: StoredCaller, r: IntakeRequest): Promise<Completed> {
  const sub = await ownedBusiness(o.subs, caller, r.subBusinessId);
  await checkNoPendingMigration(o.reviews, sub);
  const { document, filled } = _completed(sub, r.body);
  return { document, filled, irn: checkInvoice(sub, document).irn };
}

function _newInvoice(o: StoredDeps, caller: StoredCaller, r: IntakeRequest, intakeKey: string, { document, filled, irn }: Completed): InvoiceDoc {
  const now = new Date();
  const at = now.toISOString();
  const base = {
    _id: randomUUID(),
    businessId: caller.businessId,
    state: caller.state,
    domain: caller.domain,
    subBusinessId: r.subBusinessId,
    direction: "outbound",
    irn,
    status: "pending",
    statusHistory: [{ status: "pending", at }],
    attempts: 0,
    budgetLeft: o.retryBudget,
    budget: o.retryBudget,
    lastError: null,
    operationId: newId(),
    createdAt: at,
    updatedAt: at,
    createdAtMs: now.getTime(),
    document,
    filled,
    intakeKey,
    irnLock: `${caller.state}|${r.subBusinessId}|${irn}`,
    feeKobo: caller.feeKobo,
    rev: 0,
    dueAt: now.getTime(),
    step: "validate",
    signAttempt: 1,
    outages: 0,
    billDoubt: false,
    settle: false,
    reverseFor: null,
    events: [],
  } satisfies InvoiceDoc;
  return { ...base, events: o.webhooks.event(base, "invoice.accepted", "pending", at) };
}

/** A duplicate key: the same key (a concurrent duplicate) answers its invoice; otherwise the IRN is taken. */
async function _taken(o: StoredDeps, doc: InvoiceDoc, r: IntakeRequest): Promise<InvoiceDoc> {
  const same = await o.invoices.findOne({ intakeKey: doc.intakeKey });
  if (same) return _replay(same, r);
  const holder = await o.invoices.findOne({ irnLock: doc.irnLock });
  throw gwError("GW_INVOICE_STATE_CONFLICT", {
    detail: holder
      ? `Invoice ${holder._id} (status ${holder.status}) already holds this IRN for the represented business; a new invoice for it is possible once that one is rejected or cancelled.`
      : "Another invoice holds this IRN for the represented business.",
  });
}

/**
 * The same key again: the same invoice when the content is the same (the stored document without
 * the fields the gateway filled in, compared as canonical JSON, and the same represented business),
 * 409 otherwise. Compared only here, so a first intake computes no fingerprint.
 */
function _replay(doc: InvoiceDoc, r: IntakeRequest): InvoiceDoc {
  const original: Record<string, unknown> = { ...doc.document };
  for (const f of doc.filled ?? []) delete original[f];
  if (doc.subBusinessId !== r.subBusinessId || canonicalJson(original) !== canonicalJson(r.body))
    throw gwError("GW_IDEMPOTENCY_CONTENT_CONFLICT", {
      detail: "This idempotency key was used with different content; never reuse a key for different content.",
    });
  return doc;
}

/**
 * The intake document as the regulator will see it: `business_id` filled with the represented
 * business's current externalBusinessId when omitted, and `irn` built from its IRN template, the
 * `invoice_reference` and the `issue_date` when omitted.
 */
function _completed(sub: RepresentedBusiness, body: Record<string, unknown>): { document: Record<string, unknown>; filled: string[] } {
  const doc: Record<string, unknown> = { ...body };
  const filled: string[] = [];
  if (doc.business_id === undefined) {
    doc.business_id = sub.externalBusinessId;
    filled.push("business_id");
  }
  if (doc.irn !== undefined) return { document: doc, filled };
  if (typeof doc.invoice_reference !== "string" || !INVOICE_REFERENCE.test(doc.invoice_reference))
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "Send irn, or invoice_reference and issue_date for the gateway to build it.",
      violations: [{ location: "body", pointer: "/irn", code: "REQUIRED", detail: "send irn, or invoice_reference and issue_date" }],
    });
  if (typeof doc.issue_date !== "string")
    throw gwError("GW_REQUEST_VALIDATION_FAILED", {
      detail: "issue_date is needed to build the IRN.",
      violations: [{ location: "body", pointer: "/issue_date", code: "REQUIRED", detail: "required to build the IRN" }],
    });
  // Both template forms (plain, and the regulator's `{{invoice_id(e.g:…)}}` form) give the same IRN.
  const irn = irnOfTemplate(sub.identity.irnTemplate, doc.invoice_reference, doc.issue_date.replaceAll("-", ""));
  if (!irn)
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The represented business has no IRN template; send irn.",
      violations: [{ location: "body", pointer: "/irn", code: "REQUIRED", detail: "no IRN template to build it from" }],
    });
  doc.irn = irn;
  filled.push("irn");
  return { document: doc, filled };
}
