/**
 * The main thread's side of the writer: the writes asked for in one turn of the event loop go out
 * together at its end (one postMessage of one string, ./protocol.ts), while fewer than
 * MAX_IN_FLIGHT batches are unanswered; the writer puts every batch that arrived during a commit
 * into its next transaction, so it starts that transaction without waiting for this thread to
 * handle the last answer. Each operation's promise settles when the transaction that held it has
 * committed (./commit-loop.ts). Two transports:
 * - "thread": a worker thread owning the writer's connection (files: the fsync stays off the
 *   thread that serves HTTP). It is ref'd only while operations are outstanding, so an idle store
 *   does not keep the process alive. If it dies, outstanding operations fail with
 *   DependencyUnavailableError and the next write starts a new one.
 * - "inline": the commit loop on this thread (the in-memory store: one connection for everything).
 */
import { Worker } from "node:worker_threads";
import { DependencyUnavailableError } from "../../ports.ts";
import { createCommitLoop, createWriterState } from "./commit-loop.ts";
import type { SqliteConnection } from "./connection.ts";
import { encodeBatch, encodeOp, failureError, type BatchMessage, type BatchReply, type CommitInfo, type WriteOp, type WriteValue } from "./protocol.ts";
import type { WriterThreadData } from "./writer-thread.ts";

export interface Writer {
  write(op: WriteOp): Promise<WriteValue>;
  stats(): WriterStats;
  /** Settles once no operation is outstanding. */
  drained(): Promise<void>;
  /** Waits for outstanding operations, then stops the writer (the thread closes its connection). */
  close(): Promise<void>;
}

export interface WriterStats {
  transport: "thread" | "inline";
  /** Transactions committed, and the operations they held. */
  commits: number;
  operations: number;
  /** Batches sent to the writer (a transaction holds every batch that waited for it). */
  batches: number;
  /** Milliseconds of the last commit (BEGIN..COMMIT, fsync included). */
  lastCommitMs: number;
  /** Median and 99th percentile of the last RECENT_COMMITS commits' milliseconds (0 before any). */
  commitMsP50: number;
  commitMsP99: number;
}

/** Most operations in one message to the writer (its transactions hold at most 4 096). */
const MAX_BATCH = 4096;

/**
 * Most batches sent and not yet answered. Beyond it, new writes wait on this thread and go out
 * together when an answer comes (docs/bench.md "Round 7": one batch at a time left the writer idle
 * ~60 % of a billed-sign load, waiting for this thread to handle each answer).
 */
const MAX_IN_FLIGHT = 8;

/** How many of the latest commits the latency percentiles cover. */
const RECENT_COMMITS = 256;

export interface WriterOptions {
  /** Store kind, for errors. */
  kind: string;
  /** Told after each commit, before its operations' promises settle. */
  onCommit?: (commit: CommitInfo) => void;
  /**
   * Told of the collection of every operation that settles (committed, failed, or lost with the
   * thread), for all of a reply's operations before the first of them settles.
   */
  onWritten?: (collection: string) => void;
}

/** A writer on a worker thread owning the file's writer connection; resolves once the file is open. */
export async function createThreadWriter(data: WriterThreadData, options: WriterOptions & { entry?: URL }): Promise<Writer> {
  let worker: Worker | null = null;
  const core = _createCore("thread", options, (message) => {
    worker ??= start();
    worker.postMessage(message);
  });
  const start = (): Worker => {
    const w = _spawn(data, options.entry);
    w.on("message", (m: BatchReply | { ready?: true; failed?: string }) => {
      if ("batches" in m) core.onReply(m);
      else if (m.failed && worker === w) {
        // A thread started again after one died could not open the file: its writes fail now
        // (under tsx's loader a failed thread would otherwise stay alive and they would wait
        // forever), and the next write starts another.
        worker = null;
        core.failAll(`the writer thread could not open the database: ${m.failed}`);
        void w.terminate();
      }
    });
    // Only the current thread's end fails what is outstanding: a thread already replaced (failed
    // to open, or closed) must not fail its successor's writes.
    w.on("error", (e) => worker === w && core.failAll(`the writer thread failed: ${e.message}`));
    w.on("exit", (code) => {
      if (worker !== w) return;
      worker = null;
      core.failAll(`the writer thread exited (code ${code})`);
    });
    core.onIdle = (idle) => (idle ? w.unref() : w.ref());
    return w;
  };
  // Held apart from `worker`: a thread that fails to open the file may exit (and clear `worker`) before
  // the catch below runs.
  const first = start();
  worker = first;
  try {
    await _ready(first);
  } catch (e) {
    await first.terminate(); // tsx's loader channel would keep a failed thread alive
    throw e;
  }
  first.unref(); // ref'd again while operations are outstanding
  return {
    write: core.write,
    stats: core.stats,
    drained: core.drained,
    async close() {
      await core.drained();
      const w = worker;
      worker = null;
      if (!w) return;
      w.ref();
      const closed = new Promise<void>((resolve) => {
        w.on("message", (m: { closed?: true }) => m.closed && resolve());
        w.once("exit", () => resolve());
      });
      w.postMessage({ close: true });
      await closed;
      await w.terminate();
    },
  };
}

