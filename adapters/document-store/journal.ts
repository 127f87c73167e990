/**
 * The embedded store's durability on disk (the `fs` driver): a write-ahead journal with group
 * commit, checkpointed into one JSON file per document (the layout unstorage's fs driver uses,
 * `base/<collection>/<id>`, which the store loads at start-up).
 *
 * - `persist(change)` queues a document's new state (null = deleted). Every change queued in the
 *   same turn of the event loop goes into ONE append to the current journal file
 *   (`base/@journal-<n>`, one JSON line `[collection, id, document | null]` per change, the latest
 *   state of a document only); each waiter resolves once that append is written. One write call
 *   per batch instead of one file write per change: measured on this machine, ~1.5 µs of CPU per
 *   change instead of 26–30 µs. Each line is encoded into one reused buffer as it is made, so no
 *   batch-sized string is built (V8 would keep it for a full collection). The write is synchronous
 *   (into the page cache, no fsync, like the checkpoint's file writes): through the thread pool, its
 *   hand-over, the wake-ups and its contention with the checkpoint's writes cost the gateway more
 *   CPU than the write itself (docs/bench.md, "Cutting CPU per sign (second round)").
 * - A checkpoint (every `checkpointMs`, and at `close()`) switches appends to a new journal file,
 *   then writes the latest state of every document changed since the previous checkpoint to its own
 *   file (or deletes the file), then deletes the older journal files. A document changed several
 *   times between checkpoints (a sign record: claimed, dispatching, done) is written once. Its text
 *   is serialised at the checkpoint, in chunks of at most CHECKPOINT_MESSAGE documents (and about
 *   CHECKPOINT_MESSAGE_CHARS of text), each handed over at once: keeping each journal line's text
 *   until the checkpoint kept every change of the last second or two alive long enough for V8 to
 *   promote it, and the main thread's heap grew with it (docs/bench.md, "Third round: the fs
 *   store's memory"). The files are written by a worker thread (one message per chunk: the paths
 *   and their texts; the reply lists the ones that failed), so the kernel's file creation — the
 *   largest single item of the gateway's fs profile when it ran on the main thread — no longer takes
 *   the event loop's time (docs/bench.md, "Cutting CPU per sign (second round)"). Inside the worker the writes are synchronous, one after
 *   the other. If the worker cannot start or dies, the checkpoint (and every later one) is written
 *   on the main thread instead, synchronously, CHECKPOINT_CHUNK files at a time with a turn of the
 *   event loop in between (the thread-pool round trips of asynchronous writes, open, write, close
 *   per file, cost the event loop more than the writes themselves).
 * - Start-up (`replay`): after the per-document files are loaded, the journal files are replayed in
 *   order, so a crash anywhere (mid-append, mid-checkpoint) loses nothing that was acknowledged. A
 *   torn last line (a crash mid-append) is skipped and counted; appends after a failed write go to
 *   a new journal file, so a torn line is always the last of its file.
 * - A failed append rejects its waiters with DependencyUnavailableError; the in-memory state keeps
 *   the change (as before) and the next checkpoint writes it to its file. A failed file write of a
 *   checkpoint keeps the journals and is retried by the next checkpoint; `onCheckpointFailed` is
 *   told (at the first failure of a run, then at most once a minute) and `onCheckpointRecovered`
 *   once one writes everything again. A checkpoint switches to a new journal file only when the
 *   current one was appended to, so failures while nothing is written add no files.
 * - No fsync, as before: an acknowledged change survives a process crash, not necessarily a power cut.
 */
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, unlinkSync, writeSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Worker } from "node:worker_threads";
import { DependencyUnavailableError, type Doc } from "../ports.ts";

export interface JournalChange {
  collection: string;
  id: string;
  doc: Doc | null;
}

export interface Journal {
  /** Queues a change; resolves once it is in the journal. */
  persist(change: JournalChange): Promise<void>;
  /**
   * Applies the journal files found at start-up, oldest first (call once, after loading the
   * per-document files). `apply` gets each change; returns the torn or unreadable lines skipped.
   */
  replay(apply: (change: JournalChange) => void): { changes: number; skipped: string[] };
  /** Waits for queued appends, checkpoints everything, deletes the journal files (a clean shutdown). */
  close(): Promise<void>;
  /** Which thread wrote the files of the last checkpoint that had any (null: none yet). */
  checkpointThread(): "worker" | "main" | null;
}

