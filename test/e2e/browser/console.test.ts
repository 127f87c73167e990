/**
 * The operator console in a real browser (headless Chromium through playwright-core) against a
 * listening gateway: an operator signs in with the demo operator key, finds a frozen sign by the
 * request ID the merchant reported, opens it, resolves it (outcome, reason, confirmation) and sees
 * the answer after the redirect; the fee is reversed once. A viewer signs in and is offered no
 * resolve form. On the Businesses screen an operator creates a key (shown once) and revokes it, and
 * changes a domain's mode through drain and approval. An alert the chat webhook refused is replayed
 * from the dead-letter list once the receiver accepts. A Stored invoice is found by its IRN and its
 * timeline read, and the audit log is filtered by who acted.
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium). Missing: a failure when CI=true, otherwise a
 * visible skip. Screenshots go to docs/images/ (console-*.png) when missing or UPDATE_SCREENSHOTS=1,
 * otherwise to a temporary folder.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import type { AlertChannel } from "../../../adapters/ports.ts";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createLogger } from "../../../core/log.ts";
import { serveGateway } from "../../../core/server.ts";
import type { SignRecord } from "../../../plugins/invoice/sign-attempts.ts";
import { openStoredInvoices, type InvoiceDoc } from "../../../plugins/invoice/stored-invoices.ts";
import { startReceiver } from "../../adapters/alerts/alert-helpers.ts";
import { OPERATOR_KEY, VIEWER_KEY, VIEWER_PATCH } from "../../plugins/console/console-helpers.ts";
import { expectProblem, invoice, startSigningHarness } from "../../plugins/signing/signing-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot, withBrowser } from "../../support/browser.ts";
import { freePort } from "../../support/ports.ts";

const SHOTS = [
  "console-sign-in.png",
  "console-overview.png",
  "console-frozen.png",
  "console-resolved.png",
  "console-business.png",
  "console-key-created.png",
  "console-draining.png",
  "console-alerts.png",
  "console-invoice.png",
  "console-audit.png",
];

await withBrowser("browser console", run);

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const receiver = await startReceiver();
  const alertsPatch = { alerts: { webhook: { url: receiver.url, attempts: 2, backoffBaseMs: 10, backoffMaxMs: 20 } } };
  const h = await startSigningHarness({ patch: { ...VIEWER_PATCH, ...alertsPatch, recovery: { enabled: false } } });
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const server = await serveGateway(h.tg.gateway, { host: "127.0.0.1", port, graceMs: 2_000, log: createLogger({ level: "silent", sink: () => {} }) });
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const shots = screenshotsDir(SHOTS);
  const records = () => h.store.collection<SignRecord>("signing_idempotency");

  /** A Pass-through sign the regulator never answered: its fee is held. */
  const frozenSign = async (no: string) => {
    h.sim.faults.set("sign", { kind: "timeout", times: 1 });
    const res = await h.sign(invoice(no), { key: `browser-${no}-key` });
    const requestId = res.headers.get("x-request-id")!;
    const body = await expectProblem(res, 502, "GW_SIGN_OUTCOME_UNCONFIRMED");
    return { requestId, operationId: body.operationId as string };
  };
  const signIn = async (page: Page, key: string) => {
    await page.goto(`${base}/console`);
    assert.is(await page.title(), "Sign in · Gatehouse console");
    await page.getByLabel("Key").fill(key);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor();
  };

  test("an operator signs in, finds a frozen sign by its request ID and resolves it", async () => {
    const before = await h.ledgerBalanced();
    const { requestId, operationId } = await frozenSign("BR1");
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${base}/console/sign-in`);
    await shot(page, join(shots, "console-sign-in.png"));
    await signIn(page, OPERATOR_KEY);
    assert.ok(await page.getByText("demo-operator (admin)").isVisible());
    await shot(page, join(shots, "console-overview.png"));

    await page.getByLabel("Search by request, operation or invoice ID").fill(requestId);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("heading", { level: 2, name: /1 found for/ }).waitFor();
    await page.getByRole("link", { name: operationId }).click();
    await page.getByRole("heading", { level: 1, name: `passthrough-sign ${operationId}` }).waitFor();
    assert.ok(await page.getByText(requestId).isVisible(), "the request id is among the facts");

    await page.getByLabel("not signed").check();
    await page.getByLabel("Reason").fill("Regulator portal has no such IRN (checked by phone)");
    await page.getByLabel("I checked at the regulator and confirm this decision").check();
    await shot(page, join(shots, "console-frozen.png"));
    await page.getByRole("button", { name: "Resolve" }).click();
    await page.getByRole("status").filter({ hasText: "Resolved as not_signed" }).waitFor();
    assert.ok(page.url().endsWith(`/console/frozen/passthrough-sign/${operationId}`), "POST-redirect-GET back to the operation");
    await shot(page, join(shots, "console-resolved.png"));
    // A reload repeats nothing (the page is a GET).
    await page.reload();
    const rec = await records().findOne({ operationId });
    assert.is(rec?.money, "reversed");
    assert.is(rec?.resolution?.by, "operator:demo-operator");
    assert.is((await h.ledgerBalanced()).reversals, before.reversals + 1);
    await context.close();
  });

  test("a viewer signs in and is offered no resolve form (the server refuses the POST: tested in process)", async () => {
    const { operationId } = await frozenSign("BR2");
    const context = await browser.newContext({ locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, VIEWER_KEY);
    await page.goto(`${base}/console/frozen/passthrough-sign/${operationId}`);
    assert.ok(await page.getByText("Your role is viewer: resolving needs an operator key.").isVisible());
    assert.is(await page.getByRole("button", { name: "Resolve" }).count(), 0);
    assert.is((await records().findOne({ operationId }))?.money, "held");
    await context.close();
  });

  test("an operator creates and revokes a key, and changes a domain's mode through drain and approval", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, OPERATOR_KEY);
    await page.getByRole("link", { name: "Businesses" }).first().click();
    await page.getByRole("link", { name: "other", exact: true }).click();
    await page.getByRole("heading", { level: 1, name: "Other Trading Co" }).waitFor();
    await shot(page, join(shots, "console-business.png"));

    await page.getByLabel("gateway (x-api-key)").check();
    await page.getByLabel("Key ID (optional; generated when empty)").fill("other-browser");
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByRole("heading", { level: 1, name: "New key" }).waitFor();
    const plain = await page.getByLabel("Key", { exact: true }).inputValue();
    assert.ok(plain.length > 16, "the key is shown");
    await shot(page, join(shots, "console-key-created.png"));
    await page.getByRole("link", { name: "Back to the business" }).click();
    assert.not.ok((await page.content()).includes(plain), "shown once");

    const keyRow = page.getByRole("row").filter({ hasText: "other-browser" });
    await keyRow.getByLabel(/Revoke now/).check();
    await keyRow.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("status").filter({ hasText: "(key.revoke)" }).waitFor();
    assert.ok(await page.getByRole("row").filter({ hasText: "other-browser" }).getByText("revoked").isVisible());

    const domainRow = () => page.getByRole("row").filter({ hasText: "other.demo.localhost" });
    await domainRow().getByLabel(/Drain this domain/).check();
    await domainRow().getByRole("button", { name: "Change to stored" }).click();
    await page.getByRole("status").filter({ hasText: "(domain.mode_change)" }).waitFor();
    assert.ok(await domainRow().getByText(/stored \(draining since/).isVisible());
    await shot(page, join(shots, "console-draining.png"));
    await domainRow().getByLabel(/The drain is done/).check();
    await domainRow().getByRole("button", { name: "Approve" }).click();
    await page.getByRole("status").filter({ hasText: "(domain.approve)" }).waitFor();
    assert.ok(await domainRow().getByRole("button", { name: "Change to passthrough" }).isVisible());

    await page.getByRole("link", { name: "Audit log" }).first().click();
    assert.ok(await page.getByText("domain.approve").first().isVisible(), "the Admin API's audit entry");
    await context.close();
  });

  test("an operator replays a dead-lettered alert once the chat receiver accepts", async () => {
    const alerts = h.tg.gateway.kit.ports.alerts as AlertChannel;
    receiver.plan = [500, 500];
    alerts.raise({ signal: "routing_loop", code: "GW_ROUTING_LOOP_DETECTED" });
    await new Promise((r) => setImmediate(r));
    await alerts.drain();
    const letter = (await alerts.deadLetters({ limit: 50, status: "dead" })).items.find((l) => l.alert.signal === "routing_loop");
    assert.ok(letter, "dead-lettered");
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, OPERATOR_KEY);
    await page.getByRole("link", { name: "Alerts" }).first().click();
    const row = page.getByRole("row").filter({ hasText: "routing_loop" });
    await row.waitFor();
    await shot(page, join(shots, "console-alerts.png"));
    const sent = receiver.bodies.length;
    await row.getByRole("button", { name: "Replay" }).click();
    await page.getByRole("status").filter({ hasText: "Delivered" }).waitFor();
    assert.is(receiver.bodies.length, sent + 1);
    assert.is(receiver.bodies.at(-1)!.alert.id, letter!.id);
    await context.close();
  });

  test("an operator finds a rejected Stored invoice by its IRN, reads why, and filters the audit log by who acted", async () => {
    await openStoredInvoices(h.store).insert(_rejectedInvoice());
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page, OPERATOR_KEY);
    await page.getByLabel("Search by request, operation or invoice ID").fill(REJECTED_IRN);
    await page.getByRole("button", { name: "Search" }).click();
    await page.getByRole("link", { name: REJECTED_ID }).click();
    await page.getByRole("heading", { level: 1, name: `Invoice ${REJECTED_IRN}` }).waitFor();
    assert.ok(await page.getByText("The regulator refused the signing (Regulator rejected signing).").isVisible());
    await shot(page, join(shots, "console-invoice.png"));
    await page.getByRole("link", { name: "Audit log" }).first().click();
    await page.getByLabel("Who").fill("operator:demo-operator");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByRole("heading", { level: 1, name: "Audit log" }).waitFor();
    assert.ok(page.url().includes("actor=operator%3Ademo-operator"));
    assert.ok(await page.getByText("sign_attempt.resolve").first().isVisible(), "the operator's resolution from the first test");
    await shot(page, join(shots, "console-audit.png"));
    await context.close();
  });

  test.after(async () => {
    await receiver.close().catch(() => {});
    await browser.close().catch(() => {});
    await server.drain("test").catch(() => {});
    await h.close().catch(() => {});
  });
  test.run();
}

// --- Internal helpers ---

const REJECTED_ID = "3b1f0c9e-7a52-4d2e-9a61-2f8c4e1d5a70";
const REJECTED_IRN = "INV2041-94ND90NR-20261130";

/** A Stored invoice the regulator refused to sign, with the regulator's message. */
function _rejectedInvoice(): InvoiceDoc {
  const t = (s: number) => new Date(Date.now() - 600_000 + s * 1000).toISOString();
  return {
    _id: REJECTED_ID, businessId: "demo", state: "TEST", domain: "stored.demo.localhost", subBusinessId: "7f3a9c2e-1b4d-4e6f-8a0b-2c3d4e5f6a01", direction: "outbound", irn: REJECTED_IRN,
    status: "rejected",
    statusHistory: [{ status: "pending", at: t(0) }, { status: "validated", at: t(2) }, { status: "signing", at: t(3) }, { status: "rejected", at: t(4) }],
    attempts: 3, budgetLeft: 3, budget: 3, lastError: { code: "GW_SIGN_REJECTED", at: t(4), regulatorMessage: "Buyer TIN 00000000-0000 is not registered" },
    operationId: "0d7e2c41-93a8-4b6f-8e1a-5c2b7f9d3e10", createdAt: t(0), updatedAt: t(4), createdAtMs: Date.parse(t(0)), document: {}, feeKobo: 5000, rev: 4, dueAt: null, step: "done",
    signAttempt: 1, outages: 0, billDoubt: false, settle: false, reverseFor: null, events: [],
  };
}

