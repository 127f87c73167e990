/**
 * deploy/nginx.conf as nginx (Debian) runs it, in front of small HTTP servers that record what
 * reaches them (docs/deployment.md "The edge"): the edge secret and the client address are set
 * whatever the client sent, X-Forwarded-For / Forwarded / X-Real-IP never pass, X-Service-Gateway-Hop
 * passes only in the shape of the gateway's own marker, a POST the edge
 * already sent is never sent again when its gateway breaks the connection (a GET is, to the other
 * gateway), and a request no gateway took (connection refused) moves to the next one.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../../config/load.ts";
import { hashSecret } from "../../../core/directory.ts";
import { createHopMarker } from "../../../core/http/hop.ts";
import { DEMO_RAW } from "../../support/gateway.ts";
import { isNginxSkip, startNginx, type NginxHandle } from "../../support/nginx.ts";
import { freePort } from "../../support/ports.ts";
import { httpCall } from "../../support/raw-http.ts";
import { SCALE_OUT_EDGE, reportTopologySkip } from "../../support/topology.ts";

const SECRET = "edge-test-secret-0123456789abcdef";
const config = loadConfig({
  raw: { ...structuredClone(DEMO_RAW), edge: { mode: "trusted", ...SCALE_OUT_EDGE, secretHash: hashSecret(SECRET) } },
  env: {},
});

interface Upstream {
  address: string;
  seen: Array<{ method: string; url: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** The next `breaks` requests, to whichever upstream, break their connection instead of answering (a gateway dying mid-request). */
let breaks = 0;

async function upstream(name: string): Promise<Upstream> {
  const u: Upstream = { address: "", seen: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      u.seen.push({ method: req.method!, url: req.url!, headers: req.headers });
      if (breaks > 0) {
        breaks--;
        req.socket.destroy();
        return;
      }
      res.writeHead(200, { "content-type": "application/json", "x-request-id": `${name}-${u.seen.length}` }).end(JSON.stringify({ served: name }));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  u.address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  u.close = () => new Promise((r) => server.close(() => r()));
  return u;
}

const a = await upstream("a");
const b = await upstream("b");
const refused = `127.0.0.1:${await freePort()}`; // nothing listens there
const edge = await startNginx(config, { upstreams: [a.address, b.address], edgeSecret: SECRET, port: await freePort() });

if (isNginxSkip(edge)) {
  await a.close();
  await b.close();
  reportTopologySkip("nginx edge", edge.skip);
} else run(edge);

function run(nginx: NginxHandle): void {
  const all = () => [...a.seen, ...b.seen];

  test.after(async () => {
    await nginx.stop();
    await a.close();
    await b.close();
  });

  test("the edge secret and the client address are the edge's, whatever the client sent; X-Forwarded-For, Forwarded, X-Real-IP never pass", async () => {
    const res = await httpCall(nginx.url, "/sub-businesses?limit=1", {
      host: "passthrough.demo.localhost",
      headers: {
        [SCALE_OUT_EDGE.secretHeader]: "forged",
        [SCALE_OUT_EDGE.clientAddressHeader]: "10.9.9.9",
        "x-forwarded-for": "10.9.9.9",
        forwarded: "for=10.9.9.9",
        "x-real-ip": "10.9.9.9",
        "x-request-id": "caller-1",
      },
    });
    assert.is(res.status, 200);
    const got = all().at(-1)!.headers;
    assert.is(got[SCALE_OUT_EDGE.secretHeader], SECRET);
    assert.is(got[SCALE_OUT_EDGE.clientAddressHeader], "127.0.0.1");
    assert.is(got["x-forwarded-for"], undefined);
    assert.is(got.forwarded, undefined);
    assert.is(got["x-real-ip"], undefined);
    assert.is(got.host, "passthrough.demo.localhost");
    assert.is(got["x-request-id"], "caller-1", "the caller's request id passes (the gateway records it as callerRequestId)");
    const line = nginx.accessLog().at(-1)!;
    assert.is(line.callerRequestId, "caller-1");
    assert.match(line.requestId, /^[ab]-\d+$/, "the access log names the answering gateway's X-Request-ID");
    assert.not.match(JSON.stringify(nginx.accessLog()), new RegExp(SECRET), "the secret is never logged");
  });

  test("X-Service-Gateway-Hop from a client passes only in the shape of the gateway's own marker", async () => {
    const marker = createHopMarker("any-deployment-secret").forHost("passthrough.demo.localhost");
    let n = 0;
    // What reached a gateway (either one) of a request sent with this hop value.
    const passed = async (hop: string) => {
      const id = `hop-${++n}`;
      const res = await httpCall(nginx.url, "/sub-businesses?limit=1", { host: "passthrough.demo.localhost", headers: { "x-service-gateway-hop": hop, "x-request-id": id } });
      assert.is(res.status, 200);
      return all().find((r) => r.headers["x-request-id"] === id)!.headers["x-service-gateway-hop"];
    };
    for (const hop of ["1", "2", "garbage", `${marker}x`, marker.slice(0, 20)]) assert.is(await passed(hop), undefined, hop);
    assert.is(await passed(marker), marker, "a signed-shaped marker reaches the gateway, which verifies it");
  });

  test("a GET whose gateway breaks the connection is sent to the other gateway, which answers", async () => {
    breaks = 1;
    const before = all().length;
    const res = await httpCall(nginx.url, "/invoices", { host: "stored.demo.localhost" });
    assert.is(res.status, 200);
    assert.is(all().length - before, 2, "tried on both gateways");
    assert.is(breaks, 0);
  });

  // (nginx now skips the gateway that broke the connection for fail_timeout, 5 s: the next test
  // gets the other one.)
  test("a POST whose gateway breaks the connection is not sent again: the edge answers 502 with no gateway request id", async () => {
    breaks = 1;
    const before = all().length;
    const res = await httpCall(nginx.url, "/api/v1/invoice/sign", { method: "POST", host: "passthrough.demo.localhost", headers: { "content-type": "application/json" }, body: "{}" });
    assert.is(res.status, 502);
    assert.is(all().length - before, 1, "sent to one gateway, once");
    const line = nginx.accessLog().at(-1)!;
    assert.is(line.status, 502);
    assert.is(line.requestId, "", "the edge's own answer: no gateway X-Request-ID");
  });

}

// A gateway that is down (connection refused) is skipped, for a POST too: a separate nginx with a dead first upstream.
if (!isNginxSkip(edge)) {
  test("a POST no gateway took (connection refused) goes to the next gateway, once", async () => {
    const second = await startNginx(config, { upstreams: [refused, a.address], edgeSecret: SECRET, port: await freePort() });
    if (isNginxSkip(second)) throw new Error(second.skip);
    try {
      let ok = 0;
      const before = a.seen.length;
      for (let i = 0; i < 4; i++) {
        const res = await httpCall(second.url, "/api/v1/invoice/sign", { method: "POST", host: "passthrough.demo.localhost", headers: { "content-type": "application/json" }, body: "{}" });
        if (res.status === 200) ok++;
      }
      assert.is(ok, 4, "every POST answered by the live gateway");
      assert.is(a.seen.length - before, 4, "each sent once");
    } finally {
      await second.stop();
    }
  });
}

test.run();
