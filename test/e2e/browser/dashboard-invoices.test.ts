/**
 * The dashboard's invoice screens in a real browser (headless Chromium through playwright-core)
 * against a listening gateway with the regulator simulator and the Stored processor: the Stored
 * demo business's represented business gets QR material through the API
 * (`POST /sub-businesses/{id}/reg-crypto-material`), an invoice is taken in through the API with the
 * Stored demo key, the processor gets it signed at the simulator; a team member signs in (password,
 * then a TOTP code), finds it in the invoice list, opens it and sees its timeline, the regulator's
 * answers and its QR code image; the JSON download is offered.
 *
 * Chromium is Debian's `chromium` (/usr/bin/chromium). Missing: a failure when CI=true, otherwise a
 * visible skip. Screenshots go to docs/images/ (dashboard-invoice*.png) when missing or
 * UPDATE_SCREENSHOTS=1, otherwise to a temporary folder.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hashPassword } from "../../../plugins/dashboard/passwords.ts";
import { createUserStore } from "../../../plugins/dashboard/users.ts";
import { totpCode } from "../../plugins/dashboard/dashboard-helpers.ts";
import { qrMaterial } from "../../plugins/dashboard/data-helpers.ts";
import { STORED_BUSINESS, SUB, accepted, intakeInvoice, startStoredHarness } from "../../plugins/stored-processing/stored-helpers.ts";
import { CHROMIUM, CHROMIUM_ARGS, screenshotsDir, shot, withBrowser } from "../../support/browser.ts";

const SHOTS = ["dashboard-invoices.png", "dashboard-invoice.png"];
const USER = { email: "dev@stored.example.test", password: "stored developer 0001", totpSecret: "KRSXG5CTMVRXEZLUKRSXG5CTMVRXEZLU" };

await withBrowser("browser dashboard invoices", run);

async function run(): Promise<void> {
  const { chromium } = await import("playwright-core");
  const h = await startStoredHarness();
  const base = h.server.url.replace(/\/+$/, "");
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const shots = screenshotsDir(SHOTS);

  test("a Stored invoice from intake to signed, followed in the dashboard to its QR code", async () => {
    const rotated = await h.call("POST", `/sub-businesses/${SUB}/reg-crypto-material`, { headers: { "x-idempotency-key": "dash-qr-material-0001" }, body: qrMaterial() });
    assert.ok(rotated.status === 200 || rotated.status === 201, `QR material: ${rotated.status} ${await rotated.clone().text()}`);
    const intake = await accepted(await h.intake(intakeInvoice("DASHQR1"), { key: "dash-qr-intake-0001" }));
    const signed = await h.waitFor(intake.invoiceId, (inv) => ["signed", "transmitting", "transmitted"].includes(inv.status));
    await createUserStore(h.tg.gateway.kit.ports.documentStore, Date.now).create({
      businessId: STORED_BUSINESS,
      email: USER.email,
      name: "Stored developer",
      role: "developer",
      status: "active",
      password: await hashPassword(USER.password),
      invitedBy: null,
      totpSecret: USER.totpSecret,
    });

    const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: "en-GB" });
    context.setDefaultTimeout(10_000);
    const page = await context.newPage();
    await page.goto(`${base}/dashboard/invoices`);
    await page.getByLabel("E-mail").fill(USER.email);
    await page.getByLabel("Password").fill(USER.password);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByLabel("Code").fill(totpCode(USER.totpSecret));
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { level: 1, name: "Stored invoices" }).waitFor();
    assert.ok(await page.locator('[data-environment="TEST"]').isVisible(), "the environment is shown");
    await page.getByRole("link", { name: signed.irn }).waitFor();
    await shot(page, join(shots, "dashboard-invoices.png"));

    await page.getByRole("link", { name: signed.irn }).click();
    await page.getByRole("heading", { level: 1, name: `Invoice ${signed.irn}` }).waitFor();
    assert.ok(await page.getByRole("heading", { name: "Status timeline" }).isVisible());
    assert.ok(await page.getByText("The regulator signed the invoice.").isVisible());
    const qr = page.getByRole("img", { name: "The invoice's QR code" });
    await qr.waitFor();
    const box = await qr.boundingBox();
    assert.ok(box !== null && box.width > 50, "the QR code is drawn");
    assert.ok(await page.getByRole("link", { name: "Download the document (JSON)" }).isVisible());
    await shot(page, join(shots, "dashboard-invoice.png"));
    await context.close();
  });

  test.after(async () => {
    await browser.close();
    await h.close();
  });
  test.run();
}
