/**
 * The CLI's commands on the embedded database (cli/storage.ts, boot/storage-commands.ts), run as
 * processes against a gateway process on an SQLite file: `backup` while the gateway serves writes
 * (a consistent, checked copy; never over an existing file), `restore` refused while the gateway
 * has the file open and then done with the database it replaced kept aside, the gateway restarting
 * on the restored data; `import` of an older release's folder once, with its counts.
 */
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { summarizeDatabase } from "../../adapters/document-store/sqlite/backup.ts";
import { DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { writeLegacyFiles } from "../support/legacy-store.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { httpCall } from "../support/raw-http.ts";
import { tempDir } from "../support/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const dir = tempDir("cli-storage");
const file = join(dir, "data", "gatehouse.sqlite");
const configPath = join(dir, "config.json");
const raw = structuredClone(DEMO_RAW) as Record<string, any>;
raw.storage = { driver: "sqlite", file };
raw.regulator.simulator = { enabled: false };
raw.limits = { quotas: { management: { limit: 100_000, windowSeconds: 60 } }, admission: { perClient: 100_000, windowSeconds: 1 } };
writeFileSync(configPath, JSON.stringify(raw));

let gateway: GatewayProcesses | null = null;
test.after(async () => {
  await gateway?.stop();
});

interface Run {
  code: number;
  out: string;
  json(): any;
}

function cli(args: string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/gatehouse.js"), ...args, "--config", configPath], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, out: stdout + stderr, json: () => JSON.parse(stdout) }));
  });
}

let written = 0;
const greet = async (url: string, i: number) => {
  const res = await httpCall(url, "/hello/greetings", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": `cli-storage-${String(i).padStart(5, "0")}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `g${i}` }),
  });
  assert.is(res.status, 201, res.text);
};

test("backup while the gateway serves writes: a checked copy holding every write acknowledged before it; never over an existing file", async () => {
  gateway = await startGatewayProcesses(configPath, 1);
  const url = gateway.urls[0]!;
  for (; written < 40; written++) await greet(url, written);
  const acknowledged = written;
  // Writes keep going while the backup runs.
  let stop = false;
  const load = (async () => {
    while (!stop) await greet(url, written++);
  })();
  const backup = join(dir, "backup-1.sqlite");
  const r = await cli(["backup", backup, "--json"]);
  stop = true;
  await load;
  assert.is(r.code, 0, r.out);
  const report = r.json();
  assert.is(report.integrity, "ok");
  assert.ok(report.collections.hello_greetings >= acknowledged, JSON.stringify(report.collections));
  assert.ok(report.collections.hello_greetings <= written);
  assert.equal(summarizeDatabase(backup).collections.hello_greetings, report.collections.hello_greetings);
  assert.not.ok(existsSync(`${backup}.partial`));

  const again = await cli(["backup", backup]);
  assert.is(again.code, 1);
  assert.match(again.out, /exists: a backup never overwrites a file/);
});

test("restore is refused while a gateway has the file open (nothing changed); stopped, it restores and keeps the replaced database aside", async () => {
  const backup = join(dir, "backup-1.sqlite");
  const inBackup = summarizeDatabase(backup).collections.hello_greetings!;
  const refused = await cli(["restore", backup]);
  assert.is(refused.code, 1);
  assert.match(refused.out, /open in a running gateway or worker: stop every process that opens it, then restore \(nothing was changed\)/);
  assert.is(summarizeDatabase(file).collections.hello_greetings, written, "the live database is as it was");

  await gateway!.stop();
  gateway = null;
  const r = await cli(["restore", backup, "--json"]);
  assert.is(r.code, 0, r.out);
  const report = r.json();
  assert.is(report.collections.hello_greetings, inBackup);
  assert.match(report.previous, /gatehouse\.sqlite\.before-restore-/);
  assert.is(summarizeDatabase(report.previous).collections.hello_greetings, written, "the replaced database, whole, aside");

  gateway = await startGatewayProcesses(configPath, 1);
  const url = gateway.urls[0]!;
  const res = await httpCall(url, `/hello/greetings/g${inBackup - 1}`, { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
  assert.is(res.status, 200, res.text);
  const gone = await httpCall(url, `/hello/greetings/g${written - 1}`, { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
  assert.is(gone.status, 404, "a write after the backup is not in the restored database");
  await gateway.stop();
  gateway = null;
});

test("import: an older release's folder, once, with counts per collection; refused while a gateway has the file open", async () => {
  const old = tempDir("cli-import");
  writeLegacyFiles(old, { keys_old: [{ _id: "k1" }, { _id: "k2" }], ledger_old: [{ _id: "e1" }] });
  gateway = await startGatewayProcesses(configPath, 1);
  const busy = await cli(["import", old]);
  assert.is(busy.code, 1);
  assert.match(busy.out, /stop every process that opens it, then import/);
  await gateway.stop();
  gateway = null;

  const r = await cli(["import", old]);
  assert.is(r.code, 0, r.out);
  assert.match(r.out, /imported from .*: 3 documents/);
  assert.match(r.out, /keys_old\s+2/);
  assert.match(r.out, /ledger_old\s+1/);
  const again = await cli(["import", old, "--json"]);
  assert.is(again.code, 0);
  assert.is(again.json().alreadyImported, true);
  assert.equal(again.json().collections, { keys_old: 2, ledger_old: 1 });
  assert.is(summarizeDatabase(file).collections.keys_old, 2);

  const empty = await cli(["import", tempDir("cli-import-empty")]);
  assert.is(empty.code, 1);
  assert.match(empty.out, /holds no store of an older release/);
});

test("usage: backup needs a file; a memory store has nothing to back up", async () => {
  const r = await cli(["backup"]);
  assert.is(r.code, 2);
  const memory = join(dir, "memory.json");
  writeFileSync(memory, JSON.stringify({ ...raw, storage: { driver: "memory" } }));
  const child = spawn(process.execPath, [join(ROOT, "bin/gatehouse.js"), "backup", join(dir, "x.sqlite"), "--config", memory], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
  assert.is(code, 1);
  assert.match(out, /"memory" keeps nothing on disk/);
  assert.not.ok(readdirSync(dir).includes("x.sqlite"));
});

test.run();