/** A writer running the commit loop on this thread over `conn` (the in-memory store). */
export function createInlineWriter(conn: SqliteConnection, options: WriterOptions): Writer {
  let core: _Core;
  const loop = createCommitLoop(createWriterState(conn), (reply) => core.onReply(reply));
  core = _createCore("inline", options, (message) => loop.enqueue(message));
  return { write: core.write, stats: core.stats, drained: core.drained, close: () => core.drained() };
}

// --- Internal helpers ---

interface _Pending {
  resolve(v: WriteValue): void;
  reject(e: Error): void;
  /** The operation's collection ("" for a ping). */
  collection: string;
}

/** Batching and bookkeeping shared by both transports. */
interface _Core {
  /** Told when the writer has nothing outstanding (true) or has again (false): the thread's ref. */
  onIdle: ((idle: boolean) => void) | undefined;
  write(op: WriteOp): Promise<WriteValue>;
  onReply(reply: BatchReply): void;
  /** Fails every outstanding operation (the thread died). */
  failAll(message: string): void;
  stats(): WriterStats;
  drained(): Promise<void>;
}

function _createCore(transport: WriterStats["transport"], options: WriterOptions, send: (message: BatchMessage) => void): _Core {
  const outstanding = new Map<number, _Pending[]>();
  let queued: string[] = [];
  let waiters: _Pending[] = [];
  let seq = 0;
  let scheduled = false;
  let drainWaiters: Array<() => void> = [];
  const stats: WriterStats = { transport, commits: 0, operations: 0, batches: 0, lastCommitMs: 0, commitMsP50: 0, commitMsP99: 0 };
  const recent = new Float64Array(RECENT_COMMITS);

  const idleCheck = (): void => {
    if (outstanding.size > 0 || queued.length > 0) return;
    core.onIdle?.(true);
    const ws = drainWaiters;
    drainWaiters = [];
    for (const w of ws) w();
  };
  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  // A turn's writes go out at its end, so the writer finds them queued when its commit ends. Past
  // MAX_IN_FLIGHT unanswered batches they wait here for an answer (onReply schedules them).
  const flush = (): void => {
    scheduled = false;
    if (queued.length === 0 || outstanding.size >= MAX_IN_FLIGHT) return;
    core.onIdle?.(false);
    while (queued.length > 0 && outstanding.size < MAX_IN_FLIGHT) {
      const message: BatchMessage = { seq: ++seq, ops: encodeBatch(queued.slice(0, MAX_BATCH)) };
      outstanding.set(message.seq, waiters.slice(0, MAX_BATCH));
      stats.batches++;
      queued = queued.slice(MAX_BATCH);
      waiters = waiters.slice(MAX_BATCH);
      try {
        send(message);
      } catch (e) {
        core.failAll(`the writer could not take the batch: ${(e as Error).message}`);
      }
    }
  };
  const core: _Core = {
    onIdle: undefined,
    write(op: WriteOp): Promise<WriteValue> {
      return new Promise<WriteValue>((resolve, reject) => {
        queued.push(encodeOp(op)); // a throw (a cycle, a BigInt) rejects this write alone
        waiters.push({ resolve, reject, collection: op.kind === "ping" ? "" : op.collection });
        schedule();
      });
    },
    onReply(reply: BatchReply): void {
      if (reply.commit.operations > 0) recent[stats.commits++ % RECENT_COMMITS] = reply.commit.ms;
      stats.operations += reply.commit.operations;
      stats.lastCommitMs = reply.commit.ms;
      _settle(reply, outstanding, options);
      if (queued.length > 0) schedule(); // after this turn, with what the settled writes' callers add
      idleCheck();
    },
    failAll(message: string): void {
      const error = new DependencyUnavailableError(options.kind, message, "server_error");
      if (options.onWritten) for (const ws of outstanding.values()) _written(ws, options.onWritten);
      for (const ws of outstanding.values()) for (const w of ws) w.reject(error);
      outstanding.clear();
      if (queued.length > 0) schedule(); // they go to the next writer (a thread is started again)
      idleCheck();
    },
    stats: (): WriterStats => ({ ...stats, ..._percentiles(recent.subarray(0, Math.min(stats.commits, RECENT_COMMITS))) }),
    drained(): Promise<void> {
      if (outstanding.size === 0 && queued.length === 0) return Promise.resolve();
      return new Promise<void>((resolve) => drainWaiters.push(resolve));
    },
  };
  return core;
}

