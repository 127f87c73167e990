/**
 * A property-based fuzz suite over every route of the gateway's route table, through real sockets,
 * with real identifiers in path parameters (test/e2e/fuzz/identifiers.ts: a route a plugin adds is
 * fuzzed without editing the suite).
 * Each case is one raw HTTP exchange on a fresh connection (test/e2e/fuzz/requests.ts: arbitrary
 * methods, targets, hosts, headers, JSON bodies and framing). For every answer:
 *   - no 500, and no 5xx other than the documented ones (a catalog code that is not
 *     GW_INTERNAL_ERROR; readiness and checkout pages' own 503);
 *   - the host's contract shape (problem+json, the collections envelope on collections hosts, HTML
 *     only from checkout pages, the operator console's and the merchant dashboard's pages) with an X-Request-ID gateway UUID equal to the body's requestId;
 *   - no key, password, secret, stack trace, or (in an error) any value the case marked secret;
 * for every log line written meanwhile: none of those either, the host bounded, no internal error;
 * and at the end the wallet ledger equation holds, nothing is left in flight, the server answers.
 *
 * Bounded: FUZZ_RUNS cases (default 500) from FUZZ_SEED (default: 18 in CI, random otherwise).
 * A failing case prints its seed, its replay path and a minimal (shrunk) reproduction.
 *   FUZZ_RUNS=20000 npx tsx test/e2e/fuzz/http-edge.test.ts          a long run
 *   FUZZ_SEED=<seed> FUZZ_PATH=<path> npx tsx test/e2e/fuzz/http-edge.test.ts   replay a failure
 */
import * as fc from "fast-check";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CATALOG, type GwCode } from "../../../core/errors/catalog.ts";
import type { LogFields } from "../../../core/log.ts";
import { REQUEST_ID_UUID } from "../../support/assertions.ts";
import { ADMIN_KEY, ALLOWLISTED_KEY, BEARER_DEMO, BEARER_OTHER, DEMO_KEY, OTHER_KEY } from "../../support/gateway.ts";
import { rawExchange, type RawResponse } from "../../support/raw-http.ts";
import { SUB, invoice, irnOf, startSigningHarness } from "../../plugins/signing/signing-helpers.ts";
import { harvestIdentifiers, routesFromTable } from "./identifiers.ts";
import { MARKER, demoFuzzContext, describe, fuzzCase, toBytes, type FuzzCase, type FuzzContext } from "./requests.ts";

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const SEED = Number(process.env.FUZZ_SEED ?? (process.env.CI === "true" ? 18 : Date.now() % 2_147_483_647));
const REPLAY_PATH = process.env.FUZZ_PATH;

/** Values that never appear in an answer or a log line. */
const SECRETS = [DEMO_KEY, ALLOWLISTED_KEY, OTHER_KEY, BEARER_DEMO, BEARER_OTHER, ADMIN_KEY, "test_api_secret", "demo-password-1", "edge-secret-0123456789"];
/** Every credential a case may send: never offered as a key id to revoke or roll. */
const ctxKeys = [DEMO_KEY, OTHER_KEY, BEARER_DEMO, BEARER_OTHER, ADMIN_KEY, ALLOWLISTED_KEY];

/** Statuses of the catalog's 5xx codes, GW_INTERNAL_ERROR's 500 excepted. */
const DOCUMENTED_5XX = new Set(Object.entries(CATALOG).filter(([code, row]) => row.status >= 500 && code !== "GW_INTERNAL_ERROR").map(([, row]) => row.status as number));
const STACK = /\n\s+at\s|node:internal|\.ts:\d+:\d+|\.m?js:\d+:\d+/;

const h = await startSigningHarness({
  patch: {
    // Short deadlines, so cases that stop sending are answered quickly; generous budgets, so the
    // fuzz reaches the handlers instead of the rate limits.
    server: { bodyReadTimeoutMs: 400, headerReadTimeoutMs: 800 },
    limits: {
      admission: { perClient: 1_000_000 },
      quotas: { sign: { limit: 1_000_000, windowSeconds: 60 }, management: { limit: 1_000_000, windowSeconds: 60 }, default: { limit: 1_000_000, windowSeconds: 60 } },
    },
  },
});
const server = await h.tg.listen();
test.after(() => h.close());

const routes = routesFromTable(h.tg.gateway.routes.routes());
/** Any-host routes that answer in the gateway's shape whatever the host (health, OpenAPI). */
const anyHostGateway = routes
  .filter((r) => r.hosts === "any" && r.service === "gateway")
  .map((r) => new RegExp(`^${r.template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}$`));

const ctx: FuzzContext = demoFuzzContext(routes, SUB, await _identifiers());

