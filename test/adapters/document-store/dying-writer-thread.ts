/**
 * A writer thread for tests (the store's `writerEntry`): the real one (writer-thread.ts), except
 * that a batch writing to the collection `dying_writer` is committed and then the thread exits
 * before its answer is posted, as a thread that dies between COMMIT and the reply would; and while
 * a file `<database>.refuse-open` exists, the thread fails to open the database as the real one
 * reports it, then stays alive (as a failed thread under tsx's loader can).
 */
import { existsSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import type { WriterThreadData } from "../../../adapters/document-store/sqlite/writer-thread.ts";

const port = parentPort!;
if (existsSync(`${(workerData as WriterThreadData).file}.refuse-open`)) {
  port.postMessage({ failed: "SQLITE_CANTOPEN: refused by the test", code: "SQLITE_CANTOPEN" });
  setInterval(() => {}, 60_000); // alive until terminated
  await new Promise(() => {});
}
let dying = false;
// The real thread's message listener sees each batch after this check (attached through it, so
// that batches sent before the thread was ready wait for it, as they do for the real thread).
const on = port.on.bind(port);
port.on = ((event: string, listener: (m: unknown) => void) =>
  on(event, (m: { ops?: unknown }) => {
    if (event === "message" && typeof m?.ops === "string" && m.ops.includes('"dying_writer"')) dying = true;
    listener(m);
  })) as typeof port.on;
const post = port.postMessage.bind(port);
port.postMessage = (message: unknown) => {
  if (dying && typeof message === "object" && message !== null && "batches" in message) process.exit(1);
  post(message);
};
await import("../../../adapters/document-store/sqlite/writer-thread.ts");
