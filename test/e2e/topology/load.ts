/**
 * The topology test's traffic (issue 15): merchants acting through the merchant client (client/,
 * docs/client.md), which retries as spec §7 says, and payers submitting the checkout form like a
 * browser, all through nginx. Every operation is recorded with every send the client made
 * (`onAttempt`), its caller X-Request-ID (nginx logs it, so each send can be matched with the
 * gateway that served it) and how it ended.
 *
 * A virtual user runs one operation at a time, cycling through MIX, until `stop()`. Nothing here
 * asserts: the invariant checker (invariants.ts) reads these records afterwards.
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "undici";
import {
  createCollectionsClient,
  createInvoiceGatewayClient,
  isCollectionsApiError,
  isConnectionError,
  isGatehouseError,
  isProblemError,
  isUnexpectedResponseError,
  type AttemptRecord,
  type CallOptions,
  type IntakeDocument,
  type Result,
} from "../../../client/index.ts";
import { BEARER_DEMO, DEMO_KEY, PASSTHROUGH, STORED, STORED_KEY } from "../../support/gateway.ts";
import { DEMO, STORED_DEMO, demoInvoice, storedDemoInvoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

export const COLLECTIONS_HOST = "collections.demo.localhost";

export type OpKind = "sign" | "submit" | "read" | "deposit" | "checkout" | "transmit" | "onboard";

/** One cycle of a virtual user's operations. */
export const MIX: readonly OpKind[] = ["sign", "submit", "read", "deposit", "sign", "checkout", "read", "submit", "onboard", "transmit", "read", "deposit"];

export interface Attempt {
  send: number;
  at: number;
  status: number | null;
  code: string | null;
  next: string;
}

export interface OpRecord {
  n: number;
  kind: OpKind;
  /** What exactly (the read's route, the taxpayer onboarded, …). */
  what: string;
  /** The X-Request-ID we sent with every send of this operation. */
  callerRequestId: string;
  idempotencyKey: string | null;
  startedAt: number;
  endedAt: number;
  ok: boolean;
  status: number | null;
  /** Failure: the client's error kind, the GW_* code when it was a problem, what to do now. */
  errorKind: "problem" | "collections" | "connection" | "unexpected" | "other" | null;
  code: string | null;
  strategy: string | null;
  stopReason: string | null;
  attempts: Attempt[];
  /** What the answer named: invoiceId, irn, sessionId, gatewaySubBusinessId, … */
  facts: Record<string, string | number | null>;
  /** Sends the same operation again (same key, same content), as a merchant told to retry later does. */
  resend?: () => Promise<OpRecord>;
}

export interface LoadSetup {
  url: string;
  /** The represented business onboarded before the load, and its onboarding key (replayed by the load). */
  subBusinessId: string;
  onboardingKey: string;
  paymentLinks: string[];
  accountNumbers: string[];
}

export interface Load {
  records: OpRecord[];
  /** Resolves when every virtual user has finished its current operation. */
  stop(): Promise<void>;
  /** Closes the connections (after the last `resend`). */
  close(): Promise<void>;
}

/** Extra taxpayers of config/regulator-fixtures.json onboarded once each during the load. */
const EXTRA_TAXPAYERS = [
  { email: "multi@demo.ng", password: "demo-password-2", tin: "22222222-0001" },
  { email: "multi@demo.ng", password: "demo-password-2", tin: "22222222-0002" },
  // example-template@demo.ng is the Stored business's taxpayer (setup onboards it there; one business each).
];

export interface LoadOptions {
  /** Virtual users, each running one operation at a time. */
  users: number;
  /** Pause of a virtual user between two operations (keeps the load bounded on any machine). */
  pauseMs: number;
  /** Operations per virtual user at most. */
  maxOpsPerUser: number;
}

