/**
 * The checkout end to end in a real browser (headless Chromium through playwright-core) against a
 * real listening gateway: a customer opens a link's `linkUrl`, fills the form, clicks Pay and lands
 * on the success page (or the link's `redirect_link`, served by another local server); a deactivated
 * link offers no Pay button and refuses a stale form; a declined payment shows the failure notice.
 * The API then shows the transaction, and the webhook receiver gets the signed CHECKOUT_* event.
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium; scripts/ci-browser.sh installs it). Missing:
 * a failure when CI=true, otherwise a visible skip (`SKIPPED browser checkout: <reason>`).
 *
 * Screenshots of the checkout and success pages are written to docs/images/ when the files do not
 * exist yet or when UPDATE_SCREENSHOTS=1; otherwise to a temporary folder (a test run never dirties
 * the committed images).
 */
import { statSync } from "node:fs";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { suite, test } from "uvu";
import * as assert from "uvu/assert";
import { createLogger } from "../../../core/log.ts";
import { serveGateway, type RunningServer } from "../../../core/server.ts";
import { DEMO_RAW } from "../../support/gateway.ts";
import { browserMissing, CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot } from "../../support/browser.ts";
import { freePort } from "../../support/ports.ts";
import {
  HOOK_SECRET,
  dataOf,
  eventually,
  startCollections,
  startReceiver,
  type CollectionsHarness,
  type LinkData,
  type Receiver,
} from "../../plugins/collections/payment-links/collections-helpers.ts";

const VIEWPORT = { width: 1000, height: 900 };
const BUSINESS_NAME = "Demo Ventures Ltd";

interface Tx {
  id: string;
  reference: string;
  linkReference: string;
  amount: number;
  status: string;
  customerEmail: string;
  paymentMethod: string;
}
interface Delivery {
  event_type: string;
  data: Tx;
}