export interface JournalOptions {
  base: string;
  /** The storage key of a document (`<encoded collection>:<encoded id>`): its file is `base/<key with : as />`. */
  keyOf(collection: string, id: string): string;
  /** Store kind for error messages ("unstorage-fs"). */
  kind: string;
  /** Checkpoint interval. Default 1000 ms. */
  checkpointMs?: number;
  /** Write the checkpoint's files in a worker thread. Default true; false writes them on the calling thread. */
  checkpointWorker?: boolean;
  /** Tests only: the worker's source instead of CHECKPOINT_WORKER_SOURCE (e.g. one that dies). */
  checkpointWorkerSource?: string;
  /**
   * Called once when the checkpoint worker could not start or died, so checkpoints moved to the
   * main thread for the rest of the process's life (nothing is lost; the main thread pays the file
   * writes again). Not called when `close()` ends the worker.
   */
  onCheckpointFallback?: (reason: string) => void;
  /**
   * Called when a checkpoint could not write some of its files (the journals holding them are
   * kept, and later checkpoints try again): at the first failed checkpoint of a run, then at most
   * once every CHECKPOINT_REPORT_MS while they keep failing. `code` is the first failure's error
   * code (`ENOSPC`, `EACCES`, …); no path or document is given.
   */
  onCheckpointFailed?: (info: { failedFiles: number; code: string; failedCheckpoints: number; journals: number }) => void;
  /** Called when a checkpoint wrote every file after one or more failed. */
  onCheckpointRecovered?: (info: { failedCheckpoints: number }) => void;
}

const JOURNAL_PREFIX = "@journal-";
/** While checkpoints keep failing, how often onCheckpointFailed is called again. */
const CHECKPOINT_REPORT_MS = 60_000;
/** Files written between two turns of the event loop when the checkpoint runs on the main thread. */
const CHECKPOINT_CHUNK = 64;
/** At most this many files, and about this much text (chars), in one message to the worker (a Stored invoice can be 1 MiB). */
const CHECKPOINT_MESSAGE = 512;
const CHECKPOINT_MESSAGE_CHARS = 4 * 1024 * 1024;

/**
 * The checkpoint worker (plain CommonJS, run with `eval`: no file to find under tsx or in a bundle).
 * A message is one chunk of a checkpoint: `paths[i]` gets `texts[i]`, or is deleted when it is null.
 * The reply lists the indexes that failed and the first failure's error code. A write whose
 * directory is missing creates it and writes again; a delete of a file that is not there is done.
 */
