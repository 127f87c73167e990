/**
 * What the Chromium suites share: Debian's chromium (CHROMIUM_PATH overrides it), the flags it runs
 * with, why a browser test cannot run here, and where screenshots go (docs/images/ when one is
 * missing or UPDATE_SCREENSHOTS=1, else a temp folder so a test run does not rewrite the docs).
 */
import { accessSync, constants, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
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