const missing = await browserMissing();
if (missing) {
  if (process.env.CI === "true") throw new Error(`[browser checkout] ${missing}; CI=true so this is a failure, not a skip (run scripts/ci-browser.sh)`);
  _reportSkip(missing);
} else {
  await run();
}

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const receiver: Receiver = await startReceiver();
  const thanks = await _startRedirectTarget();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;

  // The demo business (sk_test_demo_0001) with a webhook endpoint at the receiver.
  const businesses = structuredClone(DEMO_RAW.businesses) as Array<{ id: string; collections?: Record<string, unknown> }>;
  const demo = businesses.find((b) => b.id === "demo")!;
  demo.collections = { ...demo.collections, webhook: { url: receiver.url, secret: HOOK_SECRET } };

  const h: CollectionsHarness = await startCollections({ patch: { businesses, server: { publicBaseUrl: base } } });
  const server: RunningServer = await serveGateway(h.tg.gateway, {
    host: "127.0.0.1",
    port,
    graceMs: 2_000,
    log: createLogger({ level: "silent", sink: () => {} }),
  });
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const context: BrowserContext = await browser.newContext({ viewport: VIEWPORT, locale: "en-GB" });
  context.setDefaultTimeout(10_000);
  const shotsDir = screenshotsDir(["checkout.png", "checkout-success.png"]);

  const transactions = async (link: LinkData): Promise<Tx[]> => {
    const res = await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`);
    assert.is(res.status, 200);
    return dataOf<Tx[]>(res);
  };
  /** Delivers the outbox and answers the delivery of `event` for `sessionId` (with its verification). */
  const delivered = async (event: string, sessionId: string) => {
    const match = (r: Receiver["received"][number]) => {
      const body = JSON.parse(r.body) as Delivery;
      return body.event_type === event && body.data.id === sessionId;
    };
    await eventually(
      async () => {
        await h.outbox.deliverDue();
        return receiver.received.some(match);
      },
      5_000,
      `${event} for ${sessionId}`,
    );
    const hits = receiver.received.filter(match);
    assert.is(hits.length, 1, `one ${event} delivery for the session`);
    return { ...hits[0]!, payload: JSON.parse(hits[0]!.body) as Delivery };
  };
  const newPage = async (): Promise<Page> => context.newPage();

  test("the checkout page in a browser: business, link, narration, accessible form; Pay → success page, transaction, signed CHECKOUT_COMPLETED", async () => {
    const link = await h.createLink({
      link_name: "Choir robes",
      narration: "Robes for the spring concert, one per singer",
      fee_bearer: "MERCHANT",
    });
    assert.is(link.amount, null);
    assert.is(link.linkUrl, `${base}/pay/${link.reference}`, "linkUrl points at the listening server");

    const page = await newPage();
    const opened = await page.goto(link.linkUrl);
    assert.is(opened?.status(), 200);
    assert.is(await page.title(), `Pay ${BUSINESS_NAME}: Choir robes`);
    assert.is(await page.locator("html").getAttribute("lang"), "en");

    // What the customer sees.
    assert.ok(await page.getByRole("heading", { level: 1, name: "Choir robes" }).isVisible(), "link name as the h1");
    assert.ok(await page.getByText(`Payment to ${BUSINESS_NAME}`).isVisible(), "business name");
    assert.ok(await page.getByText("Robes for the spring concert, one per singer").isVisible(), "narration");
    assert.ok(await page.getByRole("heading", { level: 2, name: "Payment details" }).isVisible());
    assert.ok(await page.getByRole("form", { name: "Payment details" }).isVisible(), "the form is a named landmark");
    assert.ok(await page.getByRole("main", { name: "Choir robes" }).isVisible(), "main landmark named by the h1");

    // Accessible form: every visible control has a label, hints are wired with aria-describedby.
    const amount = page.getByLabel("Amount (NGN)");
    const email = page.getByLabel("E-mail address");
    assert.is(await amount.evaluate((el) => el.tagName), "INPUT");
    assert.is(await email.getAttribute("type"), "email");
    assert.is(await amount.getAttribute("aria-describedby"), "amount-hint");
    assert.match((await page.locator("#amount-hint").textContent()) ?? "", /Minimum NGN 100\.00/);
    const unlabelled = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLInputElement>("input:not([type=hidden]), select, textarea"))
        .filter((el) => !el.labels || el.labels.length === 0)
        .map((el) => el.outerHTML),
    );
    assert.equal(unlabelled, [], "every visible form control has a <label>");
    assert.ok(await page.getByRole("group", { name: "Sandbox outcome" }).isVisible(), "sandbox outcomes are a fieldset with a legend");
    assert.ok(await page.getByRole("radio", { name: "Success", exact: true }).isChecked(), "success is the default outcome");
    const pay = page.getByRole("button", { name: "Pay", exact: true });
    assert.ok(await pay.isVisible());
    assert.is(await page.locator("script").count(), 0, "no script");

    // The form is usable with the keyboard: Tab from the amount reaches the e-mail field.
    await amount.focus();
    await page.keyboard.press("Tab");
    assert.is(await page.evaluate(() => document.activeElement?.id), "email");

    await amount.fill("2500");
    await email.fill("ada@example.com");
    await email.blur(); // no focus ring in the screenshot
    await shot(page, join(shotsDir, "checkout.png"));

    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === `/pay/${link.reference}`),
      pay.click(),
    ]);
    assert.is(posted.status(), 303);
    await page.waitForURL(new RegExp(`^${_re(base)}/pay/${link.reference}/success/[0-9a-f-]{36}$`));
    const sessionId = page.url().split("/").pop()!;
    assert.ok(await page.getByRole("heading", { level: 2, name: "Payment successful" }).isVisible());
    assert.ok(await page.getByText(`Thank you. ${BUSINESS_NAME} has received your payment.`).isVisible());
    assert.ok(await page.getByText("NGN 2,500.00").isVisible(), "the amount paid");
    assert.is(await page.getByRole("link", { name: "Continue" }).count(), 0, "no redirect_link: the customer stays here");
    assert.is(await page.getByRole("button").count(), 0, "nothing more to pay");
    await shot(page, join(shotsDir, "checkout-success.png"));

    const txs = await transactions(link);
    assert.is(txs.length, 1, "one transaction");
    assert.is(txs[0]!.id, sessionId);
    assert.is(txs[0]!.status, "successful");
    assert.is(txs[0]!.amount, 2500);
    assert.is(txs[0]!.customerEmail, "ada@example.com");
    assert.ok(await page.getByText(txs[0]!.reference).isVisible(), "the transaction reference is on the success page");

    const hook = await delivered("CHECKOUT_COMPLETED", sessionId);
    assert.ok(hook.valid, "a valid Standard Webhooks signature (verifyWebhook with the business secret)");
    assert.match(hook.headers["webhook-signature"]!, /^v1,[A-Za-z0-9+/]+=*$/);
    assert.ok(hook.headers["webhook-id"]);
    assert.is(hook.payload.data.status, "successful");
    assert.is(hook.payload.data.amount, 2500);
    assert.is(hook.payload.data.linkReference, link.reference);
    await page.close();
  });

  test("a link with redirect_link: after paying the browser lands on the redirect URL", async () => {
    const target = `${thanks.url}/thanks?order=robes`;
    const link = await h.createLink({ link_name: "Concert tickets", narration: "Spring concert", redirect_link: target });
    const page = await newPage();
    assert.is((await page.goto(link.linkUrl))?.status(), 200);
    await page.getByLabel("Amount (NGN)").fill("1,000.50");
    await page.getByLabel("E-mail address").fill("grace@example.com");
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === `/pay/${link.reference}`),
      page.getByRole("button", { name: "Pay", exact: true }).click(),
    ]);
    assert.is(posted.status(), 303);
    assert.is(posted.headers()["location"], target);
    await page.waitForURL(target);
    assert.is(page.url(), target, "the final URL is the redirect_link");
    assert.ok(await page.getByRole("heading", { level: 1, name: "Thanks for your order" }).isVisible());
    assert.equal(thanks.hits, ["/thanks?order=robes"], "the redirect target was loaded once");

    const txs = await transactions(link);
    assert.is(txs.length, 1);
    assert.is(txs[0]!.status, "successful");
    assert.is(txs[0]!.amount, 1000.5);
    await delivered("CHECKOUT_COMPLETED", txs[0]!.id);
    await page.close();
  });

  test("an inactive link: the page says no payment is possible, has no Pay button, and refuses a stale form; no transaction", async () => {
    const link = await h.createLink({ link_name: "Old raffle", narration: "Raffle tickets" });
    // A customer opened the page while the link was active…
    const stale = await newPage();
    assert.is((await stale.goto(link.linkUrl))?.status(), 200);
    await stale.getByLabel("Amount (NGN)").fill("500");
    await stale.getByLabel("E-mail address").fill("late@example.com");

    // …then the business deactivates it.
    const toggled = await h.api("/api/v1/payment-link/toggle-status", { body: { link_id: link.reference, activate: false } });
    assert.is(toggled.status, 200);
    assert.is((await dataOf<LinkData>(toggled)).status, "inactive");

    const page = await newPage();
    const opened = await page.goto(link.linkUrl);
    assert.is(opened?.status(), 403);
    assert.ok(await page.getByRole("heading", { level: 1, name: "Old raffle" }).isVisible());
    assert.ok(await page.getByRole("heading", { level: 2, name: "This payment link is not accepting payments" }).isVisible());
    assert.ok(await page.getByText("No payment can be made through it.").isVisible());
    assert.is(await page.getByRole("button").count(), 0, "no Pay button");
    assert.is(await page.locator("form").count(), 0, "no form");
    assert.is(await page.getByRole("textbox").count(), 0, "no inputs");

    // The stale form is refused with the same page.
    const [posted] = await Promise.all([
      stale.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === `/pay/${link.reference}`),
      stale.getByRole("button", { name: "Pay", exact: true }).click(),
    ]);
    assert.is(posted.status(), 403);
    assert.ok(await stale.getByRole("heading", { level: 2, name: "This payment link is not accepting payments" }).isVisible());
    assert.is(await stale.getByRole("button").count(), 0);

    assert.is((await transactions(link)).length, 0, "no transaction was created");
    await page.close();
    await stale.close();
  });

  test("a declined payment (sandbox outcome Failure): the failure notice, the form to retry, a failed transaction, signed CHECKOUT_FAILED", async () => {
    const link = await h.createLink({ link_name: "Workshop seat", narration: "Saturday pottery workshop" });
    const page = await newPage();
    assert.is((await page.goto(link.linkUrl))?.status(), 200);
    await page.getByLabel("Amount (NGN)").fill("2500");
    await page.getByLabel("E-mail address").fill("declined@example.com");
    await page.getByRole("radio", { name: "Failure (the payment is declined)" }).check();
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === `/pay/${link.reference}`),
      page.getByRole("button", { name: "Pay", exact: true }).click(),
    ]);
    assert.is(posted.status(), 402);
    await page.waitForLoadState();
    assert.is(page.url(), link.linkUrl, "the form page again (no redirect)");
    assert.match(await page.title(), /Workshop seat/);
    const notice = page.getByRole("status");
    assert.ok(await notice.getByRole("heading", { level: 2, name: "Payment failed" }).isVisible());
    assert.match((await notice.textContent()) ?? "", /Nothing was charged\. You can try again\./);
    // The form is there again, filled in, to retry.
    assert.is(await page.getByLabel("Amount (NGN)").inputValue(), "2500.00");
    assert.is(await page.getByLabel("E-mail address").inputValue(), "declined@example.com");
    assert.ok(await page.getByRole("button", { name: "Pay", exact: true }).isVisible());

    const txs = await transactions(link);
    assert.is(txs.length, 1, "one transaction");
    assert.is(txs[0]!.status, "failed");
    assert.is(txs[0]!.amount, 2500);
    const hook = await delivered("CHECKOUT_FAILED", txs[0]!.id);
    assert.ok(hook.valid, "a valid Standard Webhooks signature");
    assert.is(hook.payload.data.status, "failed");
    await page.close();
  });

  test("the screenshots are PNGs under 300 KB", () => {
    for (const name of ["checkout.png", "checkout-success.png"]) {
      const size = statSync(join(shotsDir, name)).size;
      assert.ok(size > 5_000 && size < 300_000, `${name}: ${size} bytes`);
    }
  });

  test.after(async () => {
    await context.close().catch(() => {});
    await browser.close().catch(() => {});
    await server.drain("test");
    h.payments.dispose();
    await receiver.close();
    await thanks.close();
  });

  test.run();
}

// --- Internal helpers ---

function _reportSkip(reason: string): void {
  process.stdout.write(`SKIPPED browser checkout: ${reason}\n`);
  const s = suite("browser checkout");
  s.skip(`browser checkout (${reason})`, () => {});
  s.run();
}

function _re(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A tiny page on another local port: the redirect_link target. */
async function _startRedirectTarget(): Promise<{ url: string; hits: string[]; close(): Promise<void> }> {
  const hits: string[] = [];
  const server: Server = createServer((req, res) => {
    if (req.url === "/favicon.ico") return void res.writeHead(404).end();
    hits.push(req.url ?? "");
    res
      .writeHead(200, { "content-type": "text/html; charset=utf-8" })
      .end('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Thanks</title></head><body><h1>Thanks for your order</h1></body></html>');
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}
