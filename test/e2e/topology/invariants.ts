/**
 * The topology test's invariant checker (issue 15, ARCHITECTURE.md §7): after the load and the
 * faults, it reads the stores — the wallet ledger through the BillingLedger port, the other
 * collections through the document-store port — the regulator simulator's own log, the edge's
 * access log and the operations the clients recorded, and proves the money, invoice and answer
 * invariants. Each check throws an assertion naming what broke, with the offending records.
 *
 * What the faults may legitimately leave is accounted for by proof, never by a looser rule:
 * - a request the killed gateway was serving when it died: nginx answered it itself (502, no
 *   gateway X-Request-ID), the last upstream it tried was the killed gateway's address, and the
 *   request started before that address was served again (`diedWithGateway`);
 * - a billed sign such a request left behind is *held* (docs/billing.md, ARCHITECTURE.md §7.1):
 *   debited, maybe signed, never replayed by itself; so is one whose answer said the money is held;
 * - a Stored invoice frozen because its pass was interrupted was leased by the killed worker, at
 *   that very step, when the worker died.
 */
import * as assert from "uvu/assert";
import { createDocumentLedger } from "../../../adapters/billing/ledger.ts";
import type { BillingEntry, BillingLedger, Doc, DocumentStore, Filter } from "../../../adapters/ports.ts";
import type { Config } from "../../../config/schema.ts";
import { CATALOG, isGwCode } from "../../../core/errors/catalog.ts";
import { ngnTextToKobo } from "../../../core/money.ts";
import { IN_FLOW_SUCCESS_EVENT, DEPOSITS_COLLECTION, type Deposit } from "../../../plugins/collections/virtual-accounts/deposit.ts";
import { SESSIONS_COLLECTION, type CheckoutSession } from "../../../plugins/collections/payment-links/checkout/session.ts";
import { SANDBOX_PAYMENTS_COLLECTION } from "../../../adapters/payments/sandbox.ts";
import { WALLET_COLLECTION, type WalletEntry } from "../../../plugins/collections/wallet/wallet.ts";
import { SIGNING_COLLECTIONS, type SignRecord } from "../../../plugins/signing/store.ts";
import { STORED_COLLECTIONS, type InvoiceDoc } from "../../../plugins/stored-processing/store.ts";
import type { ClaimDoc } from "../../../plugins/transmission/service.ts";
import type { EdgeLogLine } from "../../support/nginx.ts";
import type { SimulatorState } from "../../support/topology.ts";
import type { OpRecord } from "./load.ts";

/** What the test did to the processes, and what a dead worker left in the store. */
export interface Faults {
  /** `inFlight`: Pass-through requests the gateway counted in flight just before it was killed. */
  gateway: { name: string; address: string; inFlight: number; killAt: number; killedAt: number; restartedAt: number } | null;
  worker: { name: string; pid: number; killedAt: number; leased: Array<{ invoiceId: string; status: string; step: string }> } | null;
  /** The gateway restarted with a drain (SIGTERM, then started again): nothing of it may be lost. */
  drained: { name: string; at: number; restartedAt: number } | null;
  /** When Redis was down (killed, then started again), and when the store hung (SIGSTOP to SIGCONT). */
  redis: { downAt: number; upAt: number } | null;
  store: { pausedAt: number; resumedAt: number } | null;
}

