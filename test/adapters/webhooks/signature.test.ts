import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHmac } from "node:crypto";
import { signWebhook, webhookHeaders } from "../../../adapters/webhooks/signature.ts";
import { verifyWebhook } from "../../../client/webhooks.ts";

const KEY_BYTES = Buffer.from("0123456789abcdef0123456789abcdef", "utf8");
const WHSEC = `whsec_${KEY_BYTES.toString("base64")}`;
const ID = "msg_2LJvK8cYdJmv3k3x4f";
const TS = 1_700_000_000;
const BODY = JSON.stringify({ event_type: "CHECKOUT_COMPLETED", data: { amount: 1500, note: "naïra ₦" } });
const NOW = TS * 1000;

function byHand(key: Buffer, id: string, ts: number, body: string): string {
  return "v1," + createHmac("sha256", key).update(`${id}.${ts}.${body}`).digest("base64");
}

test("whsec_ secret: the key is the base64-decoded rest (matches a hand-computed HMAC)", () => {
  assert.is(signWebhook(WHSEC, ID, TS, BODY), byHand(KEY_BYTES, ID, TS, BODY));
});

test("plain secret: the key is the UTF-8 string", () => {
  assert.is(signWebhook("s3cret-plain", ID, TS, BODY), byHand(Buffer.from("s3cret-plain"), ID, TS, BODY));
  assert.is.not(signWebhook("s3cret-plain", ID, TS, BODY), signWebhook(WHSEC, ID, TS, BODY));
});

test("Standard Webhooks reference vector", () => {
  // From the Standard Webhooks reference libraries' test suite.
  const sig = signWebhook(
    "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    "msg_p5jXN8AQM9LWM0D4loKWxJek",
    1614265330,
    '{"test": 2432232314}',
  );
  assert.is(sig, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
});

test("bytes and string bodies sign the same", () => {
  assert.is(signWebhook(WHSEC, ID, TS, Buffer.from(BODY, "utf8")), signWebhook(WHSEC, ID, TS, BODY));
});

test("verify accepts a good signature (plain record, Headers, mixed-case names)", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  assert.ok(verifyWebhook(WHSEC, h, BODY, { now: NOW }));
  assert.ok(verifyWebhook(WHSEC, new Headers(h), BODY, { now: NOW + 299_000 }));
  const mixed = { "Webhook-Id": h["webhook-id"], "Webhook-Timestamp": h["webhook-timestamp"], "Webhook-Signature": h["webhook-signature"] };
  assert.ok(verifyWebhook(WHSEC, mixed, Buffer.from(BODY), { now: NOW }));
});

test("verify accepts any of several space-separated signatures", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  const other = signWebhook("whsec_" + Buffer.from("another key").toString("base64"), ID, TS, BODY);
  const headers = { ...h, "webhook-signature": `v2,abc ${other} ${h["webhook-signature"]}` };
  assert.ok(verifyWebhook(WHSEC, headers, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-signature": `v1,abc ${other}` }, BODY, { now: NOW }));
});

test("verify rejects a tampered body, id or timestamp", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  assert.not.ok(verifyWebhook(WHSEC, h, BODY.replace("1500", "15000"), { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, h, BODY + " ", { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-id": "msg_other" }, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-timestamp": String(TS + 1) }, BODY, { now: NOW }));
});

test("verify rejects the wrong secret", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  assert.not.ok(verifyWebhook("whsec_" + Buffer.from("wrong").toString("base64"), h, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook("plain-wrong", h, BODY, { now: NOW }));
});

test("verify rejects old and future timestamps outside the tolerance", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  assert.not.ok(verifyWebhook(WHSEC, h, BODY, { now: NOW + 301_000 }));
  assert.not.ok(verifyWebhook(WHSEC, h, BODY, { now: NOW - 301_000 }));
  assert.ok(verifyWebhook(WHSEC, h, BODY, { now: NOW + 3_000_000, toleranceSeconds: 3600 }));
  // Default `now` is the real clock: a 2023 timestamp is far too old.
  assert.not.ok(verifyWebhook(WHSEC, h, BODY));
  const fresh = Math.floor(Date.now() / 1000);
  assert.ok(verifyWebhook(WHSEC, webhookHeaders(WHSEC, ID, fresh, BODY), BODY));
});

test("verify rejects missing or malformed headers without throwing", () => {
  const h = webhookHeaders(WHSEC, ID, TS, BODY);
  for (const name of ["webhook-id", "webhook-timestamp", "webhook-signature"] as const) {
    const copy: Record<string, string> = { ...h };
    delete copy[name];
    assert.not.ok(verifyWebhook(WHSEC, copy, BODY, { now: NOW }), `missing ${name}`);
  }
  assert.not.ok(verifyWebhook(WHSEC, {}, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-timestamp": "17e8" }, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-signature": "garbage" }, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-signature": "v1," }, BODY, { now: NOW }));
  assert.not.ok(verifyWebhook(WHSEC, { ...h, "webhook-signature": h["webhook-signature"].replace("v1,", "v1a,") }, BODY, { now: NOW }));
});

test.run();
