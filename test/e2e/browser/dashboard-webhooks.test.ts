/**
 * The dashboard's Webhooks section in a real browser (headless Chromium through playwright-core)
 * against a listening gateway: the demo owner signs in (password, then a TOTP code), adds an
 * endpoint pointing at a local receiver, reveals its secret with a code, sends a test event, sees it
 * in the delivery log with the receiver's status, and resends it: the receiver gets exactly one
 * more delivery, signed with the revealed secret.
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium). Missing: a failure when CI=true, otherwise a
 * visible skip. Screenshots go to docs/images/ (dashboard-webhooks-*.png) when missing or
 * UPDATE_SCREENSHOTS=1, otherwise to a temporary folder.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { verifyWebhook } from "../../../client/webhooks.ts";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import { totpCode } from "../../plugins/dashboard/dashboard-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot, withBrowser } from "../../support/browser.ts";
import { startTestGateway } from "../../support/gateway.ts";
import { eventually, startWebhookReceiver } from "../../support/webhook-receiver.ts";

const SHOTS = ["dashboard-webhooks-endpoint.png", "dashboard-webhooks-delivery.png", "dashboard-webhooks-log.png"];

await withBrowser("browser dashboard webhooks", run);

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const rx = await startWebhookReceiver();
  const tg = await startTestGateway({ patch: { webhooks: { pollMs: 50, timeoutMs: 2000 } } });
  const server = await tg.listen();
  // The business's own approved host (any *.localhost name reaches the loopback listener).
  const base = server.url.replace("127.0.0.1", "passthrough.demo.localhost");
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, "--host-resolver-rules=MAP *.localhost 127.0.0.1"] });
  const shots = screenshotsDir(SHOTS);

  const signIn = async (page: Page) => {
    await page.goto(`${base}/dashboard/webhooks`);
    await page.getByLabel("E-mail").fill(DEMO_OWNER.email);
    await page.getByLabel("Password").fill(DEMO_OWNER.password);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Code").fill(totpCode(DEMO_OWNER.totpSecret));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Webhooks" }).waitFor();
  };

  test("add an endpoint, send a test event, see it in the delivery log with the receiver's status, resend it", async () => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await signIn(page);

    await page.getByLabel("URL").fill(rx.url);
    await page.getByLabel("Collections events (CHECKOUT_COMPLETED, …)").check();
    await page.getByLabel("Description").fill("Local receiver");
    await page.getByRole("button", { name: "Add endpoint" }).click();
    await page.getByText("Endpoint added.").waitFor();

    // The sign-in spent the current step's code; the next step's is accepted (one step of clock drift).
    await page.getByLabel("Code from your authenticator app").fill(totpCode(DEMO_OWNER.totpSecret, Date.now() + 30_000));
    await page.getByRole("button", { name: "Reveal secret" }).click();
    const secret = (await page.locator("#revealed-secret").textContent())!;
    assert.match(secret, /^whsec_/);
    await page.locator("#revealed-secret").evaluate((el) => (el.textContent = "whsec_••••••••"));
    await shot(page, join(shots, "dashboard-webhooks-endpoint.png"));

    await page.getByRole("button", { name: "Send test event" }).click();
    await page.getByText("Test event sent").waitFor();
    await eventually(() => rx.received.length === 1, 5000, "the test event at the receiver");
    assert.ok(verifyWebhook(secret, rx.received[0]!.headers as Record<string, string>, rx.received[0]!.body), "signed with the revealed secret");
    await eventually(async () => {
      await page.reload();
      return (await page.locator("td.response-code").first().textContent()) === "200";
    }, 5000, "the receiver's status on the delivery page");
    await shot(page, join(shots, "dashboard-webhooks-delivery.png"));

    await page.getByRole("link", { name: "Webhooks" }).first().click();
    const row = page.locator("tr", { hasText: "webhook.test" });
    await row.getByText(/^200 in \d+ ms$/).waitFor();
    assert.ok(await row.getByText("delivered").isVisible());
    await shot(page, join(shots, "dashboard-webhooks-log.png"));

    await row.getByRole("link", { name: "webhook.test" }).click();
    await page.getByRole("button", { name: "Resend" }).click();
    await page.getByText("Resent: one more attempt is on its way.").waitFor();
    await eventually(() => rx.received.length === 2, 5000, "the resend at the receiver");
    await new Promise((r) => setTimeout(r, 300));
    assert.is(rx.received.length, 2, "exactly one more delivery");
    assert.is(rx.received[1]!.headers["webhook-id"], rx.received[0]!.headers["webhook-id"]);
    await eventually(async () => {
      await page.reload();
      return (await page.locator("td.response-code").count()) === 2;
    }, 5000, "the resend's attempt on the delivery page");
    await context.close();
  });

  test.after(async () => {
    await browser.close();
    await tg.close();
    await rx.close();
  });
  test.run();
}
