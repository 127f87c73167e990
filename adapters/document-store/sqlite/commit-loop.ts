/**
 * The writer's loop: batches arrive (one per turn of the main thread's event loop), wait in a queue
 * while a transaction commits, and everything queued then goes into the next transaction (up to
 * MAX_OPERATIONS), answered together after its COMMIT. While one commit's fsync runs, the next
 * batches gather: the busier the writer, the more operations share one fsync. The same loop runs
 * in the writer thread and, for an in-memory store, inline on the calling thread.
 */
import { runBatch } from "./batch.ts";
import { openConnection, type SqliteConnection } from "./connection.ts";
import { decodeBatch, type BatchMessage, type BatchReply, type WriteOp } from "./protocol.ts";
import { META_TABLE_SQL } from "./schema.ts";
import { upgradeKeyColumns, upgradeSparseIndexes } from "./upgrade.ts";
import { createWriterState, type WriterState } from "./writes.ts";

/** At most this many operations in one transaction (bounds how long the write lock is held). */
const MAX_OPERATIONS = 4096;

export interface CommitLoop {
  enqueue(message: BatchMessage): void;
}

export function createCommitLoop(state: WriterState, reply: (r: BatchReply) => void): CommitLoop {
  const queue: Array<{ seq: number; ops: WriteOp[] }> = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const taken: typeof queue = [];
    let n = 0;
    while (queue.length > 0 && (taken.length === 0 || n + queue[0]!.ops.length <= MAX_OPERATIONS)) {
      const m = queue.shift()!;
      taken.push(m);
      n += m.ops.length;
    }
    const { results, commit } = runBatch(state, taken.flatMap((m) => m.ops));
    let at = 0;
    const batches = taken.map((m) => {
      const slice = results.slice(at, at + m.ops.length);
      at += m.ops.length;
      return { seq: m.seq, results: slice };
    });
    if (queue.length > 0) schedule();
    reply({ batches, commit });
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  return {
    enqueue(message) {
      queue.push({ seq: message.seq, ops: decodeBatch(message.ops) });
      schedule();
    },
  };
}

/**
 * Opens the writer's connection (WAL, synchronous as asked), creates the collections table and
 * upgrades the tables of a file an earlier release wrote (./upgrade.ts: key columns, then sparse
 * indexes).
 */
export function openWriterConnection(file: string, busyTimeoutMs: number, synchronous: "FULL" | "OFF"): SqliteConnection {
  const conn = openConnection({ file, busyTimeoutMs, synchronous });
  try {
    conn.exec(META_TABLE_SQL);
    upgradeKeyColumns(conn);
    upgradeSparseIndexes(conn);
  } catch (e) {
    conn.close();
    throw e;
  }
  return conn;
}

export { createWriterState };
