/**
 * Lifecycle: startup prints the URL and answers; SIGTERM drains and exits 0 (and reaches the program
 * itself: npm start and npm run worker run one node process, busy or not); while draining,
 * readiness is not_ready and new requests get 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After,
 * in-flight requests finish, and the deadline bounds the wait.
 */
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { plugins } from "../../plugins/index.ts";
import { serveGateway } from "../../core/server.ts";
import { createLogger } from "../../core/log.ts";
import { DEMO_KEY, DEMO_RAW, PASSTHROUGH, startTestGateway } from "../support/gateway.ts";
import { spawnTs } from "../support/child-process.ts";
import { tempDir } from "../support/temp.ts";
import { probePlugin, slowGate } from "../support/probe-plugin.ts";
import { httpCall } from "../support/raw-http.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

test("npm start's entry point: prints URL and demo hosts, answers /health, exits 0 on SIGTERM after draining", async () => {
  const dir = tempDir("life");
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server.port = 0;
  raw.storage = { driver: "fs", dir: join(dir, "data") };
  raw.regulator.simulator.port = 0;
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(raw));
  const child = spawnTs("boot/main.ts", ["--config", configPath], { ...process.env, PORT: "", LOG_LEVEL: "info" });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const deadline = Date.now() + 20_000;
  while (!/Gatehouse listening on (http:\/\/\S+)/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const url = /Gatehouse listening on (http:\/\/\S+)/.exec(out)?.[1];
  assert.ok(url, `no URL printed:\n${out}`);
  assert.match(out, /passthrough\.demo\.localhost/);
  assert.match(out, /stored\.demo\.localhost/);
  assert.match(out, /gw_demo_key_0001/);

  const health = await fetch(`${url}/health`);
  assert.is(health.status, 200);
  assert.equal(await health.json(), { status: "ok" });
  const ready = await fetch(`${url}/health/ready`);
  assert.is(ready.status, 200);

  child.kill("SIGTERM");
  const code = await exited;
  assert.is(code, 0, out);
  assert.match(out, /"event":"gateway_draining"/);
  assert.match(out, /"event":"gateway_stopped"/);
});

test("npm start and npm run worker run one node process: a SIGTERM that comes while the program is busy still ends in its graceful exit", async () => {
  const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
  for (const [script, entry] of [["start", "boot/main.ts"], ["worker", "boot/worker.ts"]] as const) {
    // `exec`: the shell npm runs the script in becomes the program (no shell for a Ctrl-C to kill).
    const [exec, ...argv] = scripts[script]!.split(" ");
    assert.is(exec, "exec", script);
    assert.is(argv.at(-1), entry, script);
    // The script's own launcher, with its entry point swapped for a program that blocks its event
    // loop for 3 s (a worker mid-step on a loaded machine) when the signal arrives.
    const [command, ...options] = argv.slice(0, -1);
    const bin = command === "node" ? process.execPath : join(ROOT, "node_modules/.bin", command!);
    const child = spawn(bin, [...options, "test/support/busy-stop-process.ts"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    // "close": the exit and all of its output.
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
    while (!out.includes("BUSY") && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
    child.kill("SIGTERM");
    const exit = await exited;
    assert.equal(exit, { code: 0, signal: null }, `npm ${script} (${scripts[script]}): ${out}`);
    assert.match(out, /STOPPED/, "its own SIGTERM handler ran");
  }
});

test("Ctrl-C in a terminal (SIGINT to npm start's whole process group): the gateway drains and npm start exits 0, as the README says", async () => {
  const dir = tempDir("ctrl-c");
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server.port = 0;
  raw.storage = { driver: "memory" };
  raw.regulator.simulator.port = 0;
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(raw));
  // A terminal's foreground job: npm, and everything it starts, in one process group of its own.
  const child = spawn("npm", ["start", "--", "--config", configPath], { cwd: ROOT, detached: true, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PORT: "" } });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  const deadline = Date.now() + 30_000;
  while (!/Gatehouse listening on/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  assert.match(out, /Gatehouse listening on/);
  process.kill(-child.pid!, "SIGINT");
  const exit = await exited;
  assert.equal(exit, { code: 0, signal: null }, out);
  assert.match(out, /"event":"gateway_stopped","reason":"SIGINT","drained":true/);
  assert.is(out.match(/"event":"gateway_draining"/g)?.length, 1, "the second SIGINT (npm forwards it) does not start another stop");
});

test("draining: ready turns not_ready, new work gets 503 with Retry-After, in-flight work finishes", async () => {
  const tg = await startTestGateway({ plugins: [...plugins, probePlugin] });
  const log = createLogger({ level: "silent" });
  const server = await serveGateway(tg.gateway, { host: "127.0.0.1", port: 0, graceMs: 5_000, log });
  const inflight = httpCall(server.url, "/probe/slow", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
  while (tg.gateway.runtime.inFlight().total === 0) await new Promise((r) => setTimeout(r, 5));

  const drained = server.drain("test");
  const ready = await tg.call("/health/ready", { host: "localhost" });
  assert.is(ready.status, 503);
  assert.equal((await ready.json()).status, "not_ready");
  const refused = await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } });
  assert.is(refused.status, 503);
  assert.is((await refused.json()).code, "GW_GATEWAY_CAPACITY_EXCEEDED");
  assert.ok(Number(refused.headers.get("retry-after")) >= 1);

  slowGate.releaseAll();
  const res = await inflight;
  assert.is(res.status, 200);
  assert.equal(res.json(), { done: true });
  assert.equal(await drained, { drained: true, remaining: 0 });
});

test("draining: the grace deadline bounds the wait and the stuck request's connection is closed", async () => {
  const tg = await startTestGateway({ plugins: [probePlugin] });
  const server = await serveGateway(tg.gateway, { host: "127.0.0.1", port: 0, graceMs: 200, log: createLogger({ level: "silent" }) });
  const stuck = httpCall(server.url, "/probe/slow", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } }).then(
    (r) => r.status,
    () => "connection closed",
  );
  while (tg.gateway.runtime.inFlight().total === 0) await new Promise((r) => setTimeout(r, 5));
  const started = Date.now();
  const result = await server.drain("test");
  assert.ok(Date.now() - started < 2_000, "drain waited past its deadline");
  assert.equal(result, { drained: false, remaining: 1 });
  assert.is(await stuck, "connection closed");
  slowGate.releaseAll();
});

test.run();
