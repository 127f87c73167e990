/**
 * The regulator's inbound route authenticates before it parses, over a real socket: the HMAC is
 * checked over the raw bytes first (a body that is not even JSON, or nested past the JSON shape
 * limits, answers 401 when unsigned, never a parse error), only a canonical base64 signature counts,
 * and one client address gets `stored.inbound.admission` requests per window (429 + Retry-After),
 * before its body is read.
 */
import { createHmac } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { signDelivery } from "../../../adapters/regulator/simulator/inbound.ts";
import { gatewayTracker } from "../../support/gateway.ts";
import { httpCall } from "../../support/raw-http.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

const SECRET = "inbound-auth-secret";
const PATH = "/regulator/inbound-invoices";

async function gateway(admission = { perClient: 1_000, windowSeconds: 10 }) {
  const tg = await start({ patch: { regulator: { apiSecret: SECRET }, stored: { inbound: { admission } } } });
  const server = await tg.listen();
  const post = (body: string, signature: string | null, ts = Math.floor(Date.now() / 1000)) =>
    httpCall(server.url, PATH, {
      method: "POST",
      host: "127.0.0.1",
      headers: { "content-type": "application/json", "x-regulator-timestamp": String(ts), ...(signature === null ? {} : { "x-regulator-signature": signature }) },
      body,
    });
  return { tg, post, url: server.url };
}

const code = (r: { json(): unknown }) => (r.json() as { code: string }).code;

test("an unsigned body is refused before it is parsed: not JSON, too deep, or a valid delivery, all 401", async () => {
  const { post } = await gateway();
  const wrong = `v1,${createHmac("sha256", "not-the-secret").update("x").digest("base64")}`;
  for (const body of ["{not json", "[".repeat(5_000) + "]".repeat(5_000), JSON.stringify({ delivery_id: "d-1" })]) {
    const r = await post(body, wrong);
    assert.is(r.status, 401, body.slice(0, 20));
    assert.is(code(r), "GW_API_KEY_INVALID");
  }
  // Signed, the same malformed text reaches the parser (and only then).
  const ts = Math.floor(Date.now() / 1000);
  const parsed = await post("{not json", signDelivery(SECRET, ts, "{not json"), ts);
  assert.is(parsed.status, 400);
  assert.is(code(parsed), "GW_REQUEST_INVALID_JSON");
});

test("only a canonical base64 signature counts (the same bytes in another spelling do not)", async () => {
  const { post } = await gateway();
  const ts = Math.floor(Date.now() / 1000);
  const body = "{not json";
  const good = signDelivery(SECRET, ts, body);
  const b64 = good.slice(3);
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const strayBits = b64.slice(0, 42) + alphabet[alphabet.indexOf(b64[42]!) + 1] + "=";
  assert.equal(Buffer.from(strayBits, "base64"), Buffer.from(b64, "base64"), "decodes to the same MAC");
  const urlSafe = b64.replaceAll("+", "-").replaceAll("/", "_");
  for (const spelling of [b64.slice(0, 43), `${b64}=`, strayBits, ...(urlSafe === b64 ? [] : [urlSafe]), `${b64.slice(0, 20)} ${b64.slice(20)}`, `${b64.slice(0, 43)}*`]) {
    const r = await post(body, `v1,${spelling}`, ts);
    assert.is(r.status, 401, JSON.stringify(spelling));
  }
  assert.is((await post(body, good, ts)).status, 400, "the canonical spelling verifies (and the body then fails to parse)");
});

test("one client address gets stored.inbound.admission requests per window: then 429 with Retry-After, unread", async () => {
  const { url, post } = await gateway({ perClient: 5, windowSeconds: 60 });
  const statuses: number[] = [];
  for (let i = 0; i < 7; i++) statuses.push((await post("{}", "v1,AAAA")).status);
  assert.equal(statuses, [401, 401, 401, 401, 401, 429, 429]);
  const last = await post("{}", "v1,AAAA");
  assert.is(code(last), "GW_RATE_LIMIT_EXCEEDED");
  assert.ok(Number(last.headers["retry-after"]) >= 1);
  // Other routes from the same address are not limited by it.
  for (let i = 0; i < 7; i++) assert.is.not((await httpCall(url, "/health", { host: "127.0.0.1" })).status, 429);
});

test.run();
