/**
 * Scenario "console-pages": every operator-console screen rendered over real HTTP through the full
 * gateway, on the embedded default (an SQLite file in a temporary folder) holding
 * CONSOLE_BENCH_INVOICES Stored invoices (default 100 000), of which CONSOLE_BENCH_FROZEN are frozen
 * (default 10 000), and CONSOLE_BENCH_LETTERS dead-lettered alerts (default 10 000). Goal: p99 ≤ 50 ms
 * per page.
 *
 *   npm run bench -- --only console-pages
 *
 * Seeding goes straight into the store through the Stored invoices and dead-letter collections
 * (1 000 inserts in flight per batch). Each page: 3 warm-up requests, then CONSOLE_BENCH_REQUESTS (default 30)
 * sequential requests on one keep-alive connection with a signed-in operator's cookie; a page that
 * does not answer 200 is a problem.
 */
import { request, type Agent } from "undici";
import type { LetterDoc } from "../../adapters/alerts/state.ts";
import { DEAD_LETTERS_COLLECTION } from "../../adapters/alerts/types.ts";
import type { DocumentStore } from "../../adapters/ports.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../plugins/invoice/stored-invoices.ts";
import { ADMIN_KEY, STORED } from "../../test/support/gateway.ts";
import { envInt } from "../report.ts";
import { pageNotes, runPageBench, worstPageResult } from "../page-timing.ts";
import type { BenchScenario } from "../run.ts";

const BATCH = 1000;
const PAGES = [
  "/console",
  "/console/frozen",
  "/console/frozen?businessId=demo",
  "/console/alerts",
  "/console/businesses",
  "/console/businesses/demo",
  "/console/audit",
  "/console/audit?actor=operator%3Ademo-operator",
  "/console/audit?from=2020-01-01&to=2099-01-01",
  "/console/search?q=inv-00000010",
  "/console/search?q=CONSA-94ND90NR-20240611",
  "/console/invoices/inv-00000010",
];


export const consolePagesScenario: BenchScenario = {
  names: ["console-pages"],
  async run({ env, progress }) {
    const invoices = envInt(env.CONSOLE_BENCH_INVOICES, 100_000, 100, "CONSOLE_BENCH_INVOICES");
    const frozen = Math.min(invoices, envInt(env.CONSOLE_BENCH_FROZEN, 10_000, 1, "CONSOLE_BENCH_FROZEN"));
    const letters = envInt(env.CONSOLE_BENCH_LETTERS, 10_000, 0, "CONSOLE_BENCH_LETTERS");
    const requests = envInt(env.CONSOLE_BENCH_REQUESTS, 30, 1, "CONSOLE_BENCH_REQUESTS");
    const r = await _run(invoices, frozen, letters, requests, progress);
    const result = worstPageResult("console-pages", `console screens over ${invoices} Stored invoices (${frozen} frozen) and ${letters} dead letters, one request at a time`, r.pages, requests, { invoices, frozen, letters, seedSeconds: r.seedSeconds });
    const notes = pageNotes("console-pages", r.pages);
    return { results: [result], notes, problems: r.problems, extra: r };
  },
};

// --- Internal helpers ---

function _run(count: number, frozen: number, letters: number, requests: number, progress: (line: string) => void) {
  return runPageBench({
    scenario: "console-pages",
    host: "localhost",
    requests,
    progress,
    async seed(store) {
      await _seed(store, count, frozen, Date.now(), progress);
      await _seedLetters(store, letters, Date.now());
      return { seeded: `${count} invoices (${frozen} frozen) and ${letters} dead letters`, known: null };
    },
    signIn: _signIn,
    pages: async () => PAGES,
  });
}

