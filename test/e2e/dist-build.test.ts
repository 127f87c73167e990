/**
 * `npm run build` (scripts/build.ts): the gateway and the worker compiled into dist/ run with plain
 * node, as a deployment runs them (docs/deployment.md "Running compiled"). The build goes to a
 * temporary folder with node_modules linked beside it; the gateway starts from it on the demo
 * config (the SQLite store in a data folder, the simulator in-process), answers health and onboards a represented business
 * through the regulator simulator, then drains on SIGTERM and exits 0. The drivers the embedded
 * default never uses (MongoDB, Redis) are not loaded by the files the entry imports statically. The worker's entry runs from its bundle too (and refuses the single-process store).
 */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { request } from "undici";
import { spawnListening } from "../../bench/processes.ts";
import { buildDist } from "../../scripts/build.ts";
import { summarizeDatabase } from "../../adapters/document-store/sqlite/backup.ts";
import { DEMO_KEY, PASSTHROUGH } from "../support/gateway.ts";
import { tempDir } from "../support/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const dir = tempDir("dist");
symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"), "dir");
const built = await buildDist(join(dir, "dist"));

const config = JSON.parse(readFileSync(join(ROOT, "config/demo.json"), "utf8")) as Record<string, any>;
config.server = { ...config.server, port: 0 };
config.regulator = { ...config.regulator, simulator: { ...config.regulator.simulator, port: 0 } };
config.storage = { driver: "fs", dir: join(dir, "data") };
config.email = { driver: "folder", dir: join(dir, "mail") };
const configPath = join(dir, "config.json");
writeFileSync(configPath, JSON.stringify(config));

test("the compiled gateway starts with plain node, answers health and onboards through the simulator, and drains on SIGTERM", async () => {
  // The bench's launcher: plain node (no tsx loader), resolves once the gateway prints its URL.
  const { child, url } = await spawnListening("compiled gateway", [built.main, "--config", configPath], /listening on (http:\/\/\S+)/, { tsx: false });
  try {
    const health = await request(`${url}/health`);
    assert.is(health.statusCode, 200);
    assert.equal(await health.body.json(), { status: "ok" });
    const onboard = await request(`${url}/sub-businesses`, {
      method: "POST",
      headers: { host: PASSTHROUGH, "x-api-key": DEMO_KEY, "x-idempotency-key": "dist-onboard-0001", "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } }),
    });
    const created = (await onboard.body.json()) as { regulatorIdentity?: { tin: string } };
    assert.is(onboard.statusCode, 201, JSON.stringify(created));
    assert.is(created.regulatorIdentity?.tin, "12345678-0001");
    const exit = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    assert.is(await exit, 0, "drained and exited 0");
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
});

test("the compiled gateway kept its data in the SQLite file, written by its writer thread from dist/sqlite-writer.mjs", () => {
  assert.ok(existsSync(join(dir, "dist", "sqlite-writer.mjs")));
  const summary = summarizeDatabase(join(dir, "data", "gatehouse.sqlite"));
  assert.is(summary.integrity, "ok");
  assert.ok(summary.documents > 0, JSON.stringify(summary.collections));
});

test("the files the gateway's entry imports statically load no MongoDB or Redis driver (their adapters are chunks loaded when configured)", () => {
  const seen = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, "utf8");
    for (const driver of ["mongodb", "ioredis"]) {
      assert.not.ok(new RegExp(`^import[^;]*from\\s*"${driver}"`, "m").test(text), `${file} imports ${driver} statically`);
    }
    for (const m of text.matchAll(/^import[^;]*?from\s*"(\.\/[^"]+)"/gm)) visit(join(dirname(file), m[1]!));
  };
  visit(built.main);
  assert.ok(seen.size > 1, "the entry imports shared chunks");
  const all = readFileSync(built.main, "utf8") + [...seen].map((f) => readFileSync(f, "utf8")).join("");
  assert.ok(/import\("\.\/[^"]+"\)/.test(all), "the store and coordination adapters are loaded by dynamic import");
});

test("the compiled worker runs its own entry (and refuses the single-process fs store with a clear message, exit 1)", async () => {
  const child = spawn(process.execPath, [built.worker, "--config", configPath], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let err = "";
  child.stderr!.on("data", (d) => (err += d));
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  assert.is(code, 1);
  assert.match(err, /needs a shared document store \(storage\.driver "mongodb"\)/);
});

test.run();
