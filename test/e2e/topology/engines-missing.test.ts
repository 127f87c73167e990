/**
 * The topology test without its engines (issue 15 "Done means"): with `CI=true` a missing nginx or
 * MongoDB-wire server makes it fail loudly (non-zero exit, the reason printed); outside CI it
 * reports a visible skip. The test file itself runs, with NGINX_BIN / JONGODB_BIN pointing nowhere.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = new URL("../../../", import.meta.url).pathname;
const TOPOLOGY_TEST = "test/e2e/topology/faults.test.ts";

function runWith(env: Record<string, string>): { status: number | null; out: string } {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !["CI", "MONGODB_URI", "REDIS_URL"].includes(k)));
  const r = spawnSync(join(ROOT, "node_modules/.bin/tsx"), [TOPOLOGY_TEST], { cwd: ROOT, env: { ...clean, ...env }, encoding: "utf8", timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test("CI=true and no nginx: the topology test fails, naming nginx", () => {
  const r = runWith({ CI: "true", NGINX_BIN: "/nonexistent/nginx" });
  assert.is.not(r.status, 0, r.out);
  assert.match(r.out, /nginx not found/);
  assert.match(r.out, /CI=true so this is a failure, not a skip/);
});

test("CI=true and no MongoDB-wire server: the topology test fails, naming it", () => {
  const r = runWith({ CI: "true", JONGODB_BIN: "/nonexistent/jongodb" });
  assert.is.not(r.status, 0, r.out);
  assert.match(r.out, /jongodb binary not found/);
  assert.match(r.out, /CI=true so this is a failure, not a skip/);
});

test("outside CI, no nginx: a visible skip, nothing started", () => {
  const r = runWith({ NGINX_BIN: "/nonexistent/nginx" });
  assert.is(r.status, 0, r.out);
  assert.match(r.out, /SKIPPED scale-out topology: nginx not found/);
  assert.match(r.out, /Skipped:\s+1/);
});

test.run();
