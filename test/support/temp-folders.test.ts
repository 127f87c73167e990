/**
 * Issue 18 item 8: tests and benches leave no `gatehouse-*` folders in the temporary directory. A
 * child process with its own TMPDIR does what test files do (test gateways, the collections
 * harness, tempDir) and ends normally, by a thrown error, or by process.exit(1); afterwards its
 * TMPDIR holds nothing of ours.
 */
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tempDir } from "./temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

for (const ending of ["normally", "throw", "exit1"]) {
  test(`a process that makes test gateways and temp folders and ends ${ending === "normally" ? "normally" : `with ${ending}`} leaves no gatehouse-* folder`, () => {
    const tmp = tempDir("tmp-check");
    const child = spawnSync(join(ROOT, "node_modules/.bin/tsx"), ["test/fixtures/temp-folder-user.ts", ending], {
      cwd: ROOT,
      env: { ...process.env, TMPDIR: tmp },
      encoding: "utf8",
      timeout: 60_000,
    });
    assert.is(child.status, ending === "normally" ? 0 : 1, child.stderr);
    assert.equal(readdirSync(tmp).filter((f) => f.startsWith("gatehouse-")), []);
  });
}

test.run();
