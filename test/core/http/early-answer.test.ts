/**
 * An answer given before the request's body was read closes its connection, over a real socket:
 * a client that announces a large body and sends it a byte at a time gets its 401 / 404 / 405 /
 * 413 / 415 with `Connection: close`, and the server closes the socket at once, instead of draining
 * the slow body until Node's 60 s request deadline. A request whose body was read keeps its
 * connection (keep-alive) as before.
 */
import { connect, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_KEY, PASSTHROUGH, gatewayTracker } from "../../support/gateway.ts";

const { start, closeAll } = gatewayTracker();
test.after(closeAll);

const tg = await start();
const server = await tg.listen();

interface SlowExchange {
  status: number;
  head: string;
  /** Milliseconds from the first byte sent until the server closed the connection (null: it did not within the wait). */
  closedAfterMs: number | null;
}

/** Sends a head announcing `declared` bytes, then one body byte every 100 ms, for at most `waitMs`. */
function slowBody(head: string[], declared: number, waitMs = 3_000): Promise<SlowExchange> {
  return new Promise((resolve) => {
    const socket: Socket = connect(server.port, "127.0.0.1");
    const started = Date.now();
    let data = "";
    let drip: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearInterval(drip);
      clearTimeout(timer);
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(data)?.[1] ?? 0), head: data.split("\r\n\r\n")[0] ?? "", closedAfterMs: closed ? Date.now() - started : null });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on("connect", () => {
      socket.write([...head, `Content-Length: ${declared}`, "", "{"].join("\r\n"));
      drip = setInterval(() => socket.writable && socket.write(" "), 100);
    });
    socket.on("data", (d) => (data += d.toString("latin1")));
    socket.on("close", () => finish(true));
    socket.on("error", () => undefined);
  });
}

const json = "Content-Type: application/json";
const CASES: Array<[number, string[], number]> = [
  [401, ["POST /sub-businesses HTTP/1.1", `Host: ${PASSTHROUGH}`, json], 30_000],
  [404, ["POST /no-such-route HTTP/1.1", `Host: ${PASSTHROUGH}`, json, `x-api-key: ${DEMO_KEY}`], 30_000],
  [405, ["PUT /sub-businesses HTTP/1.1", `Host: ${PASSTHROUGH}`, json, `x-api-key: ${DEMO_KEY}`], 30_000],
  [413, ["POST /sub-businesses HTTP/1.1", `Host: ${PASSTHROUGH}`, json, `x-api-key: ${DEMO_KEY}`], 50_000_000],
  [415, ["POST /sub-businesses HTTP/1.1", `Host: ${PASSTHROUGH}`, "Content-Type: text/plain", `x-api-key: ${DEMO_KEY}`], 30_000],
];

for (const [status, head, declared] of CASES) {
  test(`${status} before the body is read: Connection: close, and the socket closes at once`, async () => {
    const ex = await slowBody(head, declared);
    assert.is(ex.status, status, ex.head);
    assert.match(ex.head.toLowerCase(), /\r\nconnection: close/);
    assert.ok(ex.closedAfterMs !== null && ex.closedAfterMs < 1_500, `closed after ${ex.closedAfterMs} ms`);
  });
}

test("a request whose body was read keeps its connection", async () => {
  const socket = connect(server.port, "127.0.0.1");
  await new Promise((r) => socket.once("connect", r));
  const body = "{}";
  const request = [`POST /sub-businesses HTTP/1.1`, `Host: ${PASSTHROUGH}`, json, `x-api-key: ${DEMO_KEY}`, "x-idempotency-key: early-answer-0001", `Content-Length: ${body.length}`, "", body].join("\r\n");
  let data = "";
  socket.on("data", (d) => (data += d.toString("latin1")));
  socket.write(request);
  await new Promise((r) => setTimeout(r, 500));
  assert.match(data, /^HTTP\/1\.1 400/, "answered (the body was read and refused by the route's own checks)");
  assert.not.match(data.toLowerCase(), /\r\nconnection: close/);
  assert.ok(!socket.destroyed && socket.readyState === "open", "still open");
  socket.destroy();
});

test.run();