/** Every document of a collection matching `filter` (all pages). */
export async function allDocs<T extends Doc>(store: DocumentStore, name: string, filter: Filter = {}): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | null = null;
  do {
    const page: { items: T[]; nextCursor: string | null } = await store.collection<T>(name).find(filter, { limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

export interface StoresSnapshot {
  ledgers: Map<string, { balanceKobo: number; openingKobo: number; entries: BillingEntry[] }>;
  signRecords: SignRecord[];
  claims: ClaimDoc[];
  invoices: InvoiceDoc[];
  deposits: Deposit[];
  sessions: CheckoutSession[];
  credits: WalletEntry[];
  outbox: Array<Doc & { businessId: string; eventType: string; idempotencyKey: string; status: string }>;
  /** Session ids the sandbox processor holds a payment for. */
  charged: Set<string>;
  sim: SimulatorState;
}

/** The wallet statement the port returns at most (adapters/billing/ledger.ts `wallet`). */
const STATEMENT_LIMIT = 1000;

export async function readStores(store: DocumentStore, config: Config, sim: SimulatorState): Promise<StoresSnapshot> {
  const openings: Record<string, number> = {};
  for (const b of config.businesses) if (b.gateway) openings[b.id] = ngnTextToKobo(b.gateway.wallet.openingBalance);
  const ledger: BillingLedger = createDocumentLedger({ store, openingBalances: openings });
  const ledgers = new Map<string, { balanceKobo: number; openingKobo: number; entries: BillingEntry[] }>();
  for (const [id, openingKobo] of Object.entries(openings)) {
    const w = await ledger.wallet(id, STATEMENT_LIMIT);
    assert.ok(w.entries.length < STATEMENT_LIMIT, `${id}: the whole statement fits one read (${w.entries.length} entries); lower the load`);
    ledgers.set(id, { balanceKobo: w.balanceKobo, openingKobo, entries: w.entries });
  }
  return {
    ledgers,
    signRecords: await allDocs<SignRecord>(store, SIGNING_COLLECTIONS.idempotency),
    claims: await allDocs<ClaimDoc>(store, "transmission_claims"),
    invoices: await allDocs<InvoiceDoc>(store, STORED_COLLECTIONS.invoices, { direction: "outbound" }),
    deposits: await allDocs<Deposit>(store, DEPOSITS_COLLECTION),
    sessions: await allDocs<CheckoutSession>(store, SESSIONS_COLLECTION),
    credits: await allDocs<WalletEntry>(store, WALLET_COLLECTION),
    outbox: await allDocs(store, "webhook_outbox"),
    charged: await chargedSessions(store),
    sim,
  };
}

/** Terminal: nothing left for the processor (no due work, no lease). */
export function isTerminal(d: InvoiceDoc): boolean {
  return ["transmitted", "rejected", "cancelled", "frozen", "signed"].includes(d.status) && d.dueAt === null && !d.lease;
}

/**
 * What is still owed after the faults: Stored invoices not terminal, deposits undecided or with
 * effects undone, checkouts pending (except those `held`: paid on a gateway that died) or with
 * effects undone.
 */
export async function unfinishedWork(store: DocumentStore, held: (c: CheckoutSession) => boolean): Promise<string[]> {
  const invoices = await allDocs<InvoiceDoc>(store, STORED_COLLECTIONS.invoices, { direction: "outbound" });
  const deposits = await allDocs<Deposit>(store, DEPOSITS_COLLECTION);
  const sessions = await allDocs<CheckoutSession>(store, SESSIONS_COLLECTION);
  return [
    ...invoices.filter((d) => !isTerminal(d)).map((d) => `invoice ${d._id} ${d.status}/${d.step}`),
    ...deposits.filter((d) => d.status === "received" || d.effectsPending).map((d) => `deposit ${d._id} ${d.status}${d.effectsPending ? " (effects pending)" : ""}`),
    ...sessions.filter((c) => c.effectsPending || (c.status === "pending" && !held(c))).map((c) => `checkout ${c._id} ${c.status}${c.effectsPending ? " (effects pending)" : ""}`),
  ];
}

/** A checkout whose form was taken by the killed gateway when it died (its sandbox processor died with it). */
export function heldCheckout(records: OpRecord[], died: Set<string>): (c: CheckoutSession) => boolean {
  return (c) => records.some((r) => r.kind === "checkout" && r.facts.token === c.formToken && died.has(r.callerRequestId));
}

/**
 * A checkout the hung store wrote too late for its request: created while the store hung, and its
 * payer was never shown it (every send answered 5xx or nothing, so the payer gave up). Its insert
 * failed in the request, which never asks the processor after a failed insert; a resubmission that
 * found it would have paid it (and shown it). Nothing was charged: it waits for the 30-minute
 * abandonment like any session its payer left.
 */
/** A session created just before the pause was taken may still have been written by the hung store. */
const STORE_HANG_SLACK_MS = 1_000;

export function strandedByStoreHang(records: OpRecord[], faults: Faults): (c: CheckoutSession) => boolean {
  const hang = faults.store;
  return (c) =>
    hang !== null &&
    c.createdAt >= hang.pausedAt - STORE_HANG_SLACK_MS &&
    c.createdAt <= hang.resumedAt &&
    records.some((r) => r.kind === "checkout" && r.facts.token === c.formToken && !r.ok && r.attempts.every((a) => a.status === null || a.status >= 500));
}

/**
 * A checkout the hung store left pending with nothing charged: created while the store hung, the
 * gateway logged its payment's outcome as unknown (the processor's call failed: on SQLite the
 * processor's own write is refused once the lock outlasts the deadline, where a hung MongoDB-wire
 * server applies it late), and the processor holds no payment for it. As designed, it waits for
 * the look-up before its 30-minute abandonment; no money moved.
 */
export function unchargedByStoreHang(payments: ReadonlySet<string>, gatewayLogs: string, faults: Faults): (c: CheckoutSession) => boolean {
  const hang = faults.store;
  return (c) =>
    hang !== null &&
    c.createdAt >= hang.pausedAt - STORE_HANG_SLACK_MS &&
    c.createdAt <= hang.resumedAt &&
    !payments.has(c._id) &&
    _linesWith(gatewayLogs, c._id).includes("collections_payment_outcome_unknown");
}

/** The session ids the sandbox processor holds a payment for (its documents are keyed by session id). */
export async function chargedSessions(store: DocumentStore): Promise<Set<string>> {
  return new Set((await allDocs(store, SANDBOX_PAYMENTS_COLLECTION)).map((p) => p._id));
}

/**
 * A pending checkout the faults legitimately left pending: held by the killed gateway, stranded by
 * the hung store, or left uncharged by it (`uncharged`, when given).
 */
export function excusedCheckout(records: OpRecord[], edge: EdgeLogLine[], faults: Faults, uncharged?: (c: CheckoutSession) => boolean): (c: CheckoutSession) => boolean {
  const held = heldCheckout(records, diedOps(edge, faults));
  const stranded = strandedByStoreHang(records, faults);
  return (c) => held(c) || stranded(c) || (uncharged?.(c) ?? false);
}

// ---------------------------------------------------------------------------
// The edge and the clients
// ---------------------------------------------------------------------------

/** nginx answered itself: no gateway answer reached it (a gateway's answer always carries X-Request-ID). */
export function answeredByEdge(line: EdgeLogLine): boolean {
  return line.requestId === "";
}

/** The request was on the killed gateway when it died: the edge's 502, that gateway tried last, started before it was back. */
export function diedWithGateway(line: EdgeLogLine, faults: Faults): boolean {
  const g = faults.gateway;
  if (!g || !answeredByEdge(line) || line.status !== 502) return false;
  const startedMs = (line.msec - line.requestTime) * 1000;
  return line.upstream.split(", ").at(-1) === g.address && startedMs <= g.restartedAt;
}

/** Caller request ids (one per operation, on every send) of operations with a send that died with the killed gateway. */
export function diedOps(edge: EdgeLogLine[], faults: Faults): Set<string> {
  return new Set(edge.filter((l) => diedWithGateway(l, faults)).map((l) => l.callerRequestId));
}

/**
 * Every answer a client got is a contract answer: a success, a GW_* problem with its catalog status
 * (never GW_INTERNAL_ERROR), or a collections envelope (never a 500). The only answers the edge made
 * itself are for requests on the killed gateway, and a client saw such a 502 only for such a request.
 * Nothing reached a client as a broken connection (nginx never died). Operations the client gave
 * up on within its budget, sent again with the same key after recovery, succeed — except an
 * onboarding whose request died with the killed gateway: its key stays in progress (503 with
 * Retry-After) until it is stale, then answers GW_ONBOARDING_NOT_RESUMABLE (docs/onboarding.md).
 */
export function checkAnswers(records: OpRecord[], resent: Array<{ first: OpRecord; again: OpRecord }>, edge: EdgeLogLine[], faults: Faults, gatewayLogs: string) {
  const byEdge = edge.filter(answeredByEdge);
  assert.equal(
    byEdge.filter((l) => !diedWithGateway(l, faults)),
    [],
    "nginx answered only requests that were on the killed gateway when it died",
  );
  const died = diedOps(edge, faults);
  const wrong: unknown[] = [];
  const outcome = (r: OpRecord) => ({
    n: r.n,
    kind: r.kind,
    what: r.what,
    status: r.status,
    errorKind: r.errorKind,
    code: r.code,
    facts: r.facts,
    attempts: r.attempts,
    edge: edge
      .filter((l) => l.callerRequestId === r.callerRequestId)
      .map((l) => ({ msec: l.msec, status: l.status, upstream: l.upstream, requestId: l.requestId, logged: l.requestId ? _linesWith(gatewayLogs, l.requestId).slice(0, 2_000) : null })),
    faults: { ...faults, worker: null },
  });
  for (const r of [...records, ...resent.map((x) => x.again)]) {
    if (r.ok) continue;
    if (r.errorKind === "problem") {
      if (!r.code || !isGwCode(r.code) || r.code === "GW_INTERNAL_ERROR" || CATALOG[r.code].status !== r.status) wrong.push(outcome(r));
    } else if (r.errorKind === "collections") {
      if (r.status === null || r.status === 500) wrong.push(outcome(r));
    } else if (r.errorKind === "unexpected") {
      if (r.status !== 502 || !died.has(r.callerRequestId)) wrong.push(outcome(r));
    } else wrong.push(outcome(r));
  }
  assert.equal(wrong, [], "every failure is a contract answer, or the edge's 502 for a request on the killed gateway");
  const notRecovered = resent
    .filter((x) => !x.again.ok && !_onboardingHeldByTheKilledGateway(x, died))
    .map((x) => ({ first: outcome(x.first), again: outcome(x.again) }));
  assert.equal(notRecovered, [], "an operation the client gave up on within its budget succeeds when sent again with the same key after recovery");
  return {
    operations: records.length,
    failed: records.filter((r) => !r.ok).length,
    edgeAnswers: byEdge.length,
    diedWithGateway: died.size,
    resent: resent.length,
  };
}

// ---------------------------------------------------------------------------
// Money
// ---------------------------------------------------------------------------

const identityKey = (e: BillingEntry): string => {
  const i = e.billingIdentity!;
  return JSON.stringify([i.subBusinessId, i.domain, i.irn, i.attemptNumber]);
};

/** Wallet ledger: balance = opening − debits + reversals + credits, never negative; one debit per identity, one reversal per debit. */
export function checkLedgers(s: StoresSnapshot): { debits: number; reversals: number } {
  let debits = 0;
  let reversals = 0;
  for (const [businessId, w] of s.ledgers) {
    let sum = w.openingKobo;
    const debitIds = new Map<string, number>();
    const reversalIds = new Map<string, number>();
    for (const e of w.entries) {
      if (e.type === "debit") {
        sum -= e.amountKobo;
        assert.ok(e.billingIdentity, `${businessId}: debit ${e.id} carries its billing identity`);
        debitIds.set(identityKey(e), (debitIds.get(identityKey(e)) ?? 0) + 1);
      } else if (e.type === "reversal") {
        sum += e.amountKobo;
        reversalIds.set(identityKey(e), (reversalIds.get(identityKey(e)) ?? 0) + 1);
      } else sum += e.amountKobo;
    }
    assert.is(w.balanceKobo, sum, `${businessId}: balance = opening − debits + reversals + credits`);
    assert.ok(w.balanceKobo >= 0, `${businessId}: never negative`);
    assert.equal([...debitIds].filter(([, n]) => n > 1), [], `${businessId}: one debit per billing identity`);
    assert.equal([...reversalIds].filter(([k, n]) => n > 1 || !debitIds.has(k)), [], `${businessId}: one reversal per debit, never one without a debit`);
    debits += debitIds.size;
    reversals += reversalIds.size;
  }
  return { debits, reversals };
}

/** The IRN of a Pass-through sign record (`attemptKey` = state|domain|subBusinessId|irn|attempt). */
const recordIrn = (r: SignRecord): string => r.attemptKey.split("|").at(-2)!;

export interface HeldSign {
  irn: string;
  /** Why the fee is held: the killed gateway died with the request, or the answer said so. */
  why: string;
  /** What the regulator's own log says (issue 14's recovery settles it with this). */
  signedAtRegulator: boolean;
}

/**
 * One regulator sign per debit that was not reversed, with the simulator's log as the witness:
 * every IRN the regulator signed has exactly one unreversed debit (nothing signed for free, nothing
 * charged twice); every unreversed debit's IRN was signed, or its fee is held — a Pass-through sign
 * whose request died with the killed gateway or whose answer said the money is held, or a frozen
 * Stored invoice (checkStoredInvoices proves why it froze). Every sign record left in progress
 * is one the killed gateway died with (or one whose final write or release the store outage lost,
 * as the gateway logged). Every sign a merchant saw succeed is signed once at the regulator, and a
 * merchant who checks a sign that got no answer (GET …/confirm/{irn}) is told the regulator's truth.
 */
export function checkOneSignPerUnreversedDebit(
  s: StoresSnapshot,
  records: OpRecord[],
  checks: Array<{ irn: string; answer: string }>,
  edge: EdgeLogLine[],
  faults: Faults,
  gatewayLogs: string,
) {
  const reversed = new Set<string>();
  const unreversed: BillingEntry[] = [];
  for (const w of s.ledgers.values()) for (const e of w.entries) if (e.type === "reversal") reversed.add(identityKey(e));
  for (const w of s.ledgers.values()) for (const e of w.entries) if (e.type === "debit" && !reversed.has(identityKey(e))) unreversed.push(e);
  const debitsByIrn = new Map<string, number>();
  for (const e of unreversed) debitsByIrn.set(e.billingIdentity!.irn, (debitsByIrn.get(e.billingIdentity!.irn) ?? 0) + 1);
  const signed = new Set(s.sim.signed);

  assert.equal(
    [...signed].filter((irn) => debitsByIrn.get(irn) !== 1).map((irn) => ({ irn, unreversedDebits: debitsByIrn.get(irn) ?? 0 })),
    [],
    "every IRN the regulator signed has exactly one unreversed debit",
  );

  const died = diedOps(edge, faults);
  const signOps = new Map<string, OpRecord[]>();
  for (const r of records) if (r.kind === "sign") signOps.set(String(r.facts.irn), [...(signOps.get(String(r.facts.irn)) ?? []), r]);
  const diedWith = (irn: string) => (signOps.get(irn) ?? []).some((r) => died.has(r.callerRequestId));

  const unexplained: unknown[] = [];
  const held: HeldSign[] = [];
  for (const r of s.signRecords) {
    const irn = recordIrn(r);
    if (r.status === "in_progress") {
      const logged = _linesWith(gatewayLogs, r.operationId);
      if (diedWith(irn)) held.push({ irn, why: `gateway killed mid-sign (phase ${r.phase})`, signedAtRegulator: signed.has(irn) });
      else if (/"event":"signing_record_write_failed"/.test(logged)) held.push({ irn, why: "final record write lost to the store outage", signedAtRegulator: signed.has(irn) });
      else if (/"event":"signing_claim_release_failed"/.test(logged)) held.push({ irn, why: "claim release lost to the store outage", signedAtRegulator: signed.has(irn) });
      else unexplained.push({ irn, status: r.status, phase: r.phase, money: r.money });
    } else if (r.money === "held") held.push({ irn, why: r.answer?.kind === "error" ? r.answer.code : "held", signedAtRegulator: signed.has(irn) });
  }
  assert.equal(unexplained, [], "every sign record left in progress belongs to a request that died with the killed gateway");

  const heldIrns = new Set(held.map((h) => h.irn));
  const frozenStored = new Set(s.invoices.filter((d) => d.status === "frozen").map((d) => d.irn));
  assert.equal(
    unreversed.map((e) => e.billingIdentity!.irn).filter((irn) => !signed.has(irn) && !heldIrns.has(irn) && !frozenStored.has(irn)),
    [],
    "every unreversed debit was signed by the regulator, or its fee is held (killed gateway, an answer saying so, a frozen Stored invoice)",
  );
  assert.equal(
    records.filter((r) => r.kind === "sign" && r.ok && !signed.has(String(r.facts.irn))).map((r) => r.facts.irn),
    [],
    "every sign a merchant saw succeed is signed at the regulator",
  );
  assert.equal(
    checks.filter((c) => (c.answer === "signed") !== signed.has(c.irn)),
    [],
    "a merchant checking a sign that got no answer is told what the regulator has",
  );
  const reversals = [...s.ledgers.values()].flatMap((w) => w.entries).filter((e) => e.type === "reversal").length;
  const calls = s.sim.calls.sign ?? 0;
  assert.ok(calls >= signed.size && calls <= unreversed.length + reversals, `sign calls (${calls}) lie between the IRNs signed (${signed.size}) and the debits made`);
  return { signed: signed.size, unreversedDebits: unreversed.length, reversals, held, merchantChecks: checks };
}

// ---------------------------------------------------------------------------
// Invoices
// ---------------------------------------------------------------------------

/**
 * One regulator transmission per claim: one Pass-through claim per (state, represented business,
 * IRN), a Stored invoice transmits once; the regulator transmitted nothing without a claim and
 * nothing twice; a claim left in progress is one the killed gateway died with (or one whose final
 * write or take-back the store outage lost, as the gateway logged).
 */
export function checkOneTransmissionPerClaim(s: StoresSnapshot, records: OpRecord[], edge: EdgeLogLine[], faults: Faults, gatewayLogs: string) {
  const owners = new Map<string, string>();
  for (const c of s.claims) if (c.claimState !== "rejected") owners.set(c.irn, `claim:${c.claimState}`);
  for (const d of s.invoices) if (d.statusHistory.some((h) => h.status === "transmitting")) owners.set(d.irn, `stored:${d.status}`);
  const transmitted = s.sim.transmitted;
  assert.is(new Set(transmitted).size, transmitted.length, "the regulator transmitted each IRN once");
  assert.equal(transmitted.filter((irn) => !owners.has(irn)), [], "every transmission at the regulator belongs to a claim or a Stored invoice's transmission");
  const missing = [
    ...s.claims.filter((c) => c.claimState === "succeeded" && !transmitted.includes(c.irn)).map((c) => `claim ${c.irn}`),
    ...s.invoices.filter((d) => d.status === "transmitted" && !transmitted.includes(d.irn)).map((d) => `stored ${d.irn}`),
    ...records.filter((r) => r.kind === "transmit" && r.ok && !transmitted.includes(String(r.facts.irn))).map((r) => `answered ${r.facts.irn}`),
  ];
  assert.equal(missing, [], "every succeeded claim, transmitted Stored invoice and 2xx transmit answer is transmitted at the regulator");

  const died = diedOps(edge, faults);
  const transmitOps = records.filter((r) => r.kind === "transmit");
  const open = s.claims.filter((c) => c.claimState === "in_progress");
  const unexplained = open.filter(
    (c) =>
      !transmitOps.some((r) => r.facts.irn === c.irn && died.has(r.callerRequestId)) &&
      !/"event":"transmission_claim_(write|release)_failed"/.test(_linesWith(gatewayLogs, c.operationId)),
  );
  assert.equal(unexplained.map((c) => c.irn), [], "every claim left in progress belongs to a request that died with the killed gateway");
  return { transmitted: transmitted.length, claims: s.claims.length, inProgress: open.map((c) => ({ irn: c.irn, transmittedAtRegulator: transmitted.includes(c.irn) })) };
}

/**
 * Stored mode: every invoice a merchant got a 202 for exists, one per intake key and per IRN, and
 * is terminal after recovery; a frozen invoice was leased by the killed worker, at the step its
 * freeze names (an interrupted sign dispatch or transmission), when the worker died — or its
 * processor logged that the store never told it whether its dispatch mark landed.
 */
export function checkStoredInvoices(s: StoresSnapshot, records: OpRecord[], faults: Faults, workerLogs: string) {
  const byId = new Map(s.invoices.map((d) => [d._id, d]));
  const accepted = records.filter((r) => r.kind === "submit" && r.ok);
  assert.equal(accepted.filter((r) => !byId.has(String(r.facts.invoiceId))).map((r) => r.facts.invoiceId), [], "every 202 invoice exists");
  const perKey = new Map<string, Set<string>>();
  for (const r of accepted) perKey.set(r.idempotencyKey!, (perKey.get(r.idempotencyKey!) ?? new Set()).add(String(r.facts.invoiceId)));
  assert.equal([...perKey].filter(([, ids]) => ids.size > 1), [], "one invoice per intake key");
  const perIrn = new Map<string, number>();
  for (const d of s.invoices) perIrn.set(d.irn, (perIrn.get(d.irn) ?? 0) + 1);
  assert.equal([...perIrn].filter(([, n]) => n > 1), [], "one invoice per IRN");
  assert.equal(s.invoices.filter((d) => !isTerminal(d)).map((d) => `${d._id} ${d.status}/${d.step}`), [], "every invoice is terminal");

  const leased = new Map((faults.worker?.leased ?? []).map((l) => [l.invoiceId, l]));
  const wrongFreeze = s.invoices
    .filter((d) => d.status === "frozen")
    .filter((d) => {
      const l = leased.get(d._id);
      const step = d.lastError?.code === "GW_TRANSMIT_OUTCOME_UNCONFIRMED" ? "transmitting" : "dispatching";
      if (l?.step === step) return false;
      // The processor itself could not learn whether its dispatch mark landed (the store stayed away).
      return !/"event":"stored_dispatch_mark_unresolved"/.test(_linesWith(workerLogs, d._id));
    })
    .map((d) => ({ invoiceId: d._id, code: d.lastError?.code, history: d.statusHistory, logged: _linesWith(workerLogs, d._id).slice(0, 3_000) }));
  // The faults' times beside the evidence: a freeze is read against what happened when.
  const when = (t: number | undefined) => (t ? new Date(t).toISOString() : null);
  const faultTimes = {
    gatewayKilled: when(faults.gateway?.killedAt),
    workerKilled: when(faults.worker?.killedAt),
    leasedByKilledWorker: faults.worker?.leased ?? [],
    drained: when(faults.drained?.at),
    redisDown: [when(faults.redis?.downAt), when(faults.redis?.upAt)],
    storePaused: [when(faults.store?.pausedAt), when(faults.store?.resumedAt)],
  };
  assert.equal(wrongFreeze, [], `a frozen invoice was mid-dispatch in the killed worker's hands (faults: ${JSON.stringify(faultTimes)})`);

  const statuses: Record<string, number> = {};
  for (const d of s.invoices) statuses[d.status] = (statuses[d.status] ?? 0) + 1;
  const seenPending = records.filter((r) => r.kind === "read" && r.facts.invoiceId && ["pending", "validated", "signing", "transmitting"].includes(String(r.facts.status))).length;
  return { accepted: new Set(accepted.map((r) => r.facts.invoiceId)).size, statuses, readsThatSawPending: seenPending, leasedByKilledWorker: leased.size };
}

// ---------------------------------------------------------------------------
// Collections
// ---------------------------------------------------------------------------

/**
 * Deposits: a settled deposit credited the collection wallet once and has one
 * IN_FLOW_SUCCESS_EVENT in the outbox; a refunded one neither; none is left undecided.
 */
export function checkDeposits(s: StoresSnapshot): { settled: number; refunded: number } {
  const credits = new Map(s.credits.map((c) => [c._id, c]));
  const events = new Map<string, number>();
  for (const m of s.outbox) if (m.eventType === IN_FLOW_SUCCESS_EVENT) events.set(m.idempotencyKey, (events.get(m.idempotencyKey) ?? 0) + 1);
  let settled = 0;
  let refunded = 0;
  const wrong: unknown[] = [];
  for (const d of s.deposits) {
    const credit = credits.get(`credit:virtual_account_deposit:${d._id}`);
    const ev = events.get(`${IN_FLOW_SUCCESS_EVENT}:${d._id}`) ?? 0;
    if (d.checkoutSessionId) {
      // A transfer into a checkout's account is the checkout's payment: its credit and event are
      // the session's (checked by checkCheckouts), never the deposit's.
      if (d.status === "settled") settled++;
      else if (d.status === "refunded") refunded++;
      if (credit || ev !== 0 || d.status === "received") wrong.push({ sessionId: d._id, status: d.status, checkout: d.checkoutSessionId, credit: credit?.amountKobo ?? null, events: ev });
      continue;
    }
    if (d.status === "settled") {
      settled++;
      if (!credit || credit.amountKobo !== d.amountKobo || ev !== 1 || d.effectsPending) wrong.push({ sessionId: d._id, status: d.status, credit: credit?.amountKobo ?? null, events: ev, effectsPending: d.effectsPending });
    } else if (d.status === "refunded") {
      refunded++;
      if (credit || ev !== 0) wrong.push({ sessionId: d._id, status: d.status, credit: credit?.amountKobo ?? null, events: ev });
    } else wrong.push({ sessionId: d._id, status: d.status });
  }
  assert.equal(wrong, [], "every deposit settled once (one credit, one IN_FLOW_SUCCESS_EVENT) or refunded (neither); none undecided");
  const sessions = new Set(s.deposits.map((d) => `${IN_FLOW_SUCCESS_EVENT}:${d._id}`));
  assert.equal([...events.keys()].filter((k) => !sessions.has(k)), [], "no IN_FLOW_SUCCESS_EVENT without its deposit");
  return { settled, refunded };
}

/**
 * Checkouts: a successful session credited the wallet once with its net amount and has one
 * CHECKOUT_COMPLETED; no other session is credited. A session still pending is one whose payment
 * the killed gateway was processing (the sandbox processor runs in the gateway that took the form;
 * the worker abandons it after 30 minutes), or one the hung store wrote after its payer gave up
 * (`strandedByStoreHang`: never sent to the processor).
 */
export function checkCheckouts(s: StoresSnapshot, records: OpRecord[], edge: EdgeLogLine[], faults: Faults, gatewayLogs: string) {
  const credits = new Map(s.credits.map((c) => [c._id, c]));
  const events = new Map<string, number>();
  for (const m of s.outbox) events.set(m.idempotencyKey, (events.get(m.idempotencyKey) ?? 0) + 1);
  const wrong: unknown[] = [];
  let successful = 0;
  for (const c of s.sessions) {
    const credit = credits.get(`credit:payment_link_checkout:${c._id}`);
    if (c.status === "successful") {
      successful++;
      if (!credit || credit.amountKobo !== c.netKobo || events.get(`CHECKOUT_COMPLETED:${c._id}`) !== 1 || c.effectsPending)
        wrong.push({ session: c._id, credit: credit?.amountKobo ?? null, net: c.netKobo, events: events.get(`CHECKOUT_COMPLETED:${c._id}`) ?? 0 });
    } else if (credit) wrong.push({ session: c._id, status: c.status, credit: credit.amountKobo });
  }
  assert.equal(wrong, [], "every successful checkout credited once with one CHECKOUT_COMPLETED; no other session credited");
  const held = heldCheckout(records, diedOps(edge, faults));
  const stranded = strandedByStoreHang(records, faults);
  const uncharged = unchargedByStoreHang(s.charged, gatewayLogs, faults);
  const pending = s.sessions.filter((c) => c.status === "pending");
  assert.equal(
    pending.filter((c) => !held(c) && !stranded(c) && !uncharged(c)).map((c) => ({ session: c._id, createdAt: c.createdAt, logged: _linesWith(gatewayLogs, c._id).slice(0, 2_000) })),
    [],
    "a checkout still pending was being paid on the killed gateway when it died, written by the hung store after its payer gave up, or left uncharged by it",
  );
  return {
    sessions: s.sessions.length,
    successful,
    pending: pending.length,
    held: pending.filter(held).length,
    stranded: pending.filter((c) => !held(c) && stranded(c)).length,
    uncharged: pending.filter((c) => !held(c) && !stranded(c) && uncharged(c)).length,
  };
}

/** The collection wallet: its credits are exactly one per settled deposit and successful checkout, with that amount. */
export function checkCollectionWallets(s: StoresSnapshot): void {
  const expected = new Map<string, number>();
  for (const d of s.deposits) if (d.status === "settled") expected.set(`credit:virtual_account_deposit:${d._id}`, d.amountKobo);
  for (const c of s.sessions) if (c.status === "successful") expected.set(`credit:payment_link_checkout:${c._id}`, c.netKobo);
  assert.equal(s.credits.filter((c) => expected.get(c._id) !== c.amountKobo).map((c) => c._id), [], "no credit without a settled source, none with another amount");
  assert.is(s.credits.length, expected.size, "one credit per settled source");
}

// --- Internal helpers ---

/** The log lines that mention `needle`. */
function _linesWith(logs: string, needle: string): string {
  return logs
    .split("\n")
    .filter((l) => l.includes(needle))
    .join("\n");
}

/**
 * An onboarding whose first request was on the killed gateway when it died, resent with its key:
 * the documented answers are "still in progress" (503 GW_MANAGEMENT_SERVICE_UNAVAILABLE, until the
 * record is stale) or, once stale, 409 GW_ONBOARDING_NOT_RESUMABLE — never a success it cannot prove.
 */
function _onboardingHeldByTheKilledGateway(x: { first: OpRecord; again: OpRecord }, died: Set<string>): boolean {
  return (
    x.first.kind === "onboard" &&
    died.has(x.first.callerRequestId) &&
    (x.again.code === "GW_MANAGEMENT_SERVICE_UNAVAILABLE" || x.again.code === "GW_ONBOARDING_NOT_RESUMABLE")
  );
}