const CHECKPOINT_WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { mkdirSync, unlinkSync, writeFileSync } = require("node:fs");
const { dirname } = require("node:path");
parentPort.on("message", ({ paths, texts }) => {
  const failed = [];
  let code = null;
  for (let i = 0; i < paths.length; i++) {
    const path = paths[i];
    const text = texts[i];
    try {
      if (text === null) {
        try { unlinkSync(path); } catch (e) { if (e.code !== "ENOENT") throw e; }
      } else {
        try { writeFileSync(path, text, "utf8"); } catch (e) {
          if (e.code !== "ENOENT") throw e;
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, text, "utf8");
        }
      }
    } catch (e) {
      failed.push(i);
      code ??= String((e && e.code) || "EUNKNOWN");
    }
  }
  parentPort.postMessage({ failed, code });
});
`;

export function createJournal(options: JournalOptions): Journal {
  const { base, kind, keyOf } = options;
  mkdirSync(base, { recursive: true });
  const found = _journalFiles(base);
  let seq = found.length > 0 ? found[found.length - 1]!.seq : 0;
  /** Journal files whose changes are not all checkpointed yet (oldest first), the current one last. */
  let journals: string[] = found.map((f) => f.path);
  let fd = _open(base, ++seq, journals);

  /** Changes waiting for the next append, latest state per key. */
  let queued = new Map<string, JournalChange>();
  let waiters: Array<{ resolve(): void; reject(e: unknown): void }> = [];
  let scheduled = false;
  /** Latest journaled state of every document changed since the last checkpoint started. */
  let dirty = new Map<string, JournalChange>();
  let checkpointing: Promise<void> | null = null;
  /** Where an append's lines are encoded (reused; grows to the largest batch). */
  let out: Buffer = Buffer.allocUnsafe(0);
  /** Whether anything was appended to the current journal file since it was opened. */
  let currentUsed = false;
  /** Checkpoints failed in a row, and when that was last reported. */
  const failing = { checkpoints: 0, reportedAt: 0 };
  const idle: Array<() => void> = [];
  let closed = false;
  const files = options.checkpointWorker === false ? _mainThreadWriter() : _workerWriter(options.checkpointWorkerSource ?? CHECKPOINT_WORKER_SOURCE, options.onCheckpointFallback);

  const schedule = (): void => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(append);
  };

  const append = (): void => {
    scheduled = false;
    if (queued.size === 0) return;
    const batch = queued;
    const batchWaiters = waiters;
    queued = new Map();
    waiters = [];
    // Each line is encoded into one reused buffer as it is made: no batch-sized string (which V8
    // would put in old space, or in its large-object space, and collect only in a full GC).
    let length = 0;
    for (const change of batch.values()) {
      const line = `[${JSON.stringify(change.collection)},${JSON.stringify(change.id)},${change.doc === null ? "null" : JSON.stringify(change.doc)}]\n`;
      if (out.length - length < line.length * 3) out = _grown(out, length, line.length * 3);
      length += out.write(line, length, "utf8");
    }
    const error = _writeAll(fd, out.subarray(0, length));
    currentUsed = true;
    // Written or not, the next checkpoint writes these states to their files.
    for (const [key, change] of batch) dirty.set(key, change);
    if (error) {
      // Appends go on in a fresh file: a torn line must stay the last line of its file.
      try {
        fd = _open(base, ++seq, journals);
        currentUsed = false;
      } catch {
        // The next append fails again and reports it.
      }
      const e = new DependencyUnavailableError(kind, `journal write failed: ${error.message}`, "server_error");
      for (const w of batchWaiters) w.reject(e);
    } else {
      for (const w of batchWaiters) w.resolve();
    }
    for (const wake of idle.splice(0)) wake();
  };

  /** Resolves when no append is queued. */
  const settled = (): Promise<void> => (queued.size === 0 ? Promise.resolve() : new Promise((resolve) => idle.push(resolve)));

  /**
   * Switches appends to a new journal file (between two appends: an append is one synchronous
   * write; unless nothing was appended to the current one) and hands over the older files and
   * every change they hold.
   */
  const rotate = (): { older: string[]; oldFd: number | null; work: Map<string, JournalChange> } => {
    const work = dirty;
    dirty = new Map();
    if (!currentUsed) {
      // Nothing appended since the current file opened: appends go on in it (a checkpoint that keeps
      // failing while nothing is written must not leave one more empty journal every second).
      const older = journals.slice(0, -1);
      journals = journals.slice(-1);
      return { older, oldFd: null, work };
    }
    const next: string[] = [];
    const nextFd = _open(base, seq + 1, next);
    seq += 1;
    const older = journals;
    const oldFd = fd;
    journals = next;
    fd = nextFd;
    currentUsed = false;
    return { older, oldFd, work };
  };

  const checkpoint = async (): Promise<void> => {
    if (dirty.size === 0 && journals.length <= 1) return;
    const { older, oldFd, work } = rotate();
    const items = [...work.values()];
    // Handed to the writer a chunk at a time, each chunk's texts serialised just before: they are
    // garbage once the chunk is handed over, so they die young instead of being kept from the
    // journal append to the checkpoint (docs/bench.md, "Third round: the fs store's memory").
    const failed: number[] = [];
    let code: string | null = null;
    for (let from = 0; from < items.length; ) {
      const paths: string[] = [];
      const texts: Array<string | null> = [];
      let chars = 0;
      for (let i = from; i < items.length && paths.length < CHECKPOINT_MESSAGE && chars < CHECKPOINT_MESSAGE_CHARS; i++) {
        const change = items[i]!;
        const text = change.doc === null ? null : JSON.stringify(change.doc);
        paths.push(join(base, keyOf(change.collection, change.id).replace(/:/g, "/")));
        texts.push(text);
        chars += text?.length ?? 0;
      }
      const written = await files.write(paths, texts);
      for (const i of written.failed) failed.push(from + i);
      code ??= written.code;
      from += paths.length;
    }
    if (oldFd !== null) _closeQuietly(oldFd);
    if (failed.length > 0) {
      // Keep every older journal until a checkpoint writes all of its changes.
      for (const i of failed) {
        const change = items[i]!;
        if (!dirty.has(_mapKey(change))) dirty.set(_mapKey(change), change);
      }
      journals = [...older, ...journals];
      failing.checkpoints++;
      const now = Date.now();
      if (failing.checkpoints === 1 || now - failing.reportedAt >= CHECKPOINT_REPORT_MS) {
        failing.reportedAt = now;
        _tell(options.onCheckpointFailed, { failedFiles: failed.length, code: code ?? "EUNKNOWN", failedCheckpoints: failing.checkpoints, journals: journals.length });
      }
      return;
    }
    if (failing.checkpoints > 0) {
      _tell(options.onCheckpointRecovered, { failedCheckpoints: failing.checkpoints });
      failing.checkpoints = 0;
    }
    for (const path of older) {
      try {
        unlinkSync(path);
      } catch {
        // gone already
      }
    }
  };

  const runCheckpoint = (): Promise<void> => {
    checkpointing ??= checkpoint().finally(() => {
      checkpointing = null;
    });
    return checkpointing;
  };

  const timer = setInterval(() => void runCheckpoint().catch(() => {}), options.checkpointMs ?? 1_000);
  timer.unref();

  return {
    persist(change: JournalChange): Promise<void> {
      if (closed) return Promise.reject(new DependencyUnavailableError(kind, "document store is closed", "transport"));
      queued.set(_mapKey(change), change);
      return new Promise((resolve, reject) => {
        waiters.push({ resolve, reject });
        schedule();
      });
    },

    replay(apply) {
      const skipped: string[] = [];
      let changes = 0;
      for (const { path } of found) {
        let text: string;
        try {
          text = readFileSync(path, "utf8");
        } catch {
          continue;
        }
        const lines = text.split("\n");
        lines.forEach((line, i) => {
          if (line === "") return;
          let parsed: unknown;
          try {
            parsed = JSON.parse(line);
          } catch {
            skipped.push(`${path.slice(base.length + 1)}:${i + 1}`);
            return;
          }
          if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
            skipped.push(`${path.slice(base.length + 1)}:${i + 1}`);
            return;
          }
          const change: JournalChange = { collection: parsed[0], id: parsed[1], doc: (parsed[2] ?? null) as Doc | null };
          apply(change);
          dirty.set(_mapKey(change), change);
          changes++;
        });
      }
      return { changes, skipped };
    },

    checkpointThread: () => files.lastThread,

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      await settled();
      if (checkpointing) await checkpointing.catch(() => {});
      await runCheckpoint();
      await files.close();
      _closeQuietly(fd);
      if (dirty.size === 0) {
        for (const path of journals) {
          try {
            unlinkSync(path);
          } catch {
            // gone already
          }
        }
      }
    },
  };
}

// --- Internal helpers ---

/** Calls an observer; a failing observer changes nothing here. */
function _tell<T>(observer: ((info: T) => void) | undefined, info: T): void {
  try {
    observer?.(info);
  } catch {
    // ignored
  }
}

/** One map key per document. */
function _mapKey(c: JournalChange): string {
  return `${c.collection}\u0000${c.id}`;
}

function _journalFiles(base: string): Array<{ seq: number; path: string }> {
  let names: string[];
  try {
    names = readdirSync(base);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, m: new RegExp(`^${JOURNAL_PREFIX}(\\d+)$`).exec(name) }))
    .filter((x) => x.m)
    .map((x) => ({ seq: Number(x.m![1]), path: join(base, x.name) }))
    .sort((a, b) => a.seq - b.seq);
}

/** Opens journal `seq` for appending and records its path in `journals`. */
function _open(base: string, seq: number, journals: string[]): number {
  const path = join(base, `${JOURNAL_PREFIX}${String(seq).padStart(8, "0")}`);
  const fd = openSync(path, "a");
  journals.push(path);
  return fd;
}

/** A buffer of at least `used + more` bytes (doubling, 64 KiB at least) holding the first `used` bytes of `buf`. */
function _grown(buf: Buffer, used: number, more: number): Buffer {
  const next = Buffer.allocUnsafe(Math.max(64 * 1024, 2 * buf.length, used + more));
  buf.copy(next, 0, 0, used);
  return next;
}

/** Writes all of `buf` at the end of the journal; the error, if any. */
function _writeAll(fd: number, buf: Buffer): NodeJS.ErrnoException | null {
  let offset = 0;
  try {
    while (offset < buf.length) offset += writeSync(fd, buf, offset, buf.length - offset, null);
  } catch (e) {
    return e as NodeJS.ErrnoException;
  }
  return null;
}

function _closeQuietly(fd: number): void {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

/** What a write of files answers: the indexes that failed, and the first failure's error code (null: none failed). */
interface _Written {
  failed: number[];
  code: string | null;
}

/** Writes (text) or deletes (null) the files of one chunk of a checkpoint. */
interface _FileWriter {
  write(paths: string[], texts: Array<string | null>): Promise<_Written>;
  close(): Promise<void>;
  lastThread: "worker" | "main" | null;
}

/** The files written on the main thread, CHECKPOINT_CHUNK at a time with a turn of the event loop in between. */
async function _writeOnMainThread(paths: string[], texts: Array<string | null>): Promise<_Written> {
  const failed: number[] = [];
  let code: string | null = null;
  for (let i = 0; i < paths.length; i++) {
    const text = texts[i]!;
    try {
      if (text === null) _unlinkSync(paths[i]!);
      else _writeFileSync(paths[i]!, text);
    } catch (e) {
      failed.push(i);
      code ??= String((e as NodeJS.ErrnoException).code ?? "EUNKNOWN");
    }
    if ((i + 1) % CHECKPOINT_CHUNK === 0) await new Promise((r) => setImmediate(r));
  }
  return { failed, code };
}

function _mainThreadWriter(): _FileWriter {
  const writer: _FileWriter = {
    lastThread: null,
    write(paths, texts) {
      writer.lastThread = "main";
      return _writeOnMainThread(paths, texts);
    },
    close: () => Promise.resolve(),
  };
  return writer;
}

/**
 * The files written by a worker thread, started at the first checkpoint. The worker is ref()'d only
 * while it writes (a checkpoint in progress keeps the process alive, as the main-thread writes do;
 * an idle worker never does). One checkpoint at a time (`runCheckpoint`), its chunks one after the
 * other, so one request at most is in flight. If the worker cannot start or exits, that checkpoint
 * and every later one are written on the main thread: the dead worker writes nothing more, so no
 * stale write can land after them.
 */
function _workerWriter(source: string, onFallback?: (reason: string) => void): _FileWriter {
  let worker: Worker | null = null;
  let onMainThread = false;
  let lastError: string | null = null;
  const fallBack = (reason: string): void => {
    if (onMainThread) return;
    onMainThread = true;
    try {
      onFallback?.(reason);
    } catch {
      // A failing observer changes nothing here.
    }
  };
  let reply: ((written: _Written | null) => void) | null = null;
  const settle = (written: _Written | null): void => {
    const r = reply;
    reply = null;
    worker?.unref();
    r?.(written);
  };
  const start = (): Worker | null => {
    try {
      // A small young generation: the worker holds one message (≤ ~4 MiB of text) at a time, and V8's
      // default (up to 3 × 16 MiB) stayed committed after a burst (~50–65 MiB of RSS, docs/bench.md).
      const w = new Worker(source, { eval: true, execArgv: [], resourceLimits: { maxYoungGenerationSizeMb: 4 } });
      w.unref();
      w.on("message", (written: _Written) => settle(written));
      // An uncaught error ends the thread; 'exit' follows and hands the batch back.
      w.on("error", (e: Error) => {
        lastError = e.message;
      });
      w.on("exit", (code) => {
        worker = null;
        fallBack(lastError ?? `the worker exited with code ${code}`);
        settle(null);
      });
      return w;
    } catch (e) {
      fallBack(`the worker could not start: ${(e as Error).message}`);
      return null;
    }
  };
  const writer: _FileWriter = {
    lastThread: null,
    async write(paths, texts) {
      if (!onMainThread) {
        worker ??= start();
        const w = worker;
        if (w) {
          const written = await new Promise<_Written | null>((resolve) => {
            reply = resolve;
            w.ref();
            try {
              w.postMessage({ paths, texts });
            } catch {
              settle(null);
            }
          });
          if (written) {
            writer.lastThread = "worker";
            return written;
          }
        }
      }
      writer.lastThread = "main";
      return _writeOnMainThread(paths, texts);
    },
    async close() {
      onMainThread = true;
      const w = worker;
      worker = null;
      if (w) await w.terminate();
    },
  };
  return writer;
}

function _writeFileSync(path: string, text: string): void {
  try {
    writeFileSync(path, text, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text, "utf8");
  }
}

function _unlinkSync(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
  }
}
