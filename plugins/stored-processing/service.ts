/**
 * Stored mode, the merchant's side (DECISIONS.md "Stored mode"): intake (202, written durably before
 * the answer, idempotent per key), the invoice reads, and transmission and cancellation by invoice ID.
 * The processor (processor.ts) does the rest.
 *
 * Intake is one insert of one document: the invoice is either wholly stored or not at all, and a
 * store that cannot confirm it answers 503 GW_INVOICE_INTAKE_UNAVAILABLE (the same key then finds
 * the invoice if the write did land). The same key with other content is refused, and so is a second
 * live invoice for the same IRN of the represented business (under another key).
 */
import { randomUUID } from "node:crypto";
import { isDuplicateKeyError, isInvalidQueryError, type DocumentStore, type Filter } from "../../adapters/ports.ts";
import type { RegulatorState } from "../../adapters/regulator/port.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { canonicalJson, keyedHash } from "../../core/keyed-hash.ts";
import type { Logger } from "../../core/log.ts";
import { checkInvoice } from "../signing/service.ts";
import { SIGNING_COLLECTIONS, type RepresentedBusiness } from "../signing/store.ts";
import type { InvoiceWebhooks } from "./events.ts";
import { INVOICE_REFERENCE, rangeEnd, rangeStart, type ListQueryInput, type ResolutionInput } from "./schemas.ts";
import { storeCall, type InvoiceDoc, type StoredStore } from "./store.ts";

export interface StoredCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
  domain: string;
  feeKobo: number;
}

export interface IntakeRequest {
  subBusinessId: string;
  idempotencyKey: string;
  body: Record<string, unknown>;
}

export interface StoredServiceOptions {
  store: StoredStore;
  documentStore: DocumentStore;
  webhooks: InvoiceWebhooks;
  log: Logger;
  secret: Buffer;
  retryBudget: number;
  /** Called after an invoice became due (the in-process processor looks at once). */
  onDue: () => void;
}

const DEFAULT_PAGE = 50;

