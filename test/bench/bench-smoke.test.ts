/**
 * Bench smoke test: the real bench machinery (bench/run.ts) with tiny settings. It checks that the
 * comparison is honest and the report is whole, never how fast anything is (figures on a shared
 * two-core machine say nothing in a test; the speed goals live in `npm run bench`):
 * - the settings: fixed defaults, BENCH_* overrides, `--quick` (argument or npm's npm_config_quick);
 * - the peers really check the key (401 without it) and really rate-limit (429 past `--limit`), and
 *   every proxy relays the upstream's body unchanged;
 * - a run at tiny sizes of every load scenario and of one of each driven kind (stored, sign-memory,
 *   va-list; `.ci/run`'s `npm run bench -- --quick` runs them all): each row answered 2xx only, the
 *   gateway wrote one completion line per answered request, the table has every row and the goals,
 *   the JSON and the SVG chart are written.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { renderChart, writeChart } from "../../bench/chart.ts";
import { stopProcess } from "../../bench/processes.ts";
import { evaluateGoals, formatReport, gitShortSha, writeReport } from "../../bench/report.ts";
import { benchSettings, isQuick, QUICK_ENV, runBench, scenarioEnv, type BenchReport } from "../../bench/run.ts";
import { httpGet, LOAD_SCENARIOS, startServer } from "../../bench/scenarios/load.ts";
import { BENCH_API_KEY, BENCH_HOST, BENCH_PATH, RELAY_PATH, UPSTREAM_BODY } from "../../bench/servers/common.ts";

test("settings: fixed defaults, BENCH_* overrides, bad values refused, --quick from argv or npm_config_quick", () => {
  assert.equal(benchSettings({}), { connections: 64, duration: 10, pipelining: 1, warmup: 1, workers: 1, quick: false });
  const quick = benchSettings({}, true);
  assert.is(quick.quick, true);
  assert.ok(quick.duration < 10 && quick.connections === 64);
  assert.equal(benchSettings({ BENCH_DURATION: "1.5", BENCH_CONNECTIONS: "4", BENCH_PIPELINING: "2", BENCH_WARMUP: "0", BENCH_WORKERS: "0" }), {
    connections: 4,
    duration: 1.5,
    pipelining: 2,
    warmup: 0,
    workers: 0,
    quick: false,
  });
  assert.throws(() => benchSettings({ BENCH_CONNECTIONS: "0" }), /BENCH_CONNECTIONS/);
  assert.throws(() => benchSettings({ BENCH_DURATION: "soon" }), /BENCH_DURATION/);
  assert.ok(isQuick(["--quick"], {}));
  assert.ok(isQuick([], { npm_config_quick: "true" }));
  assert.not.ok(isQuick([], {}));
  assert.not.ok(isQuick([], { npm_config_quick: "false" }));
  // --quick shrinks the driven scenarios unless the environment says otherwise.
  assert.is(scenarioEnv({}, true).BENCH_SIGN_COUNT, QUICK_ENV.BENCH_SIGN_COUNT);
  assert.is(scenarioEnv({ BENCH_SIGN_COUNT: "7" }, true).BENCH_SIGN_COUNT, "7");
  assert.is(scenarioEnv({}, false).BENCH_SIGN_COUNT, undefined);
});

test("the git short sha is a hex sha or nogit", () => {
  assert.match(gitShortSha(), /^([0-9a-f]{4,40}|nogit)$/);
});

test("the peers check the key (401), rate-limit (429 past --limit) and relay the upstream's body; bare h3 relays it too", async () => {
  const upstream = await startServer("upstream", []);
  const servers = await Promise.all([
    startServer("fast-gateway", ["--upstream", upstream.url, "--limit", "3"]),
    startServer("fastify", ["--upstream", upstream.url, "--limit", "3"]),
    startServer("bare-h3", ["--upstream", upstream.url]),
  ]);
  try {
    const key = { host: BENCH_HOST, "x-api-key": BENCH_API_KEY };
    for (const [i, name] of ["fast-gateway", "fastify"].entries()) {
      const url = servers[i]!.url;
      assert.is((await httpGet(url + RELAY_PATH, { host: BENCH_HOST })).status, 401, `${name} without a key`);
      assert.is((await httpGet(url + RELAY_PATH, { ...key, "x-api-key": "gw_wrong_key_0000" })).status, 401, `${name} with a wrong key`);
      const relayed = await httpGet(url + RELAY_PATH, key);
      assert.is(relayed.status, 200, name);
      assert.is(relayed.body, UPSTREAM_BODY, `${name} relays the upstream's body`);
      assert.is((await httpGet(url + BENCH_PATH, key)).status, 200, `${name} ping`);
      assert.is((await httpGet(url + BENCH_PATH, key)).status, 200, `${name} ping`);
      assert.is((await httpGet(url + RELAY_PATH, key)).status, 429, `${name}: the 4th request of the window is refused`);
    }
    const bare = await httpGet(servers[2]!.url + RELAY_PATH, key);
    assert.is(bare.status, 200);
    assert.is(bare.body, UPSTREAM_BODY);
  } finally {
    await Promise.all([...servers, upstream].map((s) => stopProcess(s.child)));
  }
});

test("a tiny run: 2xx only, one log line per answered request, every row, goals, JSON and chart", async () => {
  const env = {
    ...process.env,
    BENCH_STORED_BACKLOG: "20",
    BENCH_SIGN_COUNT: "20",
    BENCH_SIGN_WARMUP: "0",
    VA_BENCH_COUNT: "2000",
    VA_BENCH_REQUESTS: "2",
  };
  const only = ["ping", "health", "relay", "stored", "sign-memory", "va-list"];
  const report: BenchReport = await runBench({ settings: { ...benchSettings({ BENCH_DURATION: "0.5", BENCH_CONNECTIONS: "4" }), warmup: 0 }, env, only });
  const rows = report.scenarios.map((s) => s.name);
  for (const s of LOAD_SCENARIOS) for (const server of s.servers) assert.ok(rows.includes(`${s.name}/${server}`), `${s.name}/${server} ran`);
  for (const name of ["stored/gateway", "sign-memory/gateway", "va-list/gateway"]) assert.ok(rows.includes(name), `${name} ran`);
  assert.not.ok(rows.some((r) => r.startsWith("sign-sqlite") || r.startsWith("sign-mongodb-redis")), "--only leaves the others out");
  for (const s of report.scenarios) {
    assert.ok(s.requests > 0, `${s.name} completed no request`);
    assert.is(s.status2xx, s.requests, `${s.name}: every counted response is a 2xx`);
    assert.is(s.non2xx, 0, `${s.name} saw non-2xx responses`);
    assert.is(s.errors, 0, `${s.name} saw connection errors`);
    assert.ok(s.requestsPerSec > 0 && s.latency.p99 >= s.latency.p50, `${s.name} has figures`);
    if (["ping", "health", "relay"].includes(s.scenario)) assert.ok(s.rssMiB! > 0 && s.cpuUsPerRequest! > 0, `${s.name}: RSS and CPU of its process`);
  }
  assert.equal(report.problems, []);
  for (const scenario of ["ping", "health", "relay"])
    assert.ok(report.notes.some((n) => n.startsWith(`${scenario}/gateway: log lines written`)), `${scenario}: the gateway's log lines were counted`);

  assert.equal(
    report.goals.map((g) => g.name.split(":")[0]),
    ["ping", "relay", "gateway RSS after each load scenario", "virtual-account list at 2,000 accounts"],
  );
  assert.equal(evaluateGoals(report.scenarios), report.goals);
  const text = formatReport(report);
  for (const s of report.scenarios) assert.match(text, new RegExp(`^${s.scenario} +${s.server} `, "m"));
  assert.match(text, /^goals \(issue 12/m);
  assert.ok(report.notes.some((line) => line.startsWith("sign-memory: ") && /signs\/s/.test(line) && /RSS/.test(line)), "sign-memory prints its line");
  assert.ok(
    report.notes.some((line) => line.startsWith("sign-memory: ") && /after a full GC \d+ MiB \(live heap \d+ MiB\)/.test(line)),
    "sign-memory reports RSS and the live heap after a full collection (asked of the compiled gateway through its inspector)",
  );

  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
  try {
    const file = writeReport(report, dir);
    assert.match(file, /\/\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}Z-([0-9a-f]{4,40}|nogit)\.json$/);
    const saved = JSON.parse(readFileSync(file, "utf8")) as BenchReport;
    assert.equal(saved.scenarios.length, report.scenarios.length);
    assert.equal(saved.settings, report.settings);
    const chart = writeChart(report, file.replace(/\.json$/, ".svg"));
    assert.equal(readdirSync(dir).sort(), [file, chart].map((f) => f.slice(dir.length + 1)).sort());
    const svg = readFileSync(chart, "utf8");
    assert.is(svg, renderChart(report));
    assert.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
    for (const server of ["bare-h3", "fast-gateway", "fastify", "gateway", "upstream"]) assert.ok(svg.includes(`>${server}</text>`), `${server} in the chart`);
    assert.equal(svg.match(/<rect /g)!.length, 1 + 4 + LOAD_SCENARIOS.reduce((n, s) => n + s.servers.length, 0), "background, legend and one bar per load row");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
