/**
 * The SQLite file under a gateway process, over real HTTP, when the disk or the file misbehaves:
 * - the disk fills up mid-load (a small tmpfs): writes answer 503 with the route's catalog code,
 *   never 500, reads go on; when space returns the gateway writes again without a restart, and
 *   every write it acknowledged is there;
 * - another process holds the database's write lock past the store deadline: 503, never 500;
 *   reads go on; writes resume when the lock is released;
 * - the file is read-only (the gateway's user may not write it): the gateway serves reads and
 *   answers every write 503; its dependency snapshot shows the store unhealthy.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openConnection } from "../../adapters/document-store/sqlite/connection.ts";
import { CATALOG, type GwCode } from "../../core/errors/catalog.ts";
import { trackChild } from "../support/child-process.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, PASSTHROUGH } from "../support/gateway.ts";
import { startGatewayProcesses, type GatewayProcesses } from "../support/processes.ts";
import { httpCall } from "../support/raw-http.ts";
import { isDiskSkip, mountSmallDisk } from "../support/small-disk.ts";
import { tempDir } from "../support/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
type RawResponse = Awaited<ReturnType<typeof httpCall>>;
const opened: GatewayProcesses[] = [];
test.after(async () => {
  for (const p of opened) await p.stop();
});

function configFile(dir: string, file: string, patch: Record<string, unknown> = {}): string {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.storage = { driver: "sqlite", file };
  raw.regulator.simulator = { enabled: false };
  raw.email = { driver: "folder", dir: join(dir, "mail") };
  raw.limits = { quotas: { management: { limit: 100_000, windowSeconds: 60 } }, admission: { perClient: 100_000, windowSeconds: 1 } };
  Object.assign(raw, patch);
  const path = join(dir, "config.json");
  writeFileSync(path, JSON.stringify(raw));
  return path;
}

const greet = (url: string, name: string): Promise<RawResponse> =>
  httpCall(url, "/hello/greetings", {
    method: "POST",
    host: PASSTHROUGH,
    headers: { "x-api-key": DEMO_KEY, "x-idempotency-key": `disk-${name}-0001`, "content-type": "application/json" },
    body: JSON.stringify({ name, message: "x".repeat(200) }),
  });
const read = (url: string, name: string): Promise<RawResponse> => httpCall(url, `/hello/greetings/${name}`, { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });

/** A 201, or a 503 whose code is the catalog's 503 the route declares; never a 500. */
function assertContract(res: RawResponse, what: string): boolean {
  if (res.status === 201) return true;
  assert.is(res.status, 503, `${what}: ${res.status} ${res.text}`);
  const code = (res.json() as { code: GwCode }).code;
  assert.is(code, "GW_MANAGEMENT_SERVICE_UNAVAILABLE", res.text);
  assert.is(CATALOG[code].status, 503);
  return false;
}

test("the disk fills up mid-load: 503 with the catalog code (never 500), reads go on; space returns: writes again without a restart; every acknowledged write kept", async () => {
  const disk = mountSmallDisk("sqlite-full", 24);
  if (isDiskSkip(disk)) {
    console.log(`SKIPPED disk-full case: ${disk.skip}`);
    return;
  }
  try {
    const dir = tempDir("sqlite-full-cfg");
    const procs = await startGatewayProcesses(configFile(dir, join(disk.dir, "gatehouse.sqlite")), 1);
    opened.push(procs);
    const url = procs.urls[0]!;
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      assert.is((await greet(url, `before${i}`)).status, 201);
      acknowledged.push(`before${i}`);
    }
    disk.fill();
    let refused = 0;
    for (let i = 0; i < 400 && refused < 5; i++) {
      const name = `full${i}`;
      if (assertContract(await greet(url, name), name)) acknowledged.push(name);
      else refused++;
    }
    assert.is(refused, 5, "the full disk refused writes");
    for (const name of acknowledged.slice(0, 5)) assert.is((await read(url, name)).status, 200, "reads go on");

    disk.free();
    let recovered = false;
    const deadline = Date.now() + 60_000; // a circuit opened by the failures lets a probe through after 30 s
    for (let i = 0; !recovered && Date.now() < deadline; i++) {
      const name = `after${i}`;
      recovered = assertContract(await greet(url, name), name);
      if (recovered) acknowledged.push(name);
      else await new Promise((r) => setTimeout(r, 500));
    }
    assert.ok(recovered, "writes resumed once space returned, without a restart");
    for (const name of acknowledged) assert.is((await read(url, name)).status, 200, `${name} was acknowledged and is there`);
  } finally {
    for (const p of opened.splice(0)) await p.stop();
    disk.unmount();
  }
});