/** Settles the operations of a reply's batches, once `onWritten` was told of every one of them, then `onCommit`. */
function _settle(reply: BatchReply, outstanding: Map<number, _Pending[]>, options: WriterOptions): void {
  const answered: Array<{ results: BatchReply["batches"][number]["results"]; ws: _Pending[] }> = [];
  for (const b of reply.batches) {
    const ws = outstanding.get(b.seq);
    outstanding.delete(b.seq);
    if (ws) answered.push({ results: b.results, ws });
  }
  if (options.onWritten) for (const { ws } of answered) _written(ws, options.onWritten);
  options.onCommit?.(reply.commit);
  for (const { results, ws } of answered) results.forEach((r, i) => (r.ok ? ws[i]!.resolve(r.value) : ws[i]!.reject(failureError(r.error, options.kind))));
}

function _written(ws: _Pending[], onWritten: (collection: string) => void): void {
  for (const w of ws) if (w.collection !== "") onWritten(w.collection);
}

function _percentiles(ms: Float64Array): { commitMsP50: number; commitMsP99: number } {
  if (ms.length === 0) return { commitMsP50: 0, commitMsP99: 0 };
  const sorted = Float64Array.from(ms).sort();
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { commitMsP50: at(0.5), commitMsP99: at(0.99) };
}

/**
 * The writer thread. From the TypeScript sources (tsx), a worker does not inherit tsx's loader: it
 * is started from a one-line bootstrap that registers tsx, then imports ./writer-thread.ts. From a
 * bundle (this module compiled to .mjs), the entry is `sqlite-writer.mjs` beside it: the build
 * compiles ./writer-thread.ts under that name.
 */
function _spawn(data: WriterThreadData, entry?: URL): Worker {
  const here = import.meta.url;
  const source = entry ?? new URL(here.endsWith(".ts") ? "./writer-thread.ts" : "./sqlite-writer.mjs", here);
  if (!source.pathname.endsWith(".ts")) return new Worker(source, { workerData: data });
  const tsx = import.meta.resolve("tsx/esm/api");
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source.href)}); })`;
  return new Worker(boot, { eval: true, workerData: data });
}

function _ready(worker: Worker): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onMessage = (m: { ready?: true; failed?: string; code?: string }): void => {
      if (m.ready) done();
      else if (m.failed) done(Object.assign(new Error(m.failed), { code: m.code }));
    };
    const onExit = (code: number): void => done(new Error(`the writer thread exited (code ${code}) before opening the database`));
    const done = (e?: Error): void => {
      worker.off("message", onMessage);
      worker.off("exit", onExit);
      if (e) reject(e);
      else resolve();
    };
    worker.on("message", onMessage);
    worker.on("exit", onExit);
  });
}