test(`fuzz: ${RUNS} raw requests over ${routes.length} routes (seed ${SEED}): contract shape, no undocumented 5xx, no leaks`, async () => {
  assert.ok(routes.length >= 60, `every route of the table (${routes.length})`);
  for (const t of ["/admin/alerts/dead-letters", "/invoices/{invoiceId}", "/regulator/inbound-invoices", "/admin/keys/{keyId}"]) assert.ok(routes.some((r) => r.template === t), t);
  let logMark = h.tg.logs.length;
  const property = fc.asyncProperty(fuzzCase(ctx), async (c) => {
    const ex = await rawExchange({ port: server.port, send: [toBytes(c)], end: c.halfClose, head: c.method === "HEAD", idleMs: 150, timeoutMs: 4_000 });
    const problems = checkAnswers(c, ex.responses, ex.rest);
    const fresh = h.tg.logs.slice(logMark);
    logMark = h.tg.logs.length;
    problems.push(...checkLogs(fresh));
    if (problems.length > 0) throw new Error(problems.join("\n"));
  });
  const details = await fc.check(property, { numRuns: RUNS, seed: SEED, path: REPLAY_PATH, endOnFailure: false });
  if (details.failed) {
    const example = details.counterexample?.[0] as FuzzCase | undefined;
    const report = [
      `FUZZ FAILURE after ${details.numRuns} case(s), seed ${details.seed}, path ${details.counterexamplePath}`,
      `replay: FUZZ_SEED=${details.seed} FUZZ_PATH=${details.counterexamplePath} FUZZ_RUNS=1 npx tsx test/e2e/fuzz/http-edge.test.ts`,
      example ? `minimal reproduction (after ${details.numShrinks} shrinks):\n${describe(example, server.port)}` : "(no counterexample)",
      `problem: ${details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance)}`,
    ].join("\n");
    process.stdout.write(`\n${report}\n`);
    assert.unreachable(`fuzz failure (seed ${details.seed}, path ${details.counterexamplePath}): see the report above`);
  }
});

