/**
 * GET /invoices and GET /invoices/{invoiceId} (issue 10 item 3): the record's fields, filters,
 * cursor pagination with limit ≤ 100, scoping to the caller's top-level business (another
 * business's invoice is 404, never a leak), and the management quota.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { UUID, UUID_V7 } from "../../support/assertions.ts";
import { DEMO_RAW, OTHER_KEY } from "../../support/gateway.ts";
import { HIGH_QUOTAS, SUB, accepted, demoInvoice, expectProblem, intakeInvoice, irnOf, startStoredHarness } from "./stored-helpers.ts";

const OTHER_STORED = "stored.other.localhost";
const businesses = (DEMO_RAW.businesses as Array<Record<string, any>>).map((b) =>
  // One approved domain per business: `other` serves a Stored host here instead of its Pass-through one.
  b.id === "other" ? { ...b, gateway: { ...b.gateway, domains: [{ host: OTHER_STORED, mode: "stored" }] } } : b,
);
const h = await startStoredHarness({ patch: { businesses } });
test.after(() => h.close());

const final = (inv: Record<string, any>) => ["signed", "transmitted", "rejected", "frozen", "cancelled"].includes(inv.status);
const ids: string[] = [];

test.before(async () => {
  for (let i = 1; i <= 7; i++) ids.push((await accepted(await h.intake(intakeInvoice(`RD${i}`), { key: `reads-key-000${i}` }))).invoiceId);
  const bad = intakeInvoice("RD8");
  delete bad.invoice_line;
  ids.push((await accepted(await h.intake(bad, { key: "reads-key-0008" }))).invoiceId);
  for (const id of ids) await h.waitFor(id, final);
});

test("GET /invoices/{id}: every field of the record, the document included", async () => {
  const res = await h.call("GET", `/invoices/${ids[0]}`);
  assert.is(res.status, 200);
  assert.is(res.headers.get("cache-control"), "no-store");
  const inv = await res.json();
  assert.equal(Object.keys(inv).sort(), [
    "attempts",
    "budgetLeft",
    "createdAt",
    "direction",
    "document",
    "invoiceId",
    "irn",
    "lastError",
    "operationId",
    "status",
    "statusHistory",
    "subBusinessId",
    "updatedAt",
  ]);
  assert.is(inv.invoiceId, ids[0]);
  assert.match(inv.invoiceId, UUID, "invoice ids stay version-4 UUIDs");
  assert.match(inv.operationId, UUID_V7, "operation ids are time-ordered");
  assert.is(inv.subBusinessId, SUB);
  assert.is(inv.direction, "outbound");
  assert.is(inv.irn, irnOf("RD1"));
  assert.is(inv.status, "signed");
  assert.equal(inv.document, demoInvoice("RD1"));
});

test("GET /invoices: newest first, without documents; limit and cursor pages cover everything once", async () => {
  const res = await h.call("GET", "/invoices?limit=3");
  assert.is(res.status, 200);
  const first = await res.json();
  assert.equal(Object.keys(first).sort(), ["data", "nextCursor"]);
  assert.is(first.data.length, 3);
  assert.is(first.data[0].document, undefined);
  assert.ok(first.nextCursor);
  const seen: string[] = first.data.map((d: { invoiceId: string }) => d.invoiceId);
  let cursor = first.nextCursor as string | null;
  while (cursor) {
    const page = await (await h.call("GET", `/invoices?limit=3&cursor=${encodeURIComponent(cursor)}`)).json();
    seen.push(...page.data.map((d: { invoiceId: string }) => d.invoiceId));
    cursor = page.nextCursor;
  }
  assert.is(new Set(seen).size, seen.length, "no invoice twice");
  assert.equal([...seen].sort(), [...ids].sort());
  const times = (await (await h.call("GET", "/invoices?limit=100")).json()).data.map((d: { createdAt: string }) => Date.parse(d.createdAt));
  assert.equal(times, [...times].sort((a: number, b: number) => b - a), "newest first");
});

test("filters: status, subBusinessId, direction, created range", async () => {
  const list = async (q: string) => (await (await h.call("GET", `/invoices?${q}`)).json()).data as Array<Record<string, any>>;
  assert.equal((await list("status=rejected")).map((d) => d.invoiceId), [ids[7]]);
  assert.is((await list("status=signed")).length, 7);
  assert.is((await list(`subBusinessId=${SUB}`)).length, 8);
  assert.is((await list("subBusinessId=someone-else")).length, 0);
  assert.is((await list("direction=outbound")).length, 8);
  assert.is((await list("direction=inbound")).length, 0);
  const created = (await h.invoice(ids[3]!)).createdAt as string;
  const from = await list(`createdFrom=${encodeURIComponent(created)}`);
  assert.ok(from.every((d) => Date.parse(d.createdAt) >= Date.parse(created)));
  assert.ok(from.some((d) => d.invoiceId === ids[3]), "createdFrom is inclusive");
  const to = await list(`createdTo=${encodeURIComponent(created)}`);
  assert.ok(to.some((d) => d.invoiceId === ids[3]), "createdTo is inclusive");
  assert.is(from.length + to.length, 9, "the boundary invoice is in both");
  const today = created.slice(0, 10);
  assert.is((await list(`createdFrom=${today}&createdTo=${today}`)).length, 8, "a date means the whole UTC day");
  assert.is((await list("createdTo=2000-01-01")).length, 0);
});

test("bad queries → 400 with the query parameter named", async () => {
  for (const [q, field] of [
    ["limit=101", "limit"],
    ["limit=0", "limit"],
    ["limit=x", "limit"],
    ["status=lost", "status"],
    ["direction=sideways", "direction"],
    ["createdFrom=yesterday", "createdFrom"],
    ["color=blue", "color"],
  ] as const) {
    const p = await expectProblem(await h.call("GET", `/invoices?${q}`), 400, "GW_REQUEST_VALIDATION_FAILED");
    assert.is(p.errors[0].location, "query", q);
    assert.is(p.errors[0].field, field, q);
  }
  const c = await expectProblem(await h.call("GET", "/invoices?cursor=forged"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.is(c.errors[0].field, "cursor");
  await expectProblem(await h.call("GET", "/invoices/not-a-uuid"), 400, "GW_REQUEST_PATH_PARAMETER_INVALID");
  await expectProblem(await h.call("GET", "/invoices/6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"), 404, "GW_INVOICE_NOT_FOUND");
});

test("another business's invoice is 404 GW_INVOICE_NOT_FOUND (read, transmit, cancel) and never listed", async () => {
  const other = { host: OTHER_STORED, apiKey: OTHER_KEY };
  await expectProblem(await h.call("GET", `/invoices/${ids[0]}`, other), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("POST", `/invoices/${ids[0]}/transmit`, { ...other, body: {} }), 404, "GW_INVOICE_NOT_FOUND");
  await expectProblem(await h.call("POST", `/invoices/${ids[0]}/cancel`, { ...other, body: {} }), 404, "GW_INVOICE_NOT_FOUND");
  const list = await (await h.call("GET", "/invoices", other)).json();
  assert.equal(list, { data: [], nextCursor: null });
  assert.is((await h.invoice(ids[0]!)).status, "signed", "untouched");
});

test("reads use the management quota", async () => {
  const limited = await startStoredHarness({
    processor: false,
    patch: { limits: { quotas: { ...HIGH_QUOTAS.limits.quotas, management: { limit: 3, windowSeconds: 60 } } } },
  });
  try {
    // Onboarding took one permit of the window.
    for (let i = 0; i < 2; i++) assert.is((await limited.call("GET", "/invoices")).status, 200);
    await expectProblem(await limited.call("GET", "/invoices"), 429, "GW_RATE_LIMIT_EXCEEDED");
  } finally {
    await limited.close();
  }
});

test.run();