async function _signIn(base: string, agent: Agent): Promise<string> {
  const res = await request(`${base}/console/sign-in`, {
    method: "POST",
    headers: { host: "localhost", origin: "http://localhost", "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ key: ADMIN_KEY, next: "/console" }).toString(),
    dispatcher: agent,
  });
  await res.body.dump();
  const set = ([] as string[]).concat(res.headers["set-cookie"] ?? []);
  const session = set.map((c) => c.split(";")[0]!).find((c) => c.startsWith("gh_console="));
  if (res.statusCode !== 303 || !session) throw new Error(`bench console-pages: sign-in answered ${res.statusCode}`);
  return session;
}


/**
 * `count` Stored invoices of business demo over the last 90 days; every (count/frozen)-th is frozen,
 * the rest transmitted (the dashboard-pages scenario seeds with it too).
 */
export const seedBenchInvoices = (...args: Parameters<typeof _seed>): Promise<void> => _seed(...args);

async function _seed(store: DocumentStore, count: number, frozen: number, now: number, progress: (line: string) => void): Promise<void> {
  const invoices = openStoredInvoices(store);
  const every = Math.max(1, Math.floor(count / frozen));
  const step = Math.floor((90 * 86_400_000) / count);
  for (let b = 0; b < count; b += BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = b; i < Math.min(count, b + BATCH); i++) batch.push(invoices.insert(_invoice(i, now - 90 * 86_400_000 + i * step, i % every === 0 ? "frozen" : "transmitted")));
    await Promise.all(batch);
    if ((b / BATCH) % 20 === 19) progress(`console-pages: … ${b + BATCH} invoices`);
  }
}

/** `count` dead-lettered alerts over the last 30 days, one in ten replayed. */
async function _seedLetters(store: DocumentStore, count: number, now: number): Promise<void> {
  const letters = store.collection<LetterDoc>(DEAD_LETTERS_COLLECTION, { indexes: [{ fields: ["deadAtMs"] }, { fields: ["status", "deadAtMs"] }] });
  const step = Math.floor((30 * 86_400_000) / Math.max(1, count));
  for (let b = 0; b < count; b += BATCH) {
    const batch: Array<Promise<unknown>> = [];
    for (let i = b; i < Math.min(count, b + BATCH); i++) {
      const at = now - 30 * 86_400_000 + i * step;
      const iso = new Date(at).toISOString();
      const alert = { id: `alert-${i}`, kind: "immediate", signal: "sign_outcome_unconfirmed", severity: "critical", summary: "A sign's outcome could not be confirmed.", environment: "bench", firstOccurrence: iso, lastOccurrence: iso, count: 1, requestIds: [`req-${i}`], runbook: "docs/operations.md#sign-outcome-unconfirmed" };
      const replayed = i % 10 === 0;
      batch.push(letters.insert({ _id: `alert-${i}`, alert, status: replayed ? "replayed" : "dead", attempts: 5, lastFailure: { failureClass: "http_5xx", upstreamStatus: 502 }, deadAt: iso, deadAtMs: at, replayedAt: replayed ? iso : null } as unknown as LetterDoc));
    }
    await Promise.all(batch);
  }
}

function _invoice(i: number, createdAtMs: number, status: "frozen" | "transmitted"): InvoiceDoc {
  const at = new Date(createdAtMs).toISOString();
  const irn = `CONS${i.toString(36).toUpperCase()}-94ND90NR-20240611`;
  return {
    _id: `inv-${String(i).padStart(8, "0")}`,
    businessId: "demo",
    state: "TEST",
    domain: STORED,
    subBusinessId: `sub-${i % 20}`,
    direction: "outbound",
    irn,
    status,
    statusHistory: [{ status, at }],
    attempts: 1,
    budgetLeft: 3,
    budget: 3,
    lastError: status === "frozen" ? { code: "GW_SIGN_OUTCOME_UNCONFIRMED", message: "no answer" } : null,
    operationId: `op-${i}`,
    createdAt: at,
    updatedAt: at,
    createdAtMs,
    document: { irn },
    feeKobo: 5000,
    rev: 1,
    dueAt: null,
    step: "done",
    signAttempt: 1,
    outages: 0,
    billDoubt: false,
    settle: false,
    reverseFor: null,
    events: [],
  } as unknown as InvoiceDoc;
}