export function startLoad(setup: LoadSetup, options: LoadOptions): Load {
  const { users, pauseMs, maxOpsPerUser } = options;
  const records: OpRecord[] = [];
  const dispatcher = new Agent({ connections: 4, keepAliveTimeout: 10_000 });
  let running = true;
  let counter = 0;
  const signed: string[] = [];
  const invoiceIds: string[] = [];
  const extra = [...EXTRA_TAXPAYERS];

  const vus = Array.from({ length: users }, async (_, u) => {
    let deposits = 0;
    const attempts: Attempt[] = [];
    const onAttempt = (r: AttemptRecord) => void attempts.push({ send: r.send, at: r.at, status: r.status, code: r.code, next: r.next });
    const common = { baseUrl: setup.url, dispatcher, onAttempt, idempotencyKeyPrefix: `topo-u${u}` };
    const pt = createInvoiceGatewayClient({ ...common, host: PASSTHROUGH, apiKey: DEMO_KEY });
    const st = createInvoiceGatewayClient({ ...common, host: STORED, apiKey: STORED_KEY });
    const co = createCollectionsClient({ ...common, host: COLLECTIONS_HOST, apiKey: BEARER_DEMO });

    /** Runs one client operation and records it; `resend` repeats it with the same key and content. */
    const run = async <T>(
      kind: OpKind,
      what: string,
      call: (opts: CallOptions) => Promise<Result<T>>,
      facts: (data: T) => Record<string, string | number | null>,
      base: Record<string, string | number | null> = {},
      key?: string,
    ): Promise<OpRecord> => {
      const n = ++counter;
      attempts.length = 0;
      const rec = _record(n, kind, what, key ?? null, { ...base });
      try {
        const res = await call({ requestId: rec.callerRequestId, ...(key ? { idempotencyKey: key } : {}) });
        rec.ok = true;
        rec.status = res.status;
        rec.idempotencyKey = res.idempotencyKey;
        Object.assign(rec.facts, facts(res.data));
      } catch (e) {
        rec.errorKind = isGatehouseError(e) ? e.kind : "other";
        if (isGatehouseError(e)) {
          rec.idempotencyKey = e.idempotencyKey;
          rec.strategy = e.strategy;
          rec.stopReason = e.stopReason ?? null;
          rec.status = "status" in e && typeof e.status === "number" ? e.status : null;
          if (isProblemError(e)) rec.code = e.code;
        } else rec.code = String(e);
        if (isConnectionError(e)) rec.code = e.transportCode;
        if (isUnexpectedResponseError(e)) rec.facts.answer = `${e.contentType} ${e.bodyExcerpt.slice(0, 300)}`;
        if (isCollectionsApiError(e)) rec.code = `collections_${e.status}`;
      }
      rec.endedAt = Date.now();
      rec.attempts = [...attempts];
      const sameKey = rec.idempotencyKey;
      rec.resend = () => run(kind, `${what} (resent)`, call, facts, base, sameKey ?? undefined);
      return rec;
    };

    const op = async (kind: OpKind, i: number): Promise<OpRecord> => {
      switch (kind) {
        case "sign": {
          const no = `TS${u}X${i}`;
          const doc = demoInvoice(no);
          return run("sign", "POST /api/v1/invoice/sign (Pass-through)", (o) => pt.invoices.sign(setup.subBusinessId, doc, { ...o, attemptNumber: 1 }), () => {
            signed.push(doc.irn);
            return {};
          }, { irn: doc.irn });
        }
        case "submit": {
          const doc = storedDemoInvoice(`TQ${u}X${i}`) as IntakeDocument;
          return run("submit", "POST /api/v1/invoice/sign (Stored)", (o) => st.stored.submit(STORED_DEMO.businessId, doc, o), (d) => {
            invoiceIds.push(d.invoiceId);
            return { invoiceId: d.invoiceId, status: d.status };
          }, { irn: (doc as { irn: string }).irn });
        }
        case "transmit": {
          const irn = signed.shift();
          if (!irn) return op("read", i);
          return run("transmit", "POST /api/v1/invoice/transmit/{irn}", (o) => pt.invoices.transmit(setup.subBusinessId, irn, o), () => ({}), { irn });
        }
        case "deposit": {
          const accountNumber = setup.accountNumbers[(u + deposits++) % setup.accountNumbers.length]!;
          const amount = 1_000 + ((u * 37 + i) % 50) * 10;
          return run(
            "deposit",
            "POST /api/v1/sandbox/virtual-account/deposit",
            (o) =>
              co.sandbox.deposit({ account_number: accountNumber, amount, sender_name: "Ada Payer", sender_account_number: "0123456789", sender_bank: "Test Bank" }, o),
            (d) => ({ sessionId: d.data.sessionId, depositStatus: d.data.status }),
            { accountNumber, amount },
          );
        }
        case "onboard": {
          const t = extra.shift();
          if (t)
            return run(
              "onboard",
              `POST /sub-businesses (${t.email}${t.tin ? ` ${t.tin}` : ""})`,
              (o) => pt.subBusinesses.onboard({ regulatorCredentials: { email: t.email, password: t.password }, ...(t.tin ? { tin: t.tin } : {}) }, o),
              (d) => ({ gatewaySubBusinessId: d.gatewaySubBusinessId }),
            );
          return run(
            "onboard",
            "POST /sub-businesses (replay of the setup onboarding)",
            (o) => pt.subBusinesses.onboard({ regulatorCredentials: { email: DEMO.email, password: DEMO.password } }, o),
            (d) => ({ gatewaySubBusinessId: d.gatewaySubBusinessId }),
            {},
            setup.onboardingKey,
          );
        }
        case "checkout":
          return checkout(u, i);
        case "read": {
          const which = i % 6;
          if (which === 0 && invoiceIds.length > 0) {
            const id = invoiceIds[(i * 7) % invoiceIds.length]!;
            return run("read", "GET /invoices/{id}", (o) => st.stored.get(id, o), (d) => ({ invoiceId: d.invoiceId, status: d.status }), { invoiceId: id });
          }
          if (which === 1) return run("read", "GET /invoices", (o) => st.stored.list({ limit: 5 }, o), (d) => ({ count: d.data.length }));
          if (which === 2) return run("read", "GET /sub-businesses", (o) => pt.subBusinesses.list({}, o), (d) => ({ count: d.data.length }));
          if (which === 3)
            return run("read", "GET /api/v1/virtual-account/find", (o) => co.virtualAccounts.find({ sourceReference: `topo-va-${i % setup.accountNumbers.length}` }, o), () => ({}));
          if (which === 4) return run("read", "GET /api/v1/balances/transactions", (o) => co.balances.transactions({ limit: 5 }, o), () => ({}));
          return run("read", "GET /api/v1/payment-link", (o) => co.paymentLinks.list({ limit: 5 }, o), () => ({}));
        }
      }
    };

    /** A payer's browser: the checkout form, resubmitted with the same token when no answer came back. */
    const checkout = async (uu: number, i: number): Promise<OpRecord> => {
      const n = ++counter;
      const reference = setup.paymentLinks[(uu + i) % setup.paymentLinks.length]!;
      const token = randomUUID();
      const rec = _record(n, "checkout", "POST /pay/{reference} (checkout form)", token, { reference, token });
      const form = new URLSearchParams({ amount: String(150 + (i % 20)), email: `payer${uu}@example.com`, outcome: "success", checkout_token: token }).toString();
      for (let send = 1; send <= 4; send++) {
        let status: number | null = null;
        let location: string | null = null;
        let text = "";
        try {
          const res = await request(`${setup.url}/pay/${reference}`, {
            method: "POST",
            dispatcher,
            headers: { host: COLLECTIONS_HOST, "content-type": "application/x-www-form-urlencoded", "x-request-id": rec.callerRequestId },
            body: form,
            headersTimeout: 30_000,
            bodyTimeout: 30_000,
          });
          text = await res.body.text();
          status = res.statusCode;
          location = typeof res.headers.location === "string" ? res.headers.location : null;
        } catch (e) {
          rec.errorKind = "connection";
          rec.code = (e as { code?: string }).code ?? String(e);
        }
        const html = status === 502 || status === 503 || status === 504 || status === null;
        rec.attempts.push({ send, at: Date.now(), status, code: null, next: html && send < 4 ? "retry" : "return" });
        rec.status = status;
        // A refusal the gateway rendered (the collections error envelope: a draining gateway's 503, a store outage's).
        if (status !== null && status >= 500 && _isCollectionsEnvelope(text, status)) rec.errorKind = "collections";
        if (!html) {
          rec.ok = status === 303;
          rec.errorKind = rec.ok ? null : rec.errorKind;
          rec.facts.sessionId = location ? decodeURIComponent(location.split("/").pop()!) : null;
          break;
        }
        await new Promise((r) => setTimeout(r, 250 * send));
      }
      rec.endedAt = Date.now();
      return rec;
    };

    for (let i = u; running && i < u + maxOpsPerUser; i++) {
      records.push(await op(MIX[i % MIX.length]!, i));
      await new Promise((r) => setTimeout(r, pauseMs));
    }
  });

  return {
    records,
    async stop() {
      running = false;
      await Promise.all(vus);
    },
    close: () => dispatcher.close(),
  };
}

// --- Internal helpers ---

/** A new operation record, before its first send (its caller X-Request-ID names it on every send). */
function _record(n: number, kind: OpKind, what: string, idempotencyKey: string | null, facts: OpRecord["facts"]): OpRecord {
  return {
    n,
    kind,
    what,
    callerRequestId: `topo-${kind}-${n}`,
    idempotencyKey,
    startedAt: Date.now(),
    endedAt: 0,
    ok: false,
    status: null,
    errorKind: null,
    code: null,
    strategy: null,
    stopReason: null,
    attempts: [],
    facts,
  };
}

/** The collections service's error envelope (core/errors/render.ts) with this status: an answer of the gateway, not of the edge. */
function _isCollectionsEnvelope(text: string, status: number): boolean {
  try {
    const body = JSON.parse(text) as { statusCode?: unknown; requestId?: unknown; message?: unknown };
    return body.statusCode === status && typeof body.requestId === "string" && typeof body.message === "string";
  } catch {
    return false;
  }
}
