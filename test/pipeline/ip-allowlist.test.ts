/**
 * Stage 8, IP allowlist: a credential's ipWhitelisted (addresses and CIDR ranges) against the
 * client address the trusted edge supplied (direct mode: the socket's). X-Forwarded-For never
 * counts; an empty list permits any source; a missing, malformed or non-matching address is 403.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { expectProblem, rawProblem } from "../support/assertions.ts";
import {
  ALLOWLISTED_KEY,
  DEMO_KEY,
  DEMO_RAW,
  PASSTHROUGH,
  TRUSTED_EDGE as EDGE,
  gatewayTracker,
  rawRequest,
} from "../support/gateway.ts";
import { probeHits, probePlugin } from "../support/probe-plugin.ts";

async function expectForbidden(res: Response, why: string): Promise<void> {
  assert.is(res.status, 403, why);
  const body = await expectProblem(res, 403, "GW_AUTH_TENANT_FORBIDDEN", "AFTER_CORRECTION");
  assert.not.ok(JSON.stringify(body).includes(ALLOWLISTED_KEY), "the key is not echoed");
}

/** GET over a real socket with the given extra header lines. */
async function getRaw(port: number, key: string, extra: string[] = []) {
  return rawRequest({ port, head: ["GET /probe/echo HTTP/1.1", `Host: ${PASSTHROUGH}`, `x-api-key: ${key}`, ...extra, "Connection: close"] });
}

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("direct mode over real HTTP: an allowlisted key (10.9.9.9) from 127.0.0.1 is refused; X-Forwarded-For never helps", async () => {
  const tg = await start({ plugins: [probePlugin] });
  const server = await tg.listen();
  for (const extra of [[], ["X-Forwarded-For: 10.9.9.9"], ["X-Forwarded-For: 10.9.9.9, 127.0.0.1"], ["X-Real-IP: 10.9.9.9", "X-Gatehouse-Client-IP: 10.9.9.9", "Forwarded: for=10.9.9.9"]]) {
    const res = await getRaw(server.port, ALLOWLISTED_KEY, extra);
    assert.is(res.status, 403, extra.join(", "));
    const body = rawProblem(res);
    assert.is(body.code, "GW_AUTH_TENANT_FORBIDDEN");
    assert.is(body.retry.strategy, "AFTER_CORRECTION");
  }
  // The key with an empty list passes from the same socket.
  const open = await getRaw(server.port, DEMO_KEY, ["X-Forwarded-For: 10.9.9.9"]);
  assert.is(open.status, 200);
  assert.is(JSON.parse(open.body).clientAddress, "127.0.0.1");
  await tg.close();
});

test("trusted edge: the edge's client address decides; any other address, a missing or malformed one is 403", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  probeHits.reset();
  const from = (headers: Record<string, string>) =>
    tg.call("/probe/counted", { headers: { "x-api-key": ALLOWLISTED_KEY, "x-edge-secret": EDGE.secret, ...headers } });
  assert.is((await from({ "x-edge-client-ip": "10.9.9.9" })).status, 200);
  assert.is((await from({ "x-edge-client-ip": "::ffff:10.9.9.9" })).status, 200, "IPv4-mapped form of the same address");
  assert.is(probeHits.count, 2);
  const refused: Array<[string, Record<string, string>]> = [
    ["another address", { "x-edge-client-ip": "10.9.9.8" }],
    ["a neighbour range", { "x-edge-client-ip": "10.9.9.90" }],
    ["no edge address", {}],
    ["malformed (3 octets)", { "x-edge-client-ip": "10.9.9" }],
    ["malformed (5 octets)", { "x-edge-client-ip": "10.9.9.9.9" }],
    ["malformed (text)", { "x-edge-client-ip": "not-an-ip" }],
    ["a list", { "x-edge-client-ip": "10.9.9.9, 10.9.9.8" }],
    ["with a port", { "x-edge-client-ip": "10.9.9.9:443" }],
    ["X-Forwarded-For only", { "x-forwarded-for": "10.9.9.9" }],
    ["X-Forwarded-For over a refused edge address", { "x-edge-client-ip": "10.9.9.8", "x-forwarded-for": "10.9.9.9" }],
  ];
  for (const [why, headers] of refused) await expectForbidden(await from(headers), why);
  assert.is(probeHits.count, 2, "no refused request reached its handler");
  await tg.close();
});

