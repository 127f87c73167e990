/**
 * Preloaded by the test runner into every suite's process (`--import`): records the GW_* codes of
 * the problem+json answers the suite receives over fetch and node:http (see code-coverage.ts).
 * Plain JavaScript, and a no-op off the main thread: a worker thread (the SQLite writer of a
 * compiled server) inherits the flag without the TypeScript loader, and answers no HTTP.
 */
import { isMainThread } from "node:worker_threads";

if (isMainThread) {
  const { installFetchRecorder, installNodeHttpRecorder } = await import("./code-coverage.ts");
  installFetchRecorder();
  installNodeHttpRecorder();
}
