/**
 * What the Chromium suites share: Debian's chromium (CHROMIUM_PATH overrides it), the flags it runs
 * with, why a browser test cannot run here (and the skip-or-fail gate on it), and where screenshots go (docs/images/ when one is
 * missing or UPDATE_SCREENSHOTS=1, else a temp folder so a test run does not rewrite the docs).
 */
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { suite } from "uvu";
import { tempDir } from "./temp.ts";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
const ROOT = new URL("../../", import.meta.url).pathname;

/** Why Chromium tests cannot run on this machine, or null when they can. */
export async function browserMissing(): Promise<string | null> {
  try {
    accessSync(CHROMIUM, constants.X_OK);
  } catch {
    return `${CHROMIUM} not found (install it: apt-get install chromium, or run scripts/ci-browser.sh)`;
  }
  try {
    await import("playwright-core");
  } catch {
    return "playwright-core is not installed (npm ci)";
  }
  return null;
}

/**
 * Runs a browser suite, or, when Chromium or playwright-core is missing, reports it skipped with the
 * reason (one skipped case, so the count shows it) — and fails instead when CI=true, where the
 * engines are installed and a skip would hide the suite.
 */
export async function withBrowser(name: string, run: () => Promise<void>): Promise<void> {
  const missing = await browserMissing();
  if (missing === null) return run();
  if (process.env.CI === "true") throw new Error(`[${name}] ${missing}; CI=true so this is a failure, not a skip`);
  process.stdout.write(`SKIPPED ${name}: ${missing}\n`);
  const s = suite(name);
  s.skip(`${name} (${missing})`, () => {});
  s.run();
}

/** docs/images/ when one of `names` is missing there or UPDATE_SCREENSHOTS=1; a temp folder otherwise. */
export function screenshotsDir(names: readonly string[]): string {
  const docs = join(ROOT, "docs", "images");
  if (process.env.UPDATE_SCREENSHOTS === "1" || names.some((n) => !existsSync(join(docs, n)))) {
    mkdirSync(docs, { recursive: true });
    return docs;
  }
  return tempDir("shots");
}

/** A full-page PNG, steady between runs (no animation, no caret). */
export async function shot(page: Page, path: string): Promise<void> {
  await page.screenshot({ path, type: "png", fullPage: true, animations: "disabled", caret: "hide" });
}
