/**
 * The test command's runner (test/run.ts), run for real on suites written to a temporary folder:
 * - it counts uvu's summaries and ends with the `N passed, N failed, N skipped` line;
 * - a suite past the per-file deadline is a failure, and the kill reaches the suite's whole process
 *   group: a server the suite started that still holds the output pipe does not hang the run and
 *   does not outlive it; the temporary folders of a killed suite are removed (each file runs with a
 *   TMPDIR of its own);
 * - catalog coverage: codes read off real HTTP answers count, codes built in-process do not; a
 *   whole-suite run fails listing the missing codes, a filtered run only prints the coverage.
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tempDir } from "./temp.ts";

const RUNNER = new URL("../run.ts", import.meta.url).pathname;

test("a suite's uvu summary is counted and the run ends with the totals line", async () => {
  {
    const dir = tempDir("runner");
    writeFileSync(join(dir, "a.test.ts"), `console.log("  Total:     3\\n  Passed:    2\\n  Skipped:   1");\n`);
    writeFileSync(join(dir, "b.test.ts"), `console.log("  Total:     1\\n  Passed:    1\\n  Skipped:   0");\n`);
    const run = await _runRunner(dir, 60_000);
    assert.is(run.code, 1, run.output);
    assert.match(run.output, /\n3 passed, 1 failed, 1 skipped\n$/);
  }
});

test("a suite past its deadline fails, and its process group dies with it (a child holding the pipe cannot hang the run)", async () => {
  {
    const dir = tempDir("runner");
    const pidFile = join(dir, "child.pid");
    const tmpFile = join(dir, "tmp.path");
    // The suite starts a child that inherits its stdout (as a server started by a test would) and
    // then never ends.
    writeFileSync(
      join(dir, "hang.test.ts"),
      [
        `import { spawn } from "node:child_process";`,
        `import { mkdtempSync, writeFileSync } from "node:fs";`,
        `import { tmpdir } from "node:os";`,
        `import { join } from "node:path";`,
        `writeFileSync(${JSON.stringify(tmpFile)}, mkdtempSync(join(tmpdir(), "gatehouse-left-")));`,
        `const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "inherit" });`,
        `writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));`,
        `setInterval(() => {}, 1000);`,
        ``,
      ].join("\n"),
    );
    writeFileSync(join(dir, "ok.test.ts"), `console.log("  Total:     1\\n  Passed:    1\\n  Skipped:   0");\n`);
    const run = await _runRunner(dir, 60_000, { TEST_FILE_TIMEOUT_MS: "6000", TEST_CONCURRENCY: "1" });
    assert.is(run.code, 1, run.output);
    assert.match(run.output, /hang\.test\.ts exceeded 6000 ms and was killed/);
    assert.match(run.output, /\n1 passed, 1 failed, 0 skipped\n$/);
    const childPid = Number(readFileSync(pidFile, "utf8"));
    assert.ok(childPid > 0);
    assert.ok(await _gone(childPid), `the suite's child ${childPid} outlived the run`);
    const leftDir = readFileSync(tmpFile, "utf8");
    assert.ok(leftDir.length > 0);
    assert.not.ok(existsSync(leftDir), `the killed suite's temporary folder ${leftDir} was left behind`);
  }
});

test("catalog coverage: a whole-suite run fails listing the codes no HTTP answer carried; a filtered run only prints it", async () => {
  {
    const dir = tempDir("runner");
    // The suite reads GW_ROUTE_NOT_FOUND off a real HTTP answer, and builds a GW_METHOD_NOT_ALLOWED
    // answer in-process (as a unit test would), which must not count.
    writeFileSync(
      join(dir, "codes.test.ts"),
      [
        `import { createServer } from "node:http";`,
        `const problem = { "content-type": "application/problem+json" };`,
        `const server = createServer((_q, s) => s.writeHead(404, problem).end(JSON.stringify({ code: "GW_ROUTE_NOT_FOUND" })));`,
        `server.listen(0, "127.0.0.1", async () => {`,
        `  const port = (server.address() as { port: number }).port;`,
        `  await (await fetch(\`http://127.0.0.1:\${port}/\`)).json();`,
        `  await new Response(JSON.stringify({ code: "GW_METHOD_NOT_ALLOWED" }), { headers: problem }).json();`,
        `  server.close();`,
        `  console.log("  Total:     1\\n  Passed:    1\\n  Skipped:   0");`,
        `});`,
        ``,
      ].join("\n"),
    );
    const whole = await _runRunner(dir, 60_000, { TEST_CATALOG_COVERAGE: "on" });
    assert.is(whole.code, 1, whole.output);
    assert.match(whole.output, /catalog coverage: 1 of \d+ GW_\* codes read off HTTP answers/);
    assert.match(whole.output, /FAIL catalog coverage: \d+ code\(s\) never produced over HTTP:/);
    assert.match(whole.output, /\n {2}GW_METHOD_NOT_ALLOWED\n/);
    assert.not.match(whole.output, /\n {2}GW_ROUTE_NOT_FOUND\n/);
    assert.match(whole.output, /\n1 passed, 1 failed, 0 skipped\n$/);
    const filtered = await _runRunner(dir, 60_000, { TEST_CATALOG_COVERAGE: "on" }, ["codes"]);
    assert.is(filtered.code, 0, filtered.output);
    assert.match(filtered.output, /catalog coverage: 1 of \d+ GW_\* codes read off HTTP answers/);
    assert.not.match(filtered.output, /FAIL catalog coverage/);
    assert.match(filtered.output, /\n1 passed, 0 failed, 0 skipped\n$/);
  }
});

test.run();

// --- Internal helpers ---

function _runRunner(dir: string, limitMs: number, env: Record<string, string> = {}, words: string[] = []): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", RUNNER, ...words], {
      env: { ...process.env, TEST_RUNNER_DIR: dir, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`the runner did not end within ${limitMs} ms:\n${output}`));
    }, limitMs);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

async function _gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return true;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}
