/**
 * The merchant dashboard in a real browser (headless Chromium through playwright-core) against a
 * listening gateway, on the demo business's own host: the demo owner signs in (password, then a
 * TOTP code computed with otpauth) and invites a developer; the developer accepts from the link in
 * the e-mail (read from the e-mail port's folder adapter), chooses a password, enrols two-factor
 * from the secret the page shows, sees the recovery codes once, creates an API key with a code
 * (shown once; it works) and rolls it (the old key keeps working until its deadline).
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium). Missing: a failure when CI=true, otherwise a
 * visible skip. Screenshots go to docs/images/ (dashboard-*.png) when missing or
 * UPDATE_SCREENSHOTS=1, otherwise to a temporary folder.
 */
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_OWNER } from "../../../plugins/dashboard/demo-owner.ts";
import { mailedLink, totpCode } from "../../plugins/dashboard/dashboard-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot, withBrowser } from "../../support/browser.ts";
import { DEMO_KEY, PASSTHROUGH, startTestGateway } from "../../support/gateway.ts";

const SHOTS = ["dashboard-sign-in.png", "dashboard-home.png", "dashboard-team.png", "dashboard-two-factor.png", "dashboard-recovery-codes.png", "dashboard-key-created.png", "dashboard-keys.png", "dashboard-request.png"];

