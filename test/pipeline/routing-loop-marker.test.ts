/**
 * The routing-loop stage over a real socket, and who can raise its alert: every hop marker is
 * refused with 508, but only the gateway's own (signed with the deployment's key, bound to the host
 * the request arrived on, recent) raises the critical `routing_loop` alert. An anonymous `1`, a
 * marker signed by another deployment, and a marker the gateway made for another host (what a
 * webhook receiver or the chat channel saw) are 508 without an alert. The chat channel's own post
 * carries the deployment's marker for the channel's host.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHopMarker } from "../../core/http/hop.ts";
import { startReceiver } from "../adapters/alerts/alert-helpers.ts";
import { gatewayTracker, PASSTHROUGH } from "../support/gateway.ts";
import { httpCall } from "../support/raw-http.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("only the gateway's own marker raises routing_loop; any other marker is a plain 508", async () => {
  const receiver = await startReceiver();
  try {
    const tg = await start({ patch: { alerts: { environment: "prod", flushMs: 600_000, webhook: { url: receiver.url, attempts: 1 } } } });
    const server = await tg.listen();
    const ours = createHopMarker(tg.config.regulator.apiSecret);
    const send = (hop: string) => httpCall(server.url, "/sub-businesses", { host: PASSTHROUGH, headers: { "x-service-gateway-hop": hop } });
    const alerts = () => tg.logs.filter((l) => l.event === "gateway_alert" && l.signal === "routing_loop");

    const receiverHost = new URL(receiver.url).host;
    for (const hop of ["1", "2", createHopMarker("another-deployment").forHost(PASSTHROUGH), ours.forHost(receiverHost), ours.forHost("stored.demo.localhost")]) {
      const res = await send(hop);
      assert.is(res.status, 508, hop);
      assert.is((res.json() as { code: string }).code, "GW_ROUTING_LOOP_DETECTED");
    }
    await new Promise((r) => setTimeout(r, 200));
    assert.is(alerts().length, 0, "no outsider can page the operator");
    const signals = tg.logs.filter((l) => l.event === "gateway_routing_loop_detected");
    assert.is(signals.length, 5);
    assert.ok(signals.every((l) => l.marker === "unverified"));

    const own = await send(ours.forHost(PASSTHROUGH));
    assert.is(own.status, 508);
    for (let i = 0; i < 50 && (alerts().length === 0 || receiver.hops.length === 0); i++) await new Promise((r) => setTimeout(r, 20));
    assert.is(alerts().length, 1, "a real loop (our own marker) still alerts");
    assert.is(tg.logs.filter((l) => l.event === "gateway_routing_loop_detected").at(-1)!.marker, "own");
    // The chat post itself carries the deployment's marker, bound to the channel's host.
    assert.is(receiver.hops.length, 1);
    assert.ok(ours.isOwn(receiver.hops[0]!, receiverHost), "the alert post carries our marker for its host");
    assert.not.ok(ours.isOwn(receiver.hops[0]!, PASSTHROUGH), "and it is worth nothing on the gateway's own hosts");
  } finally {
    await receiver.close();
  }
});

test("a marker older than MARKER_MAX_AGE_SECONDS, or from a clock far ahead, is not the gateway's own", () => {
  let now = 1_800_000_000_000;
  const m = createHopMarker("secret", () => now);
  const value = m.forHost("API.Example.ng.:8443");
  assert.ok(m.isOwn(value, "api.example.ng"), "any Host form of the same host");
  now += 301_000;
  assert.not.ok(m.isOwn(value, "api.example.ng"), "expired");
  now -= 400_000;
  assert.not.ok(m.isOwn(value, "api.example.ng"), "made too far in this clock's future");
  now += 99_000;
  const fresh = m.forHost("api.example.ng");
  assert.ok(m.isOwn(fresh, "api.example.ng"));
  // A MAC whose last character carries stray bits decodes to the same bytes: only the canonical text counts.
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const alias = fresh.slice(0, -1) + alphabet[alphabet.indexOf(fresh.at(-1)!) + 1];
  assert.equal(Buffer.from(alias.split(".")[2]!, "base64url"), Buffer.from(fresh.split(".")[2]!, "base64url"));
  assert.not.ok(m.isOwn(alias, "api.example.ng"));
  assert.not.ok(m.isOwn(`${fresh} `, "api.example.ng"));
});

test.run();
