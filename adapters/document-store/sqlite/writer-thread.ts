/**
 * The writer thread's entry (worker_threads): opens the database file, then runs the commit loop
 * (./commit-loop.ts) on the batches the main thread posts, answering each transaction's batches
 * after its COMMIT. Every fsync of the store happens here, never on the thread that serves HTTP.
 *
 * Messages in: a BatchMessage, or `{ close: true }` (close the database, which checkpoints the WAL).
 * Out: `{ ready: true }` once open, `{ failed: message, code }` if it could not open, one BatchReply per
 * transaction, and `{ closed: true }`.
 */
import { parentPort, workerData } from "node:worker_threads";
import { createCommitLoop, createWriterState, openWriterConnection } from "./commit-loop.ts";
import type { BatchMessage } from "./protocol.ts";

export interface WriterThreadData {
  file: string;
  busyTimeoutMs: number;
}

const port = parentPort!;
const data = workerData as WriterThreadData;

try {
  const conn = openWriterConnection(data.file, data.busyTimeoutMs, "FULL");
  const loop = createCommitLoop(createWriterState(conn), (reply) => port.postMessage(reply));
  port.on("message", (m: BatchMessage | { close: true }) => {
    if ("close" in m) {
      conn.close();
      port.postMessage({ closed: true }); // the main thread then terminates this thread
      return;
    }
    loop.enqueue(m);
  });
  port.postMessage({ ready: true });
} catch (e) {
  const code = (e as { code?: string }).code ?? "error";
  port.postMessage({ failed: `${code}: ${(e as Error).message}`, code });
  port.close();
}
