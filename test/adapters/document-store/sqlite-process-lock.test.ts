/**
 * Who may share a database file (adapters/document-store/sqlite/process-lock.ts): an exclusive
 * holder (in-process coordination) excludes every other; shared holders (Redis coordination)
 * coexist; across processes as within one; a SIGKILLed holder's lock goes with it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { acquireProcessLock, isProcessLockError, type ProcessLockMode } from "../../../adapters/document-store/sqlite/process-lock.ts";
import { killAndWait, trackChild } from "../../support/child-process.ts";
import { tempDir } from "../../support/temp.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;
const LOCK = new URL("../../../adapters/document-store/sqlite/process-lock.ts", import.meta.url).href;

function refused(file: string, mode: ProcessLockMode): boolean {
  try {
    acquireProcessLock(file, mode).release();
    return false;
  } catch (e) {
    if (isProcessLockError(e)) return true;
    throw e;
  }
}

/** A process holding the lock of `file` in `mode` until killed. */
async function holder(file: string, mode: ProcessLockMode): Promise<ChildProcess> {
  const code = `import(${JSON.stringify(LOCK)}).then((m) => { m.acquireProcessLock(${JSON.stringify(file)}, ${JSON.stringify(mode)}); process.stdout.write("HELD\\n"); setInterval(() => {}, 1000); })`;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
  trackChild(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on("data", (d: Buffer) => d.toString().includes("HELD") && resolve());
    child.once("exit", (c) => reject(new Error(`holder exited ${c}`)));
  });
  return child;
}

test("in one process: exclusive excludes everything; shared holders coexist; a release frees the file", () => {
  const file = join(tempDir("lock"), "db.sqlite");
  const a = acquireProcessLock(file, "shared");
  const b = acquireProcessLock(file, "shared");
  assert.ok(refused(file, "exclusive"), "shared holders exclude an exclusive one");
  a.release();
  b.release();
  b.release(); // idempotent
  const x = acquireProcessLock(file, "exclusive");
  assert.ok(refused(file, "shared"));
  assert.ok(refused(file, "exclusive"));
  x.release();
  acquireProcessLock(file, "exclusive").release();
});

test("across processes: a shared holder admits shared and refuses exclusive; an exclusive one refuses both; SIGKILL frees the file", async () => {
  const file = join(tempDir("lock-x"), "db.sqlite");
  const shared = await holder(file, "shared");
  const mine = acquireProcessLock(file, "shared");
  assert.ok(refused(file, "exclusive"));
  mine.release();
  await killAndWait(shared);
  const exclusive = await holder(file, "exclusive");
  assert.ok(refused(file, "shared"));
  assert.ok(refused(file, "exclusive"));
  await killAndWait(exclusive);
  acquireProcessLock(file, "exclusive").release();
});

test("one lock per database however it is named: through a symbolic link to its folder, or to the file", () => {
  const dir = tempDir("lock");
  const file = join(dir, "db.sqlite");
  const linkedDir = join(tempDir("lock-link"), "data");
  symlinkSync(dir, linkedDir);
  const x = acquireProcessLock(file, "exclusive");
  assert.ok(refused(join(linkedDir, "db.sqlite"), "exclusive"), "the folder's link names the same database");
  assert.ok(refused(join(linkedDir, "db.sqlite"), "shared"));
  x.release();
  writeFileSync(file, "");
  const linkedFile = join(linkedDir, "other-name.sqlite");
  symlinkSync(file, linkedFile);
  const y = acquireProcessLock(linkedFile, "exclusive");
  assert.ok(refused(file, "exclusive"), "the file's link names the same database");
  y.release();
});

test("the refusal says what to do", () => {
  const file = join(tempDir("lock-msg"), "db.sqlite");
  const held = acquireProcessLock(file, "exclusive");
  try {
    acquireProcessLock(file, "exclusive");
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /is in use by another process.*coordination.*"redis"/s);
    assert.ok((e as Error).message.includes(file));
  }
  try {
    acquireProcessLock(file, "shared");
    assert.unreachable();
  } catch (e) {
    assert.match((e as Error).message, /in use by a process with in-process coordination/);
  }
  held.release();
});

test.run();
