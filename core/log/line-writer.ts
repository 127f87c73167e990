/**
 * Log lines leave the process in batches: one `write` per event-loop turn rather than per line, and
 * one writer for stdout shared by every logger, so lines keep their order.
 */

/** Lines buffered for a stream and written together: one `write` per event-loop turn, not per line. */
export interface LineWriter {
  write(line: string): void;
  /** Writes what is buffered now (synchronous for files and pipes: Node writes stdout synchronously there). */
  flush(): void;
}

/**
 * A LineWriter for `stream`. Lines queue until the end of the current event-loop turn (setImmediate:
 * every request answered in one poll phase shares one write), or until 64 KiB are queued; `flush()`
 * and the process's `exit` write the rest at once, so a line logged before exit is never lost.
 * Order is kept: lines leave in the order they were written.
 */
export function createLineWriter(stream: { write(chunk: string): unknown }): LineWriter {
  let pending: string[] = [];
  let bytes = 0;
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const text = pending.length === 1 ? pending[0]! : pending.join("");
    pending = [];
    bytes = 0;
    stream.write(text);
  };
  process.once("exit", flush);
  return {
    write(line) {
      pending.push(line);
      bytes += line.length;
      if (bytes >= LINE_BATCH_BYTES) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}

const LINE_BATCH_BYTES = 64 * 1024;
let _stdoutLines: LineWriter | null = null;

/** The process's one LineWriter for stdout (every logger shares it, so lines keep their order). */
export function stdoutLines(): LineWriter {
  return (_stdoutLines ??= createLineWriter(process.stdout));
}
