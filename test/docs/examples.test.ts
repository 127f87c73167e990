/**
 * Every documented example is a test. The runnable blocks of README.md and docs/ (marked
 * `<!-- run… -->`, test/docs/markdown-examples.ts) run in document order — README first, then
 * DOC_ORDER — against one `npm start` on the demo config (free ports, a fresh data folder), each
 * document in its own shell as a reader's terminal, and every block's answers are checked against
 * what its marker documents. The examples name the port `$PORT` (and the simulator's
 * `$REGULATOR_SIM_PORT`), as README.md says.
 */
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startDemoGateway, type DemoGateway } from "../support/demo-gateway.ts";
import { tempDir } from "../support/temp.ts";
import { checkAnswers, countShellAndTsBlocks, extractExamples, type Example } from "./markdown-examples.ts";
import { openShellSession, type ShellSession } from "./shell-session.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
/** The reading order: the merchant's path first, then the operator's, then the reference pages. */
export const DOC_ORDER = [
  "README.md",
  "docs/onboarding.md",
  "docs/signing-and-transmission.md",
  "docs/stored-mode.md",
  "docs/client.md",
  "docs/collections-payment-links.md",
  "docs/collections-virtual-accounts.md",
  "docs/webhooks.md",
  "docs/billing.md",
  "docs/errors.md",
  "docs/configuration.md",
  "docs/operations.md",
  "docs/regulator-simulator.md",
  "docs/regulator-client.md",
  "docs/plugins.md",
  "docs/deployment.md",
  "docs/architecture.md",
  "docs/decisions.md",
  "docs/bench.md",
];
const BLOCK_TIMEOUT_MS = 90_000;

const texts = new Map(DOC_ORDER.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
const examples: Example[] = DOC_ORDER.flatMap((f) => extractExamples(f, texts.get(f)!));
const rootEntries = new Set(readdirSync(ROOT));

let gateway: DemoGateway | null = null;
let session: { file: string; shell: ShellSession } | null = null;
let passed = 0;

test.before(async () => {
  gateway = await startDemoGateway();
});

test.after(async () => {
  session?.shell.close();
  const code = await gateway?.stop();
  // What the examples wrote into the repository (invoice.json, …) goes; folders the demo makes stay.
  for (const entry of readdirSync(ROOT)) if (!rootEntries.has(entry) && statSync(join(ROOT, entry)).isFile()) rmSync(join(ROOT, entry));
  const total = DOC_ORDER.reduce((n, f) => n + countShellAndTsBlocks(texts.get(f)!), 0);
  process.stdout.write(`\ndocumented sh/ts examples: ${examples.length} runnable of ${total}; ${passed} passed\n`);
  assert.is(code, 0, "npm start drains and exits 0 after the examples");
});

test("the docs mark runnable examples in the README and the merchant guides", () => {
  for (const f of ["README.md"])
    assert.ok(examples.some((e) => e.file === f), `${f} has no runnable example`);
});

for (const example of examples) {
  test(`${example.file}:${example.line} (${example.lang})`, async () => {
    const shell = _shellFor(example.file);
    const run = await shell.run(example.code, example.lang, BLOCK_TIMEOUT_MS);
    if (run.timedOut) _closeSession();
    const problems = run.timedOut ? [`no end within ${BLOCK_TIMEOUT_MS} ms`] : checkAnswers(example.expect, run.answers, run.output);
    if (!run.timedOut && run.exit !== example.expect.exit) problems.push(`exit ${run.exit}, ${example.expect.exit} expected`);
    assert.ok(problems.length === 0, `${example.file}:${example.line}\n${problems.join("\n")}\n--- output ---\n${run.output.slice(-3000)}`);
    passed++;
  });
}

test.run();

// --- Internal helpers ---

function _shellFor(file: string): ShellSession {
  if (session?.file === file) return session.shell;
  _closeSession();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(gateway!.port), REGULATOR_SIM_PORT: String(gateway!.simulatorPort), NO_COLOR: "1" };
  for (const name of ["GATEHOUSE_URL", "GATEHOUSE_ADMIN_KEY", "GATEHOUSE_CONFIG"]) delete env[name];
  session = { file, shell: openShellSession({ root: ROOT, workDir: tempDir("doc-shell"), env }) };
  return session.shell;
}

function _closeSession(): void {
  session?.shell.close();
  session = null;
}
