/**
 * `server.drainDelayMs` (docs/deployment.md "Rolling restart with drain"): after SIGTERM the
 * listener stays open for the delay, answering every request — on a kept-alive connection or a new
 * one — 503 GW_GATEWAY_CAPACITY_EXCEEDED with Retry-After and `Connection: close`, so an edge without
 * active health checks stops reusing its connections instead of racing their close (the topology
 * test of issue 15 caught nginx's 502 for a POST sent on a connection a draining gateway closed).
 * Then the listener closes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Pool, request } from "undici";
import { createLogger } from "../../core/log.ts";
import { serveGateway } from "../../core/server.ts";
import { DEMO_KEY, PASSTHROUGH, startTestGateway } from "../support/gateway.ts";

test("during drainDelayMs: 503 + Retry-After + Connection: close on old and new connections; then the listener is closed", async () => {
  const tg = await startTestGateway();
  const server = await serveGateway(tg.gateway, { host: "127.0.0.1", port: 0, graceMs: 4_000, drainDelayMs: 2_500, log: createLogger({ level: "silent" }) });
  const pool = new Pool(server.url, { connections: 1 });
  const headers = { host: PASSTHROUGH, "x-api-key": DEMO_KEY };
  try {
    const before = await pool.request({ path: "/sub-businesses", method: "GET", headers });
    await before.body.text();
    assert.is(before.statusCode, 200);
    assert.is.not(before.headers.connection, "close", "kept alive before the drain");

    const drained = server.drain("test");
    const onOld = await pool.request({ path: "/sub-businesses", method: "GET", headers });
    const body = (await onOld.body.json()) as { code: string };
    assert.is(onOld.statusCode, 503);
    assert.is(body.code, "GW_GATEWAY_CAPACITY_EXCEEDED");
    assert.ok(Number(onOld.headers["retry-after"]) >= 1);
    assert.is(onOld.headers.connection, "close");
    const onNew = await request(`${server.url}/sub-businesses`, { headers });
    await onNew.body.text();
    assert.is(onNew.statusCode, 503, "the listener still accepts during the delay");
    assert.is(onNew.headers.connection, "close");

    assert.equal(await drained, { drained: true, remaining: 0 });
    const after = await request(`${server.url}/health`).then(
      () => "answered",
      (e: { code?: string; cause?: { code?: string } }) => e.code ?? e.cause?.code ?? "error",
    );
    assert.is(after, "ECONNREFUSED");
  } finally {
    await pool.close();
  }
});

test.run();