test("after the fuzz: the wallet ledger equation holds, nothing is left in flight, and the server still answers", async () => {
  const ledger = await h.ledgerBalanced(); // asserts opening − debits + reversals + credits = balance
  const wallet = (await (await h.tg.call("/admin/wallets/demo", { headers: { "x-admin-api-key": ADMIN_KEY } })).json()) as {
    balance: number;
    entries: Array<{ type: string; amount: number }>;
  };
  const sum = (type: string) => wallet.entries.filter((e) => e.type === type).reduce((s, e) => s + Math.round(e.amount * 100), 0);
  assert.is(Math.round(wallet.balance * 100), 100_000_000 - sum("debit") + sum("reversal") + sum("credit"), "the operator's view agrees");
  process.stdout.write(`ledger after the fuzz: ${ledger.debits} debit(s), ${ledger.reversals} reversal(s), ${h.sim.state.signedIrns().length} IRN(s) signed at the regulator\n`);
  const deadline = Date.now() + 3_000;
  while (h.tg.gateway.runtime.inFlight().total > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  assert.is(h.tg.gateway.runtime.inFlight().total, 0, "every capacity slot was released");
  const health = await rawExchange({ port: server.port, send: ["GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n"], expect: 1, timeoutMs: 3_000 });
  assert.is(health.responses[0]?.status, 200);
});

test.run();

// --- Internal helpers ---

/** Real identifiers: a signed IRN, a payment link and a customer made here, and whatever the gateway lists. */
async function _identifiers(): Promise<Record<string, string[]>> {
  const irn = irnOf("FZSEED1");
  await h.sign(invoice("FZSEED1"));
  const bearer = { authorization: `Bearer ${BEARER_DEMO}`, "x-idempotency-key": "fuzz-seed-0001" };
  const link = await h.tg.call("/api/v1/payment-link", {
    method: "POST",
    host: "localhost",
    headers: bearer,
    body: { link_name: "Fuzz seed", narration: "Order", fee_bearer: "MERCHANT", source_reference: "fz-seed-link", amount: 500, redirect_link: "https://shop.example.com/thanks" },
  });
  const linkRef = ((await link.json()) as { data?: { reference?: string } }).data?.reference;
  const customer = await h.tg.call("/api/v1/customers", {
    method: "POST",
    host: "localhost",
    headers: { ...bearer, "x-idempotency-key": "fuzz-seed-0002" },
    body: { first_name: "Ada", last_name: "Seed", email: "ada.seed@example.com", phone: "+2348012345678", has_wallet: false },
  });
  const customerId = ((await customer.json()) as { data?: { id?: string } }).data?.id;
  const seed: Record<string, string[]> = { irn: [irn], source_reference: ["fz-seed-link"], businessId: ["demo"], name: ["currencies"] };
  if (linkRef) seed.reference = [linkRef];
  if (customerId) seed.id = [customerId];
  const call = (path: string, init: { host: string; headers: Record<string, string> }) => h.tg.call(path, init);
  const credentials = { apiKey: DEMO_KEY, bearer: BEARER_DEMO, admin: ADMIN_KEY, gatewayHost: "passthrough.demo.localhost", storedHost: "stored.demo.localhost", collectionsHost: "localhost", inUse: [...ctxKeys] };
  return harvestIdentifiers(routes, call, credentials, seed);
}

function checkAnswers(c: FuzzCase, responses: RawResponse[], rest: string): string[] {
  const problems: string[] = [];
  if (responses.length === 0) return [`no answer (received ${JSON.stringify(rest.slice(0, 200))})`];
  const path = URL.canParse(c.target) ? new URL(c.target).pathname : c.target.split("?")[0]!;
  const anyHost = anyHostGateway.some((re) => re.test(path));
  for (const [i, r] of responses.entries()) {
    const at = `answer ${i + 1} (${r.status})`;
    const rid = r.headers["x-request-id"] ?? "";
    if (!REQUEST_ID_UUID.test(rid)) problems.push(`${at}: X-Request-ID is ${JSON.stringify(rid)}, not a gateway request id`);
    if (r.status === 500) problems.push(`${at}: a 500`);
    for (const secret of SECRETS) if (r.body.includes(secret)) problems.push(`${at}: the body contains a secret`);
    if (STACK.test(r.body)) problems.push(`${at}: the body contains a stack trace`);
    if (r.status < 400) continue;
    const type = (r.headers["content-type"] ?? "").split(";")[0]!;
    if (i === 0 && c.method === "HEAD") {
      // No body to read: the headers still say which shape it would have been.
      if (!["application/problem+json", "application/json", "text/html"].includes(type)) problems.push(`${at}: content type ${JSON.stringify(type)} for an error`);
      continue;
    }
    if (type !== "text/html" && r.body.includes(MARKER)) problems.push(`${at}: an error echoes a value the request marked secret`);
    let body: Record<string, any> | null = null;
    try {
      body = type === "text/html" ? null : (JSON.parse(r.body) as Record<string, any>);
    } catch {
      problems.push(`${at}: ${type} body is not JSON`);
      continue;
    }
    if (type === "application/problem+json") {
      for (const field of ["type", "title", "status", "statusCode", "detail", "message", "instance", "code", "requestId", "timestamp", "action", "retry", "path"])
        if (!(field in body!)) problems.push(`${at}: problem+json without ${field}`);
      if (body!.requestId !== rid) problems.push(`${at}: requestId differs from X-Request-ID`);
      const row = CATALOG[body!.code as GwCode];
      if (!row) problems.push(`${at}: unknown code ${body!.code}`);
      else if (row.status !== r.status || body!.status !== r.status) problems.push(`${at}: ${body!.code} with status ${r.status}`);
      if (body!.code === "GW_INTERNAL_ERROR") problems.push(`${at}: GW_INTERNAL_ERROR`);
      if (c.hostKind === "collections" && !anyHost) problems.push(`${at}: problem+json on a collections host (expected the collections envelope)`);
    } else if (type === "application/json") {
      if (path.startsWith("/health") && body!.status === "not_ready") continue; // readiness: its own documented 503
      for (const field of ["requestId", "requestTimestamp", "message", "statusCode", "errors"]) if (!(field in body!)) problems.push(`${at}: envelope without ${field}`);
      if (body!.requestId !== rid) problems.push(`${at}: requestId differs from X-Request-ID`);
      if (body!.statusCode !== r.status) problems.push(`${at}: statusCode ${body!.statusCode} on a ${r.status}`);
      if (c.hostKind !== "collections") problems.push(`${at}: the collections envelope on a ${c.hostKind} host`);
      if (r.status >= 500 && !DOCUMENTED_5XX.has(r.status)) problems.push(`${at}: undocumented ${r.status}`);
    } else if (type === "text/html") {
      const checkout = path.startsWith("/pay/") && c.hostKind === "collections";
      const pageSet = /^\/(console|dashboard)(\/|$)/.test(path);
      if (!checkout && !pageSet) problems.push(`${at}: HTML outside the checkout, console and dashboard pages`);
    } else problems.push(`${at}: content type ${JSON.stringify(type)} for an error`);
  }
  return problems;
}

function checkLogs(records: LogFields[]): string[] {
  const problems: string[] = [];
  for (const record of records) {
    const line = JSON.stringify(record);
    const what = `log ${String(record.event)}`;
    if (record.event === "gateway_internal_error" || record.event === "collections_checkout_page_failed") problems.push(`${what}: ${line.slice(0, 300)}`);
    if (line.includes(MARKER)) problems.push(`${what}: a value the request marked secret reached the log`);
    for (const secret of SECRETS) if (line.includes(secret)) problems.push(`${what}: a secret reached the log`);
    if (STACK.test(line)) problems.push(`${what}: a stack trace reached the log`);
    if (typeof record.host === "string" && (record.host.length > 253 || /[@\s]/.test(record.host))) problems.push(`${what}: host not canonical (${record.host.slice(0, 60)})`);
  }
  return problems;
}
