/**
 * The test command's runner. Every `*.test.ts` under test/ runs in its own process (real servers
 * and ports stay isolated per file), two at a time on this machine's two cores. Each file is an uvu
 * suite; its summary is read from its output. The run ends with the line `N passed, N failed, N skipped`.
 *
 *   npm test                      every file
 *   npm test -- pipeline quota    only files whose path contains one of the words
 *
 * Catalog coverage: every suite process records the GW_* codes it read off HTTP answers (see
 * support/code-coverage.ts); a whole-suite run (no words) fails, as one more failed check, when a
 * catalog code was never seen, and lists it. With words the coverage is only printed.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { availableParallelism, tmpdir } from "node:os";
import { CODES_DIR_ENV, readCoverage } from "./support/code-coverage.ts";

const ROOT = new URL("..", import.meta.url).pathname;
/** Where the suites are; `TEST_RUNNER_DIR` points the runner elsewhere (the runner's own test). */
const TEST_DIR = process.env.TEST_RUNNER_DIR ?? join(ROOT, "test");
/** Preloaded into every suite: records the codes of the problem+json answers it receives. */
const RECORDER = join(ROOT, "test/support/record-codes.mjs");
const FILE_TIMEOUT_MS = Number(process.env.TEST_FILE_TIMEOUT_MS ?? 360_000);
/** After a kill, how long the runner waits for the file's output pipes to close before it moves on. */
const KILL_GRACE_MS = 2_000;

interface FileResult {
  file: string;
  passed: number;
  failed: number;
  skipped: number;
  output: string;
  ms: number;
}

const filters = process.argv.slice(2).filter((a) => !a.startsWith("-"));
const files = _listTests(TEST_DIR)
  .map((f) => relative(ROOT, f))
  .filter((f) => filters.length === 0 || filters.some((w) => f.includes(w)))
  .sort();

/**
 * Each file gets its own TMPDIR under this folder, removed when the file ends however it ended: a
 * suite killed at its deadline (or a server it started) cannot run its own clean-up at exit.
 */
const RUN_TMP = mkdtempSync(join(tmpdir(), "gatehouse-run-"));
/** Where the suites record the codes they saw (outside each file's own TMPDIR, which is removed). */
const CODES_DIR = join(RUN_TMP, "codes");
mkdirSync(CODES_DIR);
/**
 * The coverage check applies to the real suite only, not to a runner pointed at other suites
 * (`TEST_CATALOG_COVERAGE=on` turns it on there: the runner's own test).
 */
const CHECK_COVERAGE = (process.env.TEST_CATALOG_COVERAGE ?? (process.env.TEST_RUNNER_DIR === undefined ? "on" : "off")) === "on";
const results: FileResult[] = [];
/** Process groups of the files running now: the suites are detached, so a Ctrl-C or a TERM of the
 * runner does not reach them by itself. */
const running = new Set<number>();
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    for (const pid of running) _killGroup(pid);
    rmSync(RUN_TMP, { recursive: true, force: true });
    process.exit(signal === "SIGINT" ? 130 : 143);
  });
}
const queue = [...files];
const workers = Math.max(1, Math.min(Number(process.env.TEST_CONCURRENCY ?? availableParallelism()), 4));

await Promise.all(Array.from({ length: workers }, () => _worker()));

let passed = 0;
let failed = 0;
let skipped = 0;
for (const r of results.sort((a, b) => a.file.localeCompare(b.file))) {
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
}
process.stdout.write("\n");
for (const r of results) {
  const mark = r.failed > 0 ? "FAIL" : "ok  ";
  process.stdout.write(`${mark} ${r.file}  (${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped, ${r.ms} ms)\n`);
}
if (CHECK_COVERAGE) failed += _reportCoverage(filters.length === 0);
process.stdout.write(`\n${passed} passed, ${failed} failed, ${skipped} skipped\n`);
process.exitCode = failed > 0 || files.length === 0 ? 1 : 0;
rmSync(RUN_TMP, { recursive: true, force: true });

// --- Internal helpers ---

async function _worker(): Promise<void> {
  for (let file = queue.shift(); file; file = queue.shift()) {
    const r = await _runFile(file);
    results.push(r);
    const failedNote = r.failed > 0 ? `\n----- output of ${file} -----\n${r.output}\n----- end of ${file} -----\n` : "";
    process.stdout.write(`${r.failed > 0 ? "✗" : "✓"} ${file} ${r.passed}/${r.passed + r.failed} (${r.ms} ms)\n${failedNote}`);
  }
}

function _runFile(file: string): Promise<FileResult> {
  const started = Date.now();
  return new Promise((resolve) => {
    // One node process per file, the tsx loader in it (as `npm start` runs): the tsx CLI would add
    // a wrapper process between the runner and the suite. The file leads its own process group so a
    // timeout kills the suite and every server it started (a child holding the output pipe open
    // would otherwise keep the runner waiting forever).
    const fileTmp = mkdtempSync(join(RUN_TMP, "f-"));
    const child = spawn(process.execPath, ["--import", "tsx", "--import", RECORDER, file], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0", TMPDIR: fileTmp, [CODES_DIR_ENV]: CODES_DIR },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    if (child.pid !== undefined) running.add(child.pid);
    let output = "";
    let settled = false;
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const finish = (code: number | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (child.pid !== undefined) running.delete(child.pid);
      rmSync(fileTmp, { recursive: true, force: true });
      const total = _count(output, "Total");
      const passed = _count(output, "Passed");
      const skipped = _count(output, "Skipped");
      // uvu's Total leaves skipped tests out.
      let failed = Math.max(0, total - passed);
      // A file that crashed, printed no summary, or exited non-zero without a counted failure is a failure.
      const summaries = /^\s*Total:/m.test(output);
      if (!summaries || (total === 0 && skipped === 0) || (code !== 0 && failed === 0)) failed += 1;
      resolve({ file, passed, failed, skipped, output, ms: Date.now() - started });
    };
    const timer = setTimeout(() => {
      output += `\n[runner] ${file} exceeded ${FILE_TIMEOUT_MS} ms and was killed\n`;
      _killGroup(child.pid);
      // Whatever still holds the pipes (a process that left the group) no longer holds the runner.
      setTimeout(() => finish(null), KILL_GRACE_MS).unref();
    }, FILE_TIMEOUT_MS);
    child.on("close", (code) => finish(code));
    child.on("error", (err) => {
      output += `\n[runner] ${file} could not start: ${err.message}\n`;
      finish(null);
    });
  });
}

/**
 * Prints which catalog codes the suites read off HTTP answers. On a whole-suite run, a code never
 * seen is a failed check: returns the number of failed checks to add (0 or 1).
 */
function _reportCoverage(enforce: boolean): number {
  const { seen, missing, total } = readCoverage(CODES_DIR);
  process.stdout.write(`\ncatalog coverage: ${seen.length} of ${total} GW_* codes read off HTTP answers\n`);
  if (!enforce) return 0;
  if (missing.length === 0) return 0;
  process.stdout.write(`FAIL catalog coverage: ${missing.length} code(s) never produced over HTTP:\n`);
  for (const code of missing) process.stdout.write(`  ${code}\n`);
  return 1;
}

function _killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is gone already.
  }
}

function _count(output: string, label: string): number {
  let sum = 0;
  for (const m of output.matchAll(new RegExp(`^\\s*${label}:\\s+(\\d+)`, "gm"))) sum += Number(m[1]);
  return sum;
}

function _listTests(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(..._listTests(p));
    else if (name.endsWith(".test.ts")) out.push(p);
  }
  return out;
}
