/**
 * Processes sharing the SQLite file, as `npm start` and `npm run worker` run (boot/main.ts,
 * boot/worker.ts): with in-process coordination the first gateway is the file's only user — a
 * second gateway, or a worker, refuses to start with a message naming the file and the way out
 * (Redis coordination), exit 1, the first one unharmed; with Redis coordination gateways share it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ChildProcess } from "node:child_process";
import { spawnTs, trackChild } from "../support/child-process.ts";
import { DEMO_RAW } from "../support/gateway.ts";
import { httpCall } from "../support/raw-http.ts";
import { isRedisSkip, startRedisServer } from "../support/redis-server.ts";
import { tempDir } from "../support/temp.ts";

const dir = tempDir("sqlite-procs");
const file = join(dir, "data", "gatehouse.sqlite");

function configFile(name: string, coordination: Record<string, unknown>): string {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server = { ...raw.server, port: 0 };
  raw.storage = { driver: "sqlite", file };
  raw.coordination = coordination;
  raw.regulator.simulator = { enabled: false };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(raw));
  return path;
}

interface Started {
  child: ChildProcess;
  url: string;
  exit: Promise<number | null>;
}

function start(entry: string, config: string): { child: ChildProcess; output: () => string; exit: Promise<number | null>; listening: Promise<string> } {
  const child = spawnTs(entry, ["--config", config]);
  trackChild(child);
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (out += d));
  const exit = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exit.then(() => reject(new Error(`exited before listening:\n${out}`)));
  });
  listening.catch(() => undefined);
  return { child, output: () => out, exit, listening };
}

async function started(entry: string, config: string): Promise<Started> {
  const s = start(entry, config);
  return { child: s.child, url: await s.listening, exit: s.exit };
}

async function stop(s: Started): Promise<void> {
  s.child.kill("SIGTERM");
  assert.is(await s.exit, 0);
}

test("in-process coordination: a second gateway and a worker on the same file refuse to start (exit 1, the file and the way out named); the first serves on", async () => {
  const memory = configFile("memory", { driver: "memory" });
  const first = await started("boot/main.ts", memory);
  try {
    const second = start("boot/main.ts", memory);
    assert.is(await second.exit, 1, second.output());
    assert.ok(second.output().includes(file), second.output());
    assert.match(second.output(), /in use by another process.*coordination \{ "driver": "redis" \}/s);
    assert.not.match(second.output(), /\n\s+at /, "no stack trace");

    const worker = start("boot/worker.ts", memory);
    assert.is(await worker.exit, 1, worker.output());
    assert.match(worker.output(), /SQLite file shared with coordination \{ "driver": "redis" \}/);

    const health = await httpCall(first.url, "/health/ready", { host: "localhost" });
    assert.is(health.status, 200, health.text);
  } finally {
    await stop(first);
  }
});

test("Redis coordination: two gateways share the file; a gateway with in-process coordination is then refused", async () => {
  const redis = await startRedisServer();
  if (isRedisSkip(redis)) {
    console.log(`SKIPPED shared SQLite gateways: ${redis.skip}`);
    return;
  }
  const shared = configFile("redis", { driver: "redis", url: redis.url, keyPrefix: `sqlprocs${process.pid}:` });
  const a = await started("boot/main.ts", shared);
  const b = await started("boot/main.ts", shared);
  try {
    for (const url of [a.url, b.url]) assert.is((await httpCall(url, "/health/ready", { host: "localhost" })).status, 200);
    const alone = start("boot/main.ts", configFile("memory-2", { driver: "memory" }));
    assert.is(await alone.exit, 1, alone.output());
    assert.match(alone.output(), /in use by another process/);
  } finally {
    await stop(a);
    await stop(b);
    await redis.stop();
  }
});

test.run();
