/**
 * Checkout by bank transfer end to end in a real browser (headless Chromium through
 * playwright-core) against a real listening gateway: the payer opens a link's `linkUrl`, chooses
 * Bank transfer, reads the one-time account number from the page (large, selectable, copyable, a
 * ticking countdown), the transfer arrives through the sandbox deposit route, and the page moves to
 * the success page by itself. Then: the receipt is in the e-mail outbox, the signed
 * CHECKOUT_COMPLETED reaches a receiver that verifies it, and the wallet is credited once. The same
 * page at 360 px wide, and without JavaScript (the payer reloads the status page).
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium). Missing: a failure when CI=true, otherwise
 * a visible skip. Screenshots (docs/images/checkout-transfer*.png) are written when missing or
 * when UPDATE_SCREENSHOTS=1; otherwise to a temporary folder.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createLogger } from "../../../core/log.ts";
import { serveGateway, type RunningServer } from "../../../core/server.ts";
import { DEMO_RAW } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";
import { CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot, withBrowser } from "../../support/browser.ts";
import { freePort } from "../../support/ports.ts";
import {
  BEARER_DEMO,
  HOOK_SECRET,
  dataOf,
  eventually,
  startCollections,
  startReceiver,
  type CollectionsHarness,
  type LinkData,
  type Receiver,
} from "../../plugins/collections/payment-links/collections-helpers.ts";

const SHOTS = ["checkout-transfer-choice.png", "checkout-transfer.png", "checkout-transfer-success.png", "checkout-transfer-360.png", "checkout-transfer-success-360.png"];
const BUSINESS_NAME = "Demo Ventures Ltd";

interface Tx {
  id: string;
  reference: string;
  status: string;
  amount: number;
  netAmount: number;
  paymentMethod: string;
  bankTransfer?: { accountNumber: string };
}

await withBrowser("browser checkout-transfer", run);

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const receiver: Receiver = await startReceiver();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ id: string; collections?: Record<string, unknown> }>;
  const demo = businesses.find((b) => b.id === "demo")!;
  demo.collections = { ...demo.collections, webhook: { url: receiver.url, secret: HOOK_SECRET } };
  const h: CollectionsHarness = await startCollections({ patch: { businesses, server: { publicBaseUrl: base } } });
  const server: RunningServer = await serveGateway(h.tg.gateway, { host: "127.0.0.1", port, graceMs: 2_000, log: createLogger({ level: "silent", sink: () => {} }) });
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const desktop: BrowserContext = await browser.newContext({ viewport: { width: 1000, height: 900 }, locale: "en-GB" });
  await desktop.grantPermissions(["clipboard-read", "clipboard-write"], { origin: base });
  const mobile: BrowserContext = await browser.newContext({ viewport: { width: 360, height: 780 }, locale: "en-GB", isMobile: true, hasTouch: true });
  const noScript: BrowserContext = await browser.newContext({ viewport: { width: 1000, height: 900 }, javaScriptEnabled: false });
  for (const c of [desktop, mobile, noScript]) c.setDefaultTimeout(15_000);
  const shotsDir = screenshotsDir(SHOTS);

  /** The sandbox deposit, over HTTP with the business's API key (what the payer's bank would do). */
  const deposit = async (accountNumber: string, amount: number) => {
    const res = await httpCall(server.url, "/api/v1/sandbox/virtual-account/deposit", {
      method: "POST",
      host: "localhost",
      headers: { authorization: `Bearer ${BEARER_DEMO}`, "content-type": "application/json" },
      body: JSON.stringify({ account_number: accountNumber, amount, sender_name: "Ada Obi", sender_account_number: "0123456789", sender_bank: "Sample Bank" }),
    });
    assert.is(res.status, 201, res.text);
    return (res.json() as { data: { status: string } }).data;
  };
  const transactions = async (link: LinkData): Promise<Tx[]> => dataOf<Tx[]>(await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`));
  const credits = async (sourceId?: string) => {
    const all = await h.store.collection<{ _id: string; businessId: string; sourceId: string; amountKobo: number }>("collections_wallet_entries").find({ businessId: "demo" }, { limit: 10_000 });
    return { balance: all.items.reduce((s, e) => s + e.amountKobo, 0), entries: all.items.filter((e) => e.sourceId === sourceId) };
  };
  /** Chooses Bank transfer on the link's page, pays, and answers the transfer page's session id. */
  const startTransfer = async (page: Page, link: LinkData, email: string, shotName?: string): Promise<string> => {
    assert.is((await page.goto(link.linkUrl))?.status(), 200);
    await page.getByLabel("E-mail address").fill(email);
    await page.getByRole("radio", { name: "Bank transfer" }).check();
    await page.getByLabel("E-mail address").blur();
    if (shotName) await shot(page, join(shotsDir, shotName));
    await page.getByRole("button", { name: /^Pay/ }).click();
    await page.waitForURL(new RegExp(`^${_re(base)}/pay/${link.reference}/success/[0-9a-f-]{36}$`));
    assert.ok(await page.getByRole("heading", { level: 2, name: "Pay by bank transfer" }).isVisible());
    return page.url().split("/").pop()!;
  };

  test("pay a link by transfer in Chromium: account on the page, sandbox deposit, success by itself, receipt, signed webhook, one credit", async () => {
    const link = await h.createLink({ link_name: "Choir robes", narration: "Robes for the spring concert", amount: 2500, fee_bearer: "MERCHANT" });
    const before = await credits();
    const page = await desktop.newPage();
    const sessionId = await startTransfer(page, link, "ada@example.com", "checkout-transfer-choice.png");

    // What the payer reads: the account number (large, selectable), bank, name, amount, countdown.
    const number = page.locator("#account-number");
    const accountNumber = ((await number.textContent()) ?? "").trim();
    assert.match(accountNumber, /^\d{10}$/);
    const style = await number.evaluate((el) => ({ size: parseFloat(getComputedStyle(el).fontSize), select: getComputedStyle(el).userSelect }));
    assert.ok(style.size >= 24, `large: ${style.size}px`);
    assert.is(style.select, "all", "one tap selects the whole number");
    assert.is(await page.locator("#bank-name").textContent(), "Gatehouse Sandbox Bank");
    assert.is(await page.locator("#account-name").textContent(), BUSINESS_NAME);
    assert.is(await page.locator("#transfer-amount").textContent(), "NGN 2,500.00");
    const countdown = page.getByRole("timer");
    const first = await countdown.textContent();
    assert.match(first ?? "", /^(29|30):\d\d$/);
    await eventually(async () => (await countdown.textContent()) !== first, 4_000, "the countdown ticks");

    // The copy control (shown only with script) puts the number on the clipboard.
    const copy = page.getByRole("button", { name: "Copy account number" });
    assert.ok(await copy.isVisible());
    await copy.click();
    await eventually(async () => (await page.locator("#copy-status").textContent()) === "Account number copied", 3_000, "copied");
    assert.is(await page.evaluate(() => navigator.clipboard.readText()), accountNumber, "the number is on the clipboard");
    await page.waitForTimeout(2_100); // the label returns before the screenshot
    await shot(page, join(shotsDir, "checkout-transfer.png"));

    // The transfer lands; the page moves to the success page by itself.
    assert.is((await deposit(accountNumber, 2500)).status, "settled");
    await page.getByRole("heading", { level: 2, name: "Payment successful" }).waitFor({ timeout: 10_000 });
    assert.ok(await page.getByText(`Thank you. ${BUSINESS_NAME} has received your payment.`).isVisible());
    assert.ok(await page.getByText("A receipt has been sent to your e-mail address.").isVisible());
    await shot(page, join(shotsDir, "checkout-transfer-success.png"));

    const txs = await transactions(link);
    assert.is(txs.length, 1);
    assert.is(txs[0]!.id, sessionId);
    assert.is(txs[0]!.status, "successful");
    assert.is(txs[0]!.paymentMethod, "bank_transfer");
    assert.is(txs[0]!.bankTransfer?.accountNumber, accountNumber);

    const receipt = h.mails().filter((m) => m.includes(txs[0]!.reference));
    assert.is(receipt.length, 1, "one receipt in the outbox");
    assert.match(receipt[0]!, /To: ada@example\.com/);
    assert.match(receipt[0]!, /Amount: NGN 2,500\.00/);
    assert.match(receipt[0]!, /Paid to: Demo Ventures Ltd/);

    await eventually(
      async () => {
        await h.outbox.deliverDue();
        return receiver.received.some((r) => r.body.includes(sessionId));
      },
      5_000,
      "CHECKOUT_COMPLETED delivered",
    );
    const hits = receiver.received.filter((r) => r.body.includes(sessionId));
    assert.is(hits.length, 1, "one delivery");
    assert.ok(hits[0]!.valid, "verified with the business's secret");
    assert.is((JSON.parse(hits[0]!.body) as { event_type: string }).event_type, "CHECKOUT_COMPLETED");
    assert.is(receiver.received.filter((r) => r.body.includes(accountNumber) && r.body.includes("IN_FLOW_SUCCESS_EVENT")).length, 0);

    const after = await credits(sessionId);
    assert.is(after.entries.length, 1, "one credit for the session");
    assert.is(after.balance - before.balance, Math.round(txs[0]!.netAmount * 100), "credited once");
    await page.close();
  });

  test("at 360 px: the transfer page fits, the account number is large; the success page too", async () => {
    const link = await h.createLink({ link_name: "Youth choir dues", narration: "Term dues", amount: 15000, fee_bearer: "CUSTOMER" });
    const page = await mobile.newPage();
    await startTransfer(page, link, "grace@example.com");
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling (${overflow}px)`);
    const box = await page.locator("#account-number").boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 360, "the number fits the screen");
    assert.ok(await page.getByRole("button", { name: "Copy account number" }).isVisible());
    await shot(page, join(shotsDir, "checkout-transfer-360.png"));
    const accountNumber = ((await page.locator("#account-number").textContent()) ?? "").trim();
    const amount = ((await page.locator("#transfer-amount").textContent()) ?? "").replace(/[^\d.]/g, "");
    assert.is((await deposit(accountNumber, Number(amount))).status, "settled");
    await page.getByRole("heading", { level: 2, name: "Payment successful" }).waitFor({ timeout: 10_000 });
    await shot(page, join(shotsDir, "checkout-transfer-success-360.png"));
    await page.close();
  });

  test("without JavaScript: no copy button, the page refreshes itself, and the status link shows the success", async () => {
    const link = await h.createLink({ link_name: "No script", narration: "Plain HTML", amount: 1000 });
    const page = await noScript.newPage();
    await startTransfer(page, link, "plain@example.com");
    assert.is(await page.getByRole("button", { name: "Copy account number" }).count(), 0, "the copy control needs script: hidden");
    assert.is(await page.locator('noscript').count(), 1);
    const accountNumber = ((await page.locator("#account-number").textContent()) ?? "").trim();
    assert.is((await deposit(accountNumber, 1000)).status, "settled");
    await page.getByRole("link", { name: "I have sent the money: check the status" }).click();
    assert.ok(await page.getByRole("heading", { level: 2, name: "Payment successful" }).isVisible());
    await page.close();
  });

  test("the screenshots are PNGs under 300 KB", () => {
    for (const name of SHOTS) {
      const size = statSync(join(shotsDir, name)).size;
      assert.ok(size > 5_000 && size < 300_000, `${name}: ${size} bytes`);
    }
  });

  test.after(async () => {
    for (const c of [desktop, mobile, noScript]) await c.close().catch(() => {});
    await browser.close().catch(() => {});
    await server.drain("test");
    h.payments.dispose();
    await receiver.close();
  });

  test.run();
}

// --- Internal helpers ---

function _re(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