test("another process holds the write lock past the store deadline: 503, never 500; reads go on; writes resume after it lets go", async () => {
  const dir = tempDir("sqlite-locked");
  const file = join(dir, "data", "gatehouse.sqlite");
  const procs = await startGatewayProcesses(configFile(dir, file, { dependencies: { storeTimeoutMs: 500 } }), 1);
  opened.push(procs);
  const url = procs.urls[0]!;
  assert.is((await greet(url, "unlocked")).status, 201);
  const holder = openConnection({ file, busyTimeoutMs: 1_000, synchronous: "FULL" });
  holder.begin("IMMEDIATE");
  try {
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => greet(url, `locked${i}`)));
    for (const [i, res] of answers.entries()) assert.is(assertContract(res, `locked${i}`), false, "refused while the lock is held");
    assert.is((await read(url, "unlocked")).status, 200, "reads go on (WAL)");
  } finally {
    holder.rollback();
    holder.close();
  }
  assert.is((await greet(url, "released")).status, 201);
  for (const p of opened.splice(0)) await p.stop();
});

test("a read-only database file: the gateway serves reads, answers every write 503 (never 500), and reports the store unhealthy", async () => {
  // Straight under /tmp: the test runner's own temporary folders are private to this user.
  const dir = mkdtempSync(join("/tmp", "gatehouse-readonly-"));
  process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
  chmodSync(dir, 0o755);
  const data = join(dir, "data");
  mkdirSync(data, { mode: 0o777 });
  chmodSync(data, 0o777);
  const file = join(data, "gatehouse.sqlite");
  const config = configFile(dir, file, { dependencies: { storeTimeoutMs: 1_000, healthRefreshMs: 200 } });
  chmodSync(config, 0o644);
  // As root, permissions do not stop writes: the gateway then runs as an unprivileged user.
  const user = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : null;
  const first = await _gatewayAs(config, user);
  assert.is((await greet(first.url, "kept")).status, 201);
  first.child.kill("SIGTERM");
  await first.exited;
  chmodSync(file, 0o444);
  if (user) for (const name of readdirSync(data)) chownSync(join(data, name), user.uid, user.gid);

  const gw = await _gatewayAs(config, user);
  try {
    assert.is((await read(gw.url, "kept")).status, 200, "reads are served");
    for (let i = 0; i < 3; i++) assert.is(assertContract(await greet(gw.url, `refused${i}`), `refused${i}`), false);
    let status = "";
    for (let i = 0; i < 50 && status !== "unhealthy"; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const snap = await httpCall(gw.url, "/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
      status = (snap.json() as { stores: { documentStore: { status: string } } }).stores.documentStore.status;
    }
    assert.is(status, "unhealthy", "the snapshot shows the store cannot be written");
  } finally {
    gw.child.kill("SIGTERM");
    await gw.exited;
  }
});

test.run();

// --- Internal helpers ---

/** test/support/gateway-process.ts as `user` (null: as this process's user); resolves once it listens. */
async function _gatewayAs(config: string, user: { uid: number; gid: number } | null): Promise<{ child: ChildProcess; url: string; exited: Promise<void> }> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/support/gateway-process.ts", config], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, HOME: "/tmp", TMPDIR: "/tmp" },
    ...(user ?? {}),
  });
  trackChild(child);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let out = "";
  child.stderr!.on("data", (d) => (out += d));
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /LISTENING (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    void exited.then(() => reject(new Error(`gateway exited:\n${out}`)));
  });
  return { child, url, exited };
}