test("trusted edge over real HTTP: the edge header wins over the socket address", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  const server = await tg.listen();
  const ok = await getRaw(server.port, ALLOWLISTED_KEY, [`x-edge-secret: ${EDGE.secret}`, "x-edge-client-ip: 10.9.9.9"]);
  assert.is(ok.status, 200);
  assert.is(JSON.parse(ok.body).clientAddress, "10.9.9.9");
  const no = await getRaw(server.port, ALLOWLISTED_KEY, [`x-edge-secret: ${EDGE.secret}`, "X-Forwarded-For: 10.9.9.9"]);
  assert.is(no.status, 403);
  assert.is(rawProblem(no).code, "GW_AUTH_TENANT_FORBIDDEN");
  await tg.close();
});

test("CIDR entries match whole ranges (IPv4 and IPv6); several entries are alternatives", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].gateway.apiKeys.push(
    { id: "demo-cidr", key: "gw_demo_key_cidr", demoOnly: true, ipWhitelisted: ["10.0.0.0/8"] },
    { id: "demo-multi", key: "gw_demo_key_multi", demoOnly: true, ipWhitelisted: ["192.0.2.7", "2001:db8::/32", "172.16.0.0/12"] },
  );
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE, businesses: raw.businesses } });
  const from = (key: string, ip: string) =>
    tg.call("/probe/echo", { headers: { "x-api-key": key, "x-edge-secret": EDGE.secret, "x-edge-client-ip": ip } });
  for (const ip of ["10.1.2.3", "10.0.0.0", "10.255.255.255"]) assert.is((await from("gw_demo_key_cidr", ip)).status, 200, ip);
  for (const ip of ["11.0.0.1", "9.255.255.255", "192.168.1.1", "2001:db8::1"]) await expectForbidden(await from("gw_demo_key_cidr", ip), ip);
  for (const ip of ["192.0.2.7", "2001:db8:1::5", "172.31.255.254"]) assert.is((await from("gw_demo_key_multi", ip)).status, 200, ip);
  for (const ip of ["192.0.2.8", "2001:db9::1", "172.32.0.1", "10.1.2.3"]) await expectForbidden(await from("gw_demo_key_multi", ip), ip);
  await tg.close();
});

test("a key with an empty list passes from any source, with or without an address", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  for (const headers of [{ "x-edge-client-ip": "203.0.113.9" }, { "x-edge-client-ip": "2001:db8::9" }, {}, { "x-edge-client-ip": "garbage" }] as Array<Record<string, string>>) {
    const res = await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY, "x-edge-secret": EDGE.secret, ...headers } });
    assert.is(res.status, 200, JSON.stringify(headers));
  }
  await tg.close();
  // Direct mode in-process (no socket address at all) too.
  const direct = await start({ plugins: [probePlugin] });
  assert.is((await direct.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).status, 200);
  await expectForbidden(await direct.call("/probe/echo", { headers: { "x-api-key": ALLOWLISTED_KEY } }), "no address, non-empty list");
  await direct.close();
});

test("the allowlist is checked after authentication: a bad key from a refused address is still 401", async () => {
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE } });
  const res = await tg.call("/probe/echo", { headers: { "x-api-key": "gw_unknown_key_9999", "x-edge-secret": EDGE.secret, "x-edge-client-ip": "10.9.9.8" } });
  await expectProblem(res, 401, "GW_API_KEY_INVALID", "AFTER_CORRECTION");
  await tg.close();
});

test("collections Bearer keys are allowlisted the same way (403 in the collections envelope)", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].collections.apiKeys.push({ id: "demo-collections-allow", key: "sk_test_demo_allow", demoOnly: true, ipWhitelisted: ["10.9.9.9"] });
  const tg = await start({ plugins: [probePlugin], patch: { edge: EDGE, businesses: raw.businesses } });
  const from = (ip: string) =>
    tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: "Bearer sk_test_demo_allow", "x-edge-secret": EDGE.secret, "x-edge-client-ip": ip } });
  assert.is((await from("10.9.9.9")).status, 200);
  const refused = await from("10.9.9.8");
  assert.is(refused.status, 403);
  assert.is(refused.headers.get("content-type"), "application/json");
  const body = await refused.json();
  assert.is(body.statusCode, 403);
  assert.not.ok(JSON.stringify(body).includes("sk_test_demo_allow"));
  await tg.close();
});

test.run();