await withBrowser("browser dashboard", run);

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const tg = await startTestGateway();
  const server = await tg.listen();
  const port = new URL(server.url).port;
  const base = `http://${PASSTHROUGH}:${port}`;
  // The business's own host, resolved to the listening gateway.
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, `--host-resolver-rules=MAP ${PASSTHROUGH} 127.0.0.1`] });
  const shots = screenshotsDir(SHOTS);
  const newPage = async (): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1100, height: 860 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    return context.newPage();
  };
  const heading = (page: Page, name: string) => page.getByRole("heading", { level: 1, name }).waitFor();

  test("an owner invites a developer, who accepts from the e-mail, enrols two-factor, creates a key and rolls it", async () => {
    const owner = await newPage();
    await owner.goto(`${base}/dashboard`);
    await heading(owner, "Sign in");
    await shot(owner, join(shots, "dashboard-sign-in.png"));
    await owner.getByLabel("E-mail").fill(DEMO_OWNER.email);
    await owner.getByLabel("Password").fill(DEMO_OWNER.password);
    await owner.getByRole("button", { name: "Continue" }).click();
    await heading(owner, "Two-factor code");
    await owner.getByLabel("Code").fill(totpCode(DEMO_OWNER.totpSecret));
    await owner.getByRole("button", { name: "Sign in" }).click();
    await heading(owner, "Home");
    assert.ok(await owner.getByText("TEST", { exact: true }).first().isVisible(), "the environment is on the page");
    await shot(owner, join(shots, "dashboard-home.png"));

    await owner.getByRole("link", { name: "Team" }).first().click();
    await heading(owner, "Team");
    await owner.getByLabel("E-mail").fill("dev@example.test");
    await owner.getByLabel(/^developer/).check();
    await owner.getByRole("button", { name: "Send invitation" }).click();
    await owner.getByText("Invitation sent to dev@example.test.").waitFor();
    await shot(owner, join(shots, "dashboard-team.png"));

    const dev = await newPage();
    const link = mailedLink(tg, "dev@example.test", "invitations");
    await dev.goto(`${base}${link}`);
    await heading(dev, "Accept your invitation");
    await dev.getByLabel("Your name").fill("Dee Veloper");
    await dev.getByLabel("Choose a password").fill("dee-password-0001");
    await dev.getByLabel("The same password again").fill("dee-password-0001");
    await dev.getByRole("button", { name: "Join the team" }).click();
    await heading(dev, "Two-factor authentication");
    assert.ok(await dev.locator("figure.qr svg").isVisible(), "the QR code is drawn");
    const secret = (await dev.locator("[data-totp-secret]").innerText()).replace(/\s+/g, "");
    await shot(dev, join(shots, "dashboard-two-factor.png"));
    await dev.getByLabel("Code", { exact: true }).fill(totpCode(secret));
    await dev.getByRole("button", { name: "Turn on two-factor" }).click();
    await heading(dev, "Two-factor authentication is on");
    assert.is(await dev.locator("ul.recovery-codes li").count(), 10);
    await shot(dev, join(shots, "dashboard-recovery-codes.png"));

    await dev.getByRole("link", { name: "API keys" }).first().click();
    await heading(dev, "API keys");
    await dev.getByLabel("Invoice gateway (x-api-key)").check();
    await dev.getByLabel("Code from your authenticator app").fill(totpCode(secret, Date.now() + 30_000));
    await dev.getByRole("button", { name: "Create key" }).click();
    await heading(dev, "New key");
    const plain = await dev.getByLabel("Key", { exact: true }).inputValue();
    assert.match(plain, /^gw_test_/);
    const created = await tg.gateway.kit.directory.authenticate("apiKey", plain);
    assert.is(created?.businessId, "demo");
    await shot(dev, join(shots, "dashboard-key-created.png"));

    await dev.getByRole("link", { name: "Go to the key" }).click();
    await heading(dev, `Key ${created!.credentialId}`);
    await dev.getByLabel("Old key keeps working for (hours)").fill("1");
    await dev.getByRole("button", { name: "Roll key" }).click();
    await heading(dev, "New key");
    const rolled = await dev.getByLabel("Key", { exact: true }).inputValue();
    assert.is.not(rolled, plain);
    assert.ok(await tg.gateway.kit.directory.authenticate("apiKey", rolled));
    assert.ok(await tg.gateway.kit.directory.authenticate("apiKey", plain), "the old key works until its deadline");
    await dev.getByRole("link", { name: "All keys" }).click();
    await heading(dev, "API keys");
    await shot(dev, join(shots, "dashboard-keys.png"));
  });

  test("a failed API request is found by the request ID its answer carried", async () => {
    // The merchant's call fails (no body): the answer's X-Request-ID is what support is given.
    const failed = await tg.call("/api/v1/invoice/sign", { method: "POST", host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY, "content-type": "application/json" }, body: "{" });
    const problem = (await failed.json()) as { code: string };
    const requestId = failed.headers.get("x-request-id")!;
    assert.ok(failed.status >= 400 && requestId, `a failed request with its ID (${failed.status})`);
    await tg.gateway.requestLog!.flush();

    const owner = await newPage();
    await owner.goto(`${base}/dashboard`);
    await owner.getByLabel("E-mail").fill(DEMO_OWNER.email);
    await owner.getByLabel("Password").fill(DEMO_OWNER.password);
    await owner.getByRole("button", { name: "Continue" }).click();
    // The next time step's code: the first test spent this step's, and a code works once.
    await owner.getByLabel("Code").fill(totpCode(DEMO_OWNER.totpSecret, Date.now() + 30_000));
    await owner.getByRole("button", { name: "Sign in" }).click();
    await heading(owner, "Home");
    await owner.getByRole("link", { name: "Requests" }).first().click();
    await heading(owner, "Requests");
    await owner.getByLabel("Request ID").fill(requestId);
    await owner.getByRole("button", { name: "Find" }).click();
    await heading(owner, `Request ${requestId}`);
    const page = await owner.locator("main").innerText();
    assert.ok(page.includes(String(failed.status)), "the status is shown");
    assert.ok(page.includes(problem.code), `the GW code ${problem.code} is shown`);
    assert.not.ok(page.includes(DEMO_KEY), "never the key");
    await shot(owner, join(shots, "dashboard-request.png"));
  });

  test.after(async () => {
    await browser.close().catch(() => {});
    await tg.close();
  });
  test.run();
}