export function createStoredService(o: StoredServiceOptions) {
  const { store, webhooks, log, secret } = o;
  const invoices = store.invoices;
  const subs = o.documentStore.collection<RepresentedBusiness>(SIGNING_COLLECTIONS.subBusinesses);

  /** Store calls of the intake: anything the store cannot confirm is GW_INVOICE_INTAKE_UNAVAILABLE. */
  const intakeDb = <T>(fn: () => Promise<T>) =>
    storeCall(fn, "GW_INVOICE_INTAKE_UNAVAILABLE", "The gateway could not confirm that the invoice was accepted; retry with the same x-idempotency-key and content.");
  /** Store calls of reads and management mutations. */
  const db = <T>(fn: () => Promise<T>) => storeCall(fn, "GW_MANAGEMENT_SERVICE_UNAVAILABLE", "The invoice store is unavailable; retry with backoff.");

  // -------------------------------------------------------------------------
  // Intake
  // -------------------------------------------------------------------------

  async function intake(caller: StoredCaller, r: IntakeRequest): Promise<InvoiceDoc> {
    const intakeKey = `${caller.businessId}|${keyedHash(secret, `${caller.businessId}\u0000intake\u0000${r.idempotencyKey}`)}`;
    // Optimistic: a first intake (the common case) is checked and inserted without a read of the key;
    // a replay shows itself as a refused check or a duplicate key, and then answers the stored invoice.
    let checked: { document: Record<string, unknown>; filled: string[]; irn: string };
    try {
      checked = await _check(caller, r);
    } catch (e) {
      const existing = await intakeDb(() => invoices.findOne({ intakeKey }));
      if (existing) return _replay(existing, r);
      throw e;
    }
    const { document, filled, irn } = checked;

    const now = new Date();
    const at = now.toISOString();
    const invoiceId = randomUUID();
    const base = {
      _id: invoiceId,
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
      operationId: randomUUID(),
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
    const doc: InvoiceDoc = { ...base, events: webhooks.event(base, "invoice.accepted", "pending", at) };
    try {
      await intakeDb(() => invoices.insert(doc));
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      // The same key (a concurrent duplicate) answers its invoice; otherwise the IRN is taken.
      const same = await intakeDb(() => invoices.findOne({ intakeKey }));
      if (same) return _replay(same, r);
      const holder = await intakeDb(() => invoices.findOne({ irnLock: doc.irnLock }));
      throw gwError("GW_INVOICE_STATE_CONFLICT", {
        detail: holder
          ? `Invoice ${holder._id} (status ${holder.status}) already holds this IRN for the represented business; a new invoice for it is possible once that one is rejected or cancelled.`
          : "Another invoice holds this IRN for the represented business.",
      });
    }
    log.event("stored_invoice_accepted", { requestId: caller.requestId, invoiceId, operationId: doc.operationId });
    o.onDue();
    // The webhook now, when possible; the processor enqueues it otherwise (idempotent).
    if (doc.events.length > 0) await webhooks.enqueue(doc, doc.events).catch(() => undefined);
    return doc;
  }

  /** The represented business (§7.7) and the invoice identity (§4.2 rule 4), on the completed document. */
  async function _check(caller: StoredCaller, r: IntakeRequest): Promise<{ document: Record<string, unknown>; filled: string[]; irn: string }> {
    const sub = await intakeDb(() => subs.get(`${caller.state}:${r.subBusinessId}`));
    if (!sub) throw gwError("GW_SUB_BUSINESS_NOT_FOUND", { detail: "No represented business with that x-sub-business-id." });
    if (sub.businessId !== caller.businessId)
      throw gwError("GW_SUB_BUSINESS_FORBIDDEN", { detail: "That represented business belongs to another top-level business." });
    const { document, filled } = _completed(sub, r.body);
    return { document, filled, irn: checkInvoice(sub, document).irn };
  }

  // -------------------------------------------------------------------------
  // Reads
  // -------------------------------------------------------------------------

  async function get(businessId: string, invoiceId: string): Promise<InvoiceDoc> {
    const doc = await db(() => invoices.get(invoiceId));
    if (!doc || doc.businessId !== businessId) throw _notFound();
    return doc;
  }

  /** The business's invoices (merchant), or every business's (operator: `businessId` null). */
  async function list(businessId: string | null, q: ListQueryInput): Promise<{ items: InvoiceDoc[]; nextCursor: string | null }> {
    const filter: Filter = businessId === null ? {} : { businessId };
    if (q.status) filter.status = q.status;
    if (q.subBusinessId) filter.subBusinessId = q.subBusinessId;
    if (q.direction) filter.direction = q.direction;
    if (q.createdFrom || q.createdTo) {
      const range: Record<string, number> = {};
      if (q.createdFrom) range.$gte = rangeStart(q.createdFrom);
      if (q.createdTo) range.$lte = rangeEnd(q.createdTo);
      filter.createdAtMs = range;
    }
    try {
      return await db(() =>
        invoices.find(filter, { sort: [{ field: "createdAtMs", direction: -1 }], limit: q.limit ?? DEFAULT_PAGE, cursor: q.cursor ?? null }),
      );
    } catch (e) {
      if (!isInvalidQueryError(e)) throw e;
      throw gwError("GW_REQUEST_VALIDATION_FAILED", {
        detail: "The cursor is not one this list returned.",
        violations: [{ location: "query", field: "cursor", code: "FORMAT", detail: "use nextCursor of a previous page" }],
      });
    }
  }

  // -------------------------------------------------------------------------
  // Transmit and cancel by invoice ID
  // -------------------------------------------------------------------------

  /** signed → transmitting (the processor dispatches once); the answers of DECISIONS.md otherwise. */
  async function transmit(caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc> {
    for (;;) {
      const doc = await get(caller.businessId, invoiceId);
      switch (doc.status) {
        case "signed": {
          const updated = await _cas(doc, {
            status: "transmitting",
            statusHistory: [...doc.statusHistory, { status: "transmitting", at: new Date().toISOString() }],
            step: "transmit",
            dueAt: Date.now(),
            lastError: null,
          });
          if (!updated) continue;
          log.event("stored_transmit_requested", { requestId: caller.requestId, invoiceId, operationId: doc.operationId });
          o.onDue();
          return updated;
        }
        case "transmitting":
        case "transmitted":
          throw gwError("GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED", {
            detail: `The invoice's transmission is ${doc.status === "transmitting" ? "in progress" : "recorded"}; nothing new was dispatched.`,
            operationId: doc.operationId,
          });
        case "pending":
        case "validated":
        case "signing":
          throw gwError("GW_INVOICE_NOT_TRANSMITTABLE", { detail: `The invoice is ${doc.status}; it can be transmitted once it is signed.` });
        default:
          throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `A ${doc.status} invoice cannot be transmitted.` });
      }
    }
  }

  /** pending / validated → cancelled (nothing billed); cancelled again → the same answer. */
  async function cancel(caller: StoredCaller, invoiceId: string): Promise<InvoiceDoc> {
    for (;;) {
      const doc = await get(caller.businessId, invoiceId);
      if (doc.status === "cancelled") return doc;
      if ((doc.status !== "pending" && doc.status !== "validated") || doc.direction !== "outbound")
        throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `A ${doc.status} invoice cannot be cancelled.` });
      if (doc.billDoubt)
        throw gwError("GW_INVOICE_STATE_CONFLICT", {
          detail: "The invoice's fee charge is still being confirmed with billing; cancellation is possible once billing answers. Retry later.",
        });
      const updated = await _cas(
        doc,
        {
          status: "cancelled",
          statusHistory: [...doc.statusHistory, { status: "cancelled", at: new Date().toISOString() }],
          step: "done",
          // Webhooks recorded but not yet enqueued still go out.
          dueAt: doc.events.length > 0 ? Date.now() : null,
        },
        ["irnLock"],
      );
      if (!updated) continue;
      log.event("stored_invoice_cancelled", { requestId: caller.requestId, invoiceId, operationId: doc.operationId });
      return updated;
    }
  }

  // -------------------------------------------------------------------------
  // Operator: resolving a frozen invoice
  // -------------------------------------------------------------------------

  /**
   * A frozen invoice resolved by an operator who checked at the regulator (confirm by IRN):
   *   frozen sign         signed → signed (the held debit is confirmed by the processor)
   *                       not_signed → the held debit is reversed, then the invoice is signed again
   *                       under the next attempt number (back through validated)
   *   frozen transmission transmitted → transmitted; not_transmitted → signed (it may be transmitted again)
   */
  async function resolve(
    operator: { requestId: string; credentialId: string; actor?: string },
    invoiceId: string,
    outcome: ResolutionInput["outcome"],
  ): Promise<InvoiceDoc> {
    for (;;) {
      const doc = await db(() => invoices.get(invoiceId));
      if (!doc) throw _notFound();
      if (doc.status !== "frozen") throw gwError("GW_INVOICE_STATE_CONFLICT", { detail: `Only a frozen invoice can be resolved; this one is ${doc.status}.` });
      const at = new Date().toISOString();
      const frozenSign = doc.lastError?.code === "GW_SIGN_OUTCOME_UNCONFIRMED";
      const allowed = frozenSign ? ["signed", "not_signed"] : ["transmitted", "not_transmitted"];
      if (!allowed.includes(outcome))
        throw gwError("GW_REQUEST_VALIDATION_FAILED", {
          detail: `This invoice froze during ${frozenSign ? "signing" : "transmission"}: the outcome is one of ${allowed.join(", ")}.`,
          violations: [{ location: "body", pointer: "/outcome", code: "MISMATCH", detail: `one of ${allowed.join(", ")}` }],
        });
      const history = (s: InvoiceDoc["status"]) => [...doc.statusHistory, { status: s, at }];
      const set: Partial<InvoiceDoc> =
        outcome === "signed"
          ? { status: "signed", statusHistory: history("signed"), step: "done", settle: true, lastError: null, dueAt: Date.now(), events: [...doc.events, ...webhooks.event(doc, "invoice.signed", "signed", at)] }
          : outcome === "not_signed"
            ? { status: "signing", statusHistory: history("signing"), step: "reverse", reverseFor: { why: "regulator_not_called", code: "GW_SIGN_OUTCOME_UNCONFIRMED" }, dueAt: Date.now() }
            : outcome === "transmitted"
              ? { status: "transmitted", statusHistory: history("transmitted"), step: "done", lastError: null, dueAt: Date.now(), events: [...doc.events, ...webhooks.event(doc, "invoice.transmitted", "transmitted", at)] }
              : { status: "signed", statusHistory: history("signed"), step: "done", dueAt: doc.settle || doc.events.length > 0 ? Date.now() : null };
      const updated = await _cas(doc, { ...set, resolution: { outcome, by: operator.actor ?? `operator:${operator.credentialId}`, at } });
      if (!updated) continue;
      log.event("stored_invoice_resolved", { requestId: operator.requestId, credentialId: operator.credentialId, invoiceId, operationId: doc.operationId, outcome });
      o.onDue();
      return updated;
    }
  }

  async function _cas(doc: InvoiceDoc, set: Partial<InvoiceDoc>, unset: string[] = []): Promise<InvoiceDoc | null> {
    const next = { ...set, rev: doc.rev + 1, updatedAt: new Date().toISOString() };
    return db(() => invoices.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, unset.length > 0 ? { $set: next, $unset: unset } : { $set: next }));
  }

  return { intake, get, list, transmit, cancel, resolve };
}

export type StoredService = ReturnType<typeof createStoredService>;

// --- Internal helpers ---

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
  const template = sub.identity.irnTemplate;
  if (!template)
    throw gwError("GW_INVOICE_IRN_INVALID", {
      detail: "The represented business has no IRN template; send irn.",
      violations: [{ location: "body", pointer: "/irn", code: "REQUIRED", detail: "no IRN template to build it from" }],
    });
  doc.irn = template.replaceAll("{{invoice_id}}", doc.invoice_reference).replaceAll("{{YYYYMMDD}}", doc.issue_date.replaceAll("-", ""));
  filled.push("irn");
  return { document: doc, filled };
}

function _notFound() {
  return gwError("GW_INVOICE_NOT_FOUND", { detail: "No invoice with that id under this business." });
}
