/**
 * Bench smoke test: runs the real bench machinery (bench/run.ts) with tiny settings, about one
 * second per scenario (100 signs per sign scenario), and checks that it works: every scenario completed requests, none answered
 * non-2xx or hit a connection error, the ratio line is printed and the JSON result is written.
 * No timing assertions: figures on a shared two-core machine say nothing in a test.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { formatReport, gitShortSha, writeReport } from "../../bench/report.ts";
import { benchSettings, runBench, SCENARIOS, type BenchReport } from "../../bench/run.ts";

test("BENCH_* env overrides the fixed settings; bad values are refused", () => {
  assert.equal(benchSettings({}), { connections: 64, duration: 10, pipelining: 1, warmup: 1, workers: 1 });
  const quick = benchSettings({ BENCH_DURATION: "1", BENCH_CONNECTIONS: "4", BENCH_PIPELINING: "2", BENCH_WARMUP: "0", BENCH_WORKERS: "0" });
  assert.equal(quick, { connections: 4, duration: 1, pipelining: 2, warmup: 0, workers: 0 });
  assert.throws(() => benchSettings({ BENCH_CONNECTIONS: "0" }), /BENCH_CONNECTIONS/);
  assert.throws(() => benchSettings({ BENCH_DURATION: "1.5" }), /BENCH_DURATION/);
});

test("the git short sha is a hex sha or nogit", () => {
  assert.match(gitShortSha(), /^([0-9a-f]{4,40}|nogit)$/);
});

test("a one-second bench: every scenario answered 2xx only, the ratio line is printed, the JSON is written", async () => {
  process.env.BENCH_STORED_BACKLOG = "200"; // the stored scenario's drain, kept short here
  // The sign scenarios run a fixed number of signs (100 000 by default): a few here.
  process.env.BENCH_SIGN_COUNT = "100";
  process.env.BENCH_SIGN_WARMUP = "0";
  const report: BenchReport = await runBench({
    settings: { ...benchSettings({ BENCH_DURATION: "1", BENCH_CONNECTIONS: "4" }), warmup: 0 },
  });
  assert.equal(
    report.scenarios.map((s) => s.name),
    SCENARIOS.map((s) => s.name),
  );
  for (const s of report.scenarios) {
    assert.ok(s.requests > 0, `${s.name} completed no request`);
    assert.is(s.status2xx, s.requests, `${s.name}: every counted response is a 2xx`);
    assert.is(s.non2xx, 0, `${s.name} saw non-2xx responses`);
    assert.is(s.errors, 0, `${s.name} saw connection errors`);
    assert.ok(s.requestsPerSec > 0 && s.latency.p99 >= s.latency.p50, `${s.name} has figures`);
  }
  assert.equal(report.problems, []);
  assert.ok(Number.isFinite(report.ratios.requestsPerSec) && report.ratios.requestsPerSec > 0);
  assert.ok(Number.isFinite(report.ratios.p99) && report.ratios.p99 > 0);

  for (const name of SCENARIOS.map((s) => s.name).filter((n) => n.startsWith("sign-"))) {
    assert.ok(
      report.notes.some((line) => line.startsWith(`${name}: `) && /signs\/s/.test(line) && /last\/first \d+\.\d\d/.test(line) && /RSS/.test(line)),
      `${name} prints signs/s, the first/last ratio and the gateway RSS`,
    );
  }
  const text = formatReport(report);
  assert.match(text, /^ratio gateway\/bare \(gateway-pipeline \/ bare-h3\): req\/s \d+\.\d\dx, p99 \d+\.\d\dx/m);
  for (const s of report.scenarios) assert.match(text, new RegExp(`^${s.name} `, "m"));

  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
  try {
    const file = writeReport(report, dir);
    assert.equal(readdirSync(dir), [file.slice(dir.length + 1)]);
    assert.match(file, /\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-([0-9a-f]{4,40}|nogit)\.json$/);
    const saved = JSON.parse(readFileSync(file, "utf8")) as BenchReport;
    assert.equal(saved.scenarios.length, report.scenarios.length);
    assert.equal(saved.settings, report.settings);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
