/**
 * A child process for the SQLite engine tests (test/adapters/document-store/sqlite-engine.test.ts):
 * opens the store on the file given, then runs one scenario and prints its result as one JSON line.
 *
 *   node --import tsx sqlite-child.ts <file> fsync              one acknowledged insert between two markers on stdout
 *   node --import tsx sqlite-child.ts <file> race <name>        waits for "go" on stdin, then races (see _race)
 *   node --import tsx sqlite-child.ts <file> stream             inserts until killed, printing each acknowledged _id
 */
import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import type { Doc } from "../../../adapters/ports.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { isDuplicateKeyError } from "../../../adapters/ports.ts";

const [file, scenario, name = "child"] = process.argv.slice(2);
const _pause = new Int32Array(new SharedArrayBuffer(4));
const store = await createSqliteDocumentStore({ file: file!, busyTimeoutMs: 20_000 });

if (scenario === "fsync") {
  const c = store.collection<Doc>("acks");
  await c.insert({ _id: "warm-up" }); // the table exists: the traced insert changes one row only
  writeSync(1, "BEFORE-INSERT\n");
  await c.insert({ _id: "traced", at: Date.now() });
  writeSync(1, "ACKNOWLEDGED\n");
} else if (scenario === "stream") {
  const c = store.collection<Doc>("stream", { indexes: [{ fields: ["n"], unique: true }] });
  let n = 0;
  const loop = async (): Promise<never> => {
    for (;;) {
      const id = `s${n++}`;
      await c.insert({ _id: id, n, pad: "x".repeat(300) });
      _print(`${id}\n`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, loop));
} else if (scenario === "race") {
  writeSync(1, "READY\n");
  await new Promise<void>((resolve) => {
    const lines = createInterface({ input: process.stdin });
    lines.once("line", () => {
      lines.close();
      resolve();
    });
  });
  writeSync(1, JSON.stringify(await _race(name)) + "\n");
}
await store.close();

/** Compare-and-set increments, unique inserts, upserts and lease claims, all at once. */
async function _race(who: string): Promise<Record<string, unknown>> {
  const counters = store.collection<Doc & { n: number }>("counters");
  const keys = store.collection<Doc>("keys", { indexes: [{ fields: ["key"], unique: true }] });
  const hits = store.collection<Doc>("hits", { indexes: [{ fields: ["day", "route"], unique: true }] });
  const jobs = store.collection<Doc>("jobs", { indexes: [{ fields: ["status"] }] });
  const cas = async (): Promise<number> => {
    let retries = 0;
    for (let done = 0; done < 100; ) {
      const cur = (await counters.get("c"))!;
      if (await counters.updateOne({ _id: "c", n: cur.n }, { $inc: { n: 1 } })) done++;
      else retries++;
    }
    return retries;
  };
  const inserts = Promise.allSettled(Array.from({ length: 100 }, (_, i) => keys.insert({ _id: `${who}-${i}`, key: `k${i}` })));
  const upserts = Promise.all(Array.from({ length: 50 }, () => hits.findOneAndUpdate({ day: "d1", route: "/x" }, { $inc: { n: 1 } }, { upsert: true })));
  const claims = (async () => {
    const claimed: string[] = [];
    for (let job = await jobs.claim({ status: "pending" }, who, 60_000); job; job = await jobs.claim({ status: "pending" }, who, 60_000)) claimed.push(job._id);
    return claimed;
  })();
  const [casRetries, inserted, , claimed] = await Promise.all([cas(), inserts, upserts, claims]);
  const won = inserted.filter((r) => r.status === "fulfilled").length;
  const duplicates = inserted.filter((r) => r.status === "rejected" && isDuplicateKeyError(r.reason)).length;
  return { who, casRetries, won, duplicates, claimed, commits: store.writerStats().commits };
}

/**
 * Writes a line to stdout, waiting while the pipe is full: the parent reads the stream's lines as
 * they come, and a child that inserts faster than it reads would otherwise get EAGAIN (stdout is a
 * non-blocking pipe here) and die before it is killed on purpose.
 */
function _print(line: string): void {
  for (;;) {
    try {
      writeSync(1, line);
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
      Atomics.wait(_pause, 0, 0, 1);
    }
  }
}
