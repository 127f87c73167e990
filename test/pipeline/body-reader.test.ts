/**
 * The body reader on the wire (core/http/body.ts `readBody`): a request served by the Node
 * server is read from Node's IncomingMessage itself, either at once (the parser already has the
 * whole body) or as it streams in. Both must give what the stream reader gives: the body, the
 * limit (413), the deadline (408), an incomplete body (400), and nothing read across requests.
 */
import { connect, type Socket } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectRawProblem, until } from "../support/assertions.ts";
import { DEMO_KEY_HEADERS as KEY, PASSTHROUGH, gatewayTracker, rawRequest } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";

const KIB64 = 64 * 1024;
const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

function head(key: string, lines: string[]): string {
  const all = [`POST /probe/items/abc HTTP/1.1`, `Host: ${PASSTHROUGH}`, "Content-Type: application/json", `x-idempotency-key: ${key}`];
  for (const [k, v] of Object.entries(KEY)) all.push(`${k}: ${v}`);
  return [...all, ...lines].join("\r\n") + "\r\n\r\n";
}

/** Opens a socket, writes `parts` with `gapMs` between them, collects everything until the server closes or `untilText` appears. */
async function exchange(port: number, parts: string[], options: { gapMs?: number; untilCount?: number; destroyAfter?: boolean } = {}): Promise<{ text: string; socket: Socket }> {
  const socket = connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  let text = "";
  socket.on("data", (d) => (text += d));
  socket.on("error", () => {});
  for (const [i, part] of parts.entries()) {
    if (i > 0 && options.gapMs) await new Promise((r) => setTimeout(r, options.gapMs));
    socket.write(part);
  }
  if (options.destroyAfter) {
    socket.destroy();
    return { text, socket };
  }
  const want = options.untilCount ?? 1;
  await until(() => (text.match(/HTTP\/1\.1 \d{3}/g) ?? []).length >= want && /\}\s*$/.test(text), 5_000);
  socket.destroy();
  return { text, socket };
}

function statusesAndBodies(text: string): Array<{ status: number; body: { body?: unknown; code?: string } }> {
  return text
    .split(/(?=HTTP\/1\.1 \d{3})/)
    .filter((s) => s.startsWith("HTTP/1.1"))
    .map((s) => ({ status: Number(s.slice(9, 12)), body: JSON.parse(s.slice(s.indexOf("\r\n\r\n") + 4).trim()) }));
}

test("a body that arrives with its headers is read at once; one that arrives in pieces is read as it streams (real HTTP)", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 5_000 } } });
  const server = await tg.listen();
  const body = JSON.stringify({ name: "whole", tags: ["a", "b"] });
  const whole = await exchange(server.port, [head("body-reader-0001", [`Content-Length: ${Buffer.byteLength(body)}`]) + body]);
  const [a] = statusesAndBodies(whole.text);
  assert.is(a?.status, 200);
  assert.equal(a?.body.body, { name: "whole", tags: ["a", "b"] });

  const long = JSON.stringify({ name: "pieces", tags: ["x".repeat(40_000), "é".repeat(1_000)] });
  const bytes = Buffer.from(long);
  const cut = [bytes.subarray(0, 10), bytes.subarray(10, 20_001), bytes.subarray(20_001)].map((b) => b.toString("latin1"));
  const socket = connect(server.port, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.setEncoding("utf8");
  let text = "";
  socket.on("data", (d) => (text += d));
  socket.write(head("body-reader-0002", [`Content-Length: ${bytes.byteLength}`]));
  for (const part of cut) {
    await new Promise((r) => setTimeout(r, 40));
    socket.write(Buffer.from(part, "latin1"));
  }
  await until(() => /\}\s*$/.test(text) && text.includes("\r\n\r\n"), 5_000);
  socket.destroy();
  const [b] = statusesAndBodies(text);
  assert.is(b?.status, 200);
  assert.equal(b?.body.body, JSON.parse(long), "the pieces joined byte for byte (a multi-byte character split across writes)");
  await tg.close();
});

test("two pipelined requests with bodies on one connection: each reads its own body only", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const server = await tg.listen();
  const one = JSON.stringify({ name: "one" });
  const two = JSON.stringify({ name: "two", tags: ["t"] });
  const { text } = await exchange(
    server.port,
    [head("body-reader-0003", [`Content-Length: ${one.length}`]) + one + head("body-reader-0004", [`Content-Length: ${two.length}`]) + two],
    { untilCount: 2 },
  );
  const answers = statusesAndBodies(text);
  assert.equal(
    answers.map((a) => [a.status, a.body.body]),
    [
      [200, { name: "one" }],
      [200, { name: "two", tags: ["t"] }],
    ],
  );
  await tg.close();
});

test("a whole chunked body over the limit, already received: 413, the connection still answers, the slot is released", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 5_000 } } });
  const server = await tg.listen();
  const big = JSON.stringify({ name: "xx", tags: ["a".repeat(KIB64)] });
  const res = await rawRequest({
    port: server.port,
    head: head("body-reader-0005", ["Transfer-Encoding: chunked"]).replace(/\r\n\r\n$/, "").split("\r\n"),
    body: `${Buffer.byteLength(big).toString(16)}\r\n${big}\r\n0\r\n\r\n`,
    timeoutMs: 3_000,
  });
  expectRawProblem(res, 413, "GW_REQUEST_BODY_TOO_LARGE", "AFTER_CORRECTION");
  await until(() => tg.gateway.runtime.inFlight().total === 0);
  // Exactly at the limit, the same way: accepted.
  const atLimit = '{"name":"xx","tags":[""]}'.replace('[""]', `["${"a".repeat(KIB64 - 25)}"]`);
  assert.is(Buffer.byteLength(atLimit), KIB64);
  const ok = await rawRequest({
    port: server.port,
    head: head("body-reader-0006", ["Transfer-Encoding: chunked"]).replace(/\r\n\r\n$/, "").split("\r\n"),
    body: `${KIB64.toString(16)}\r\n${atLimit}\r\n0\r\n\r\n`,
    timeoutMs: 3_000,
  });
  assert.is(ok.status, 200);
  await tg.close();
});

test("a body that stops mid-way after some pieces arrived: 408 at the read deadline; a connection reset mid-body: INCOMPLETE recorded, slot released", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { server: { bodyReadTimeoutMs: 300 } } });
  const server = await tg.listen();
  const started = Date.now();
  const { text } = await exchange(server.port, [head("body-reader-0007", ["Content-Length: 100"]), '{"name":', '"x'], { gapMs: 50 });
  const [answer] = statusesAndBodies(text);
  assert.is(answer?.status, 408);
  assert.is(answer?.body.code, "GW_REQUEST_BODY_TIMEOUT");
  assert.ok(Date.now() - started >= 250, "answered at the deadline");
  await until(() => tg.gateway.runtime.inFlight().total === 0);

  const before = tg.logs.filter((l) => l.code === "GW_REQUEST_BODY_INCOMPLETE").length;
  await exchange(server.port, [head("body-reader-0008", ["Content-Length: 100"]), '{"name":'], { gapMs: 50, destroyAfter: true });
  await until(() => tg.logs.filter((l) => l.event === "gateway_request_completed" && l.code === "GW_REQUEST_BODY_INCOMPLETE").length > before);
  await until(() => tg.gateway.runtime.inFlight().total === 0);
  // The server goes on serving.
  const body = JSON.stringify({ name: "after" });
  const after = await exchange(server.port, [head("body-reader-0009", [`Content-Length: ${body.length}`]) + body]);
  assert.is(statusesAndBodies(after.text)[0]?.status, 200);
  await tg.close();
});

test.run();
