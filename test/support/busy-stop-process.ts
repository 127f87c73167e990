/**
 * A program that is busy when its SIGTERM comes (test/e2e/lifecycle.test.ts): it installs a graceful
 * SIGTERM handler, prints `BUSY` and blocks its event loop for 3 s, as a worker in the middle of a
 * step on a loaded machine does. The handler runs after that: it prints `STOPPED` and exits 0.
 *
 *   node --import tsx test/support/busy-stop-process.ts
 */
process.once("SIGTERM", () => {
  process.stdout.write("STOPPED\n");
  process.exit(0);
});
// Alive until the handler ends it (signal listeners alone do not keep a process running).
setInterval(() => {}, 60_000);
setTimeout(() => {
  process.stdout.write("BUSY\n");
  const until = Date.now() + 3_000;
  while (Date.now() < until) {
    // busy: no event-loop turn, so no signal handler runs before this ends
  }
}, 0);
