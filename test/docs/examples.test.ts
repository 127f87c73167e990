/**
 * Every documented example is a test. The runnable blocks of README.md and docs/ (marked
 * `<!-- run… -->`, test/docs/markdown-examples.ts) run in document order — README first, then
 * DOC_ORDER — against one `npm start` on the demo config (free ports, a fresh data folder), each
 * document in its own shell as a reader's terminal, and every block's answers are checked against
 * what its marker documents. Then `npx gatehouse demo reset` must give back the documented directory,
 * and README.md's examples must run again on what every document left behind. The examples name
 * the port `$PORT` (and the simulator's `$REGULATOR_SIM_PORT`), as README.md says.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
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
  "docs/dashboard.md",
  "docs/errors.md",
  "docs/configuration.md",
  "docs/operations.md",
  "docs/operator-console.md",
  "docs/regulator-simulator.md",
  "docs/regulator-client.md",
  "docs/plugins.md",
  "docs/deployment.md",
  "docs/architecture.md",
  "docs/decisions.md",
  "docs/bench.md",
];
const BLOCK_TIMEOUT_MS = 90_000;
const ADMIN_KEY = "admin_demo_key_0001";

const texts = new Map(DOC_ORDER.map((f) => [f, readFileSync(join(ROOT, f), "utf8")]));
const examples: Example[] = DOC_ORDER.flatMap((f) => extractExamples(f, texts.get(f)!));
const rootEntries = new Set(readdirSync(ROOT));

let gateway: DemoGateway | null = null;
let session: { file: string; shell: ShellSession } | null = null;
/** Examples that passed: in document order, and README.md's again at the end. */
const passed = { inOrder: 0, again: 0 };

test.before(async () => {
  gateway = await startDemoGateway({ GATEHOUSE_CONFIG: _demoConfigWithRoomForTwoPasses() });
});

test.after(async () => {
  session?.shell.close();
  const code = await gateway?.stop();
  // Files the examples wrote into the repository (invoice.json) go; folders the demo makes (.outbox) stay.
  for (const entry of readdirSync(ROOT))
    if (!rootEntries.has(entry) && examples.some((e) => e.code.includes(entry)) && statSync(join(ROOT, entry)).isFile()) rmSync(join(ROOT, entry));
  const total = DOC_ORDER.reduce((n, f) => n + countShellAndTsBlocks(texts.get(f)!), 0);
  const readme = examples.filter((e) => e.file === "README.md").length;
  process.stdout.write(`\ndocumented sh/ts examples: ${examples.length} runnable of ${total}; ${passed.inOrder} passed in order, README.md's ${passed.again} of ${readme} again after a reset\n`);
  assert.is(code, 0, "npm start drains and exits 0 after the examples");
});

test("every page of docs/ is read, and the README and the guides have runnable examples", () => {
  const pages = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`);
  assert.equal(pages.filter((p) => !DOC_ORDER.includes(p)), [], "a page missing from DOC_ORDER: its examples would never run");
  const guides = ["README.md", "docs/onboarding.md", "docs/signing-and-transmission.md", "docs/stored-mode.md", "docs/client.md", "docs/operations.md", "docs/collections-payment-links.md", "docs/collections-virtual-accounts.md", "docs/billing.md"];
  for (const f of guides)
    assert.ok(examples.some((e) => e.file === f), `${f} has no runnable example`);
});

for (const example of examples) test(`${example.file}:${example.line} (${example.lang})`, () => _runExample(example, example.file).then(() => void passed.inOrder++));

test("npx gatehouse demo reset: after every example the demo's directory is as documented again", async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, "bin/gatehouse.js"), "demo", "reset"], {
    cwd: ROOT,
    env: { ...process.env, GATEHOUSE_URL: undefined, PORT: String(gateway!.port), REGULATOR_SIM_PORT: String(gateway!.simulatorPort), GATEHOUSE_ADMIN_KEY: ADMIN_KEY },
  });
  assert.match(stdout, /has no faults/);
  const admin = (path: string) => fetch(`${gateway!.url}${path}`, { headers: { "x-admin-api-key": ADMIN_KEY } }).then((r) => r.json() as Promise<any>);
  const domains = Object.fromEntries(((await admin("/admin/domains")).data as any[]).map((d) => [d.host, d]));
  for (const [host, mode] of [["passthrough.demo.localhost", "passthrough"], ["stored.demo.localhost", "stored"], ["other.demo.localhost", "passthrough"]] as const) {
    assert.is(domains[host]?.mode, mode, host);
    assert.is(domains[host]?.approval, "approved", host);
    assert.is(domains[host]?.autoTransmit, false, host);
  }
  const keys = ((await admin("/admin/keys?limit=100")).data as any[]).map((k) => `${k.id}:${k.status}`).sort();
  assert.ok(keys.includes("demo-primary:active") && keys.includes("demo-allowlisted:active"), keys.join(" "));
  assert.ok(!keys.some((k) => k.startsWith("demo-ci")), `keys the examples made are gone: ${keys.join(" ")}`);
  const faults = (await (await fetch(`http://127.0.0.1:${gateway!.simulatorPort}/__sim/faults`)).json()) as { faults: unknown[] };
  assert.equal(faults.faults, []);
});

// "Also after the others": README.md's examples once more, on the state every other document left.
for (const example of examples.filter((e) => e.file === "README.md"))
  test(`${example.file}:${example.line} (${example.lang}), again after every document`, () => _runExample(example, "README.md (again)").then(() => void passed.again++));

test.run();

// --- Internal helpers ---

async function _runExample(example: Example, sessionName: string): Promise<void> {
  const shell = _shellFor(sessionName);
  const run = await shell.run(example.code, example.lang, BLOCK_TIMEOUT_MS);
  if (run.timedOut) _closeSession();
  const problems = run.timedOut ? [`no end within ${BLOCK_TIMEOUT_MS} ms`] : checkAnswers(example.expect, run.answers, run.output);
  if (!run.timedOut && run.exit !== example.expect.exit) problems.push(`exit ${run.exit}, ${example.expect.exit} expected`);
  assert.ok(problems.length === 0, `${example.file}:${example.line}\n${problems.join("\n")}\n--- output ---\n${run.output.slice(-3000)}`);
}

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

// --- Internal helpers ---

/**
 * config/demo.json with a larger operator quota: README's examples run twice within a minute here
 * (in order, then again after a reset), and the second pass would meet the management quota (30 per
 * minute per credential) that a reader running them twice meets too. Everything else is the demo's.
 */
function _demoConfigWithRoomForTwoPasses(): string {
  const config = JSON.parse(readFileSync(join(ROOT, "config/demo.json"), "utf8"));
  config.limits = { ...config.limits, quotas: { ...config.limits?.quotas, management: { limit: 600, windowSeconds: 60 } } };
  const file = join(tempDir("docs-config"), "demo.json");
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}
