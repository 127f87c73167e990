/**
 * QR material: optional at onboarding (cryptoVersion 1, else 0) and rotated by
 * POST /sub-businesses/:id/reg-crypto-material — one increment per accepted replacement, none for a
 * replay of the same key, compare-and-set on the version (a stale `expectedCryptoVersion` proof is
 * refused), and never the material itself in an answer.
 */
import { createHash } from "node:crypto";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { COLLECTIONS } from "../../../plugins/onboarding/store.ts";
import { MULTI, OTHER, OTHER_KEY, TAXPAYER, credentials, expectJson, expectProblem, startOnboardingHarness } from "./onboarding-helpers.ts";

const h = await startOnboardingHarness();
const LOGISTICS: string = MULTI.logistics.id;
const rotate = (body: unknown, idemKey: string | null, id = LOGISTICS, init: { apiKey?: string; host?: string } = {}) =>
  h.post(`/sub-businesses/${id}/reg-crypto-material`, body, idemKey, init);
const b64 = (text: string) => Buffer.from(text).toString("base64");
/** QR material as the regulator hands it out: base64 text (here of PEM-like text). */
const material = (n: number) => ({ publicKey: b64(`-----PUBLIC KEY ${n}-----`), certificate: b64(`-----CERTIFICATE ${n}-----`) });
const fingerprintOf = (m: { publicKey: string; certificate: string }) =>
  "sha256:" + createHash("sha256").update(`${m.publicKey}\n${m.certificate}`).digest("hex");
const version = async (id = LOGISTICS) => (await expectJson(await h.get(`/sub-businesses/${id}`), 200)).cryptoVersion as number;

test("QR material at onboarding → cryptoVersion 1 and its fingerprint; without it → 0", async () => {
  const m = material(0);
  const res = await h.post("/sub-businesses", { ...credentials(TAXPAYER.email, TAXPAYER.password), cryptoMaterial: m }, "crypto-onboard-01");
  const text = await res.clone().text();
  const sb = await expectJson(res, 201);
  assert.is(sb.cryptoVersion, 1);
  assert.is(sb.cryptoFingerprint, fingerprintOf(m));
  assert.not.ok(text.includes(m.publicKey) || text.includes(m.certificate), "the material itself is never answered");
  // A completed replay may omit the QR material (and the credentials).
  assert.equal(await expectJson(await h.post("/sub-businesses", {}, "crypto-onboard-01"), 200), sb);
  const plain = await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: MULTI.logistics.tin }, "crypto-onboard-02");
  const lb = await expectJson(plain, 201);
  assert.is(lb.cryptoVersion, 0);
  assert.is(lb.cryptoFingerprint, null);
});

test("a rotation increments once; the same key replays without incrementing; other content on the key → 409", async () => {
  const r1 = await expectJson(await rotate(material(1), "rotate-key-0001"), 200);
  assert.is(r1.cryptoVersion, 1);
  assert.is(r1.cryptoFingerprint, fingerprintOf(material(1)));
  const calls = h.sim.state.totalCalls();
  assert.equal(await expectJson(await rotate(material(1), "rotate-key-0001"), 200), r1);
  assert.is(await version(), 1);
  await expectProblem(await rotate(material(2), "rotate-key-0001"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  await expectProblem(await rotate({ ...material(1), expectedCryptoVersion: 0 }, "rotate-key-0001"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(await version(), 1);
  assert.is(h.sim.state.totalCalls(), calls, "rotation never calls the regulator");
});

test("identical material with a NEW key is another replacement (spec §7.2 exception 1)", async () => {
  const r = await expectJson(await rotate(material(1), "rotate-key-0002"), 200);
  assert.is(r.cryptoVersion, 2);
});

test("the rotation proof: expectedCryptoVersion not current → 409 GW_IDEMPOTENCY_CONTENT_CONFLICT; current → applied", async () => {
  const p = await expectProblem(await rotate({ ...material(3), expectedCryptoVersion: 1 }, "rotate-key-0003"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(p.retry.strategy, "DO_NOT_RETRY");
  assert.is(await version(), 2);
  const ok = await expectJson(await rotate({ ...material(3), expectedCryptoVersion: 2 }, "rotate-key-0004"), 200);
  assert.is(ok.cryptoVersion, 3);
  // A consumed proof stays consumed.
  await expectProblem(await rotate({ ...material(4), expectedCryptoVersion: 2 }, "rotate-key-0005"), 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
});

test("two concurrent different rotations on the same proof: exactly one applies", async () => {
  const base = await version();
  const results = await Promise.all(
    [5, 6, 7, 8].map((n) => rotate({ ...material(n), expectedCryptoVersion: base }, `rotate-race-${n}0000`)),
  );
  const statuses = results.map((r) => r.status).sort();
  assert.equal(statuses, [200, 409, 409, 409]);
  for (const r of results.filter((x) => x.status === 409)) await expectProblem(r, 409, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  assert.is(await version(), base + 1);
});

test("concurrent rotations without a proof each apply on their own base: distinct versions, no lost update", async () => {
  const base = await version();
  const results = await Promise.all([9, 10, 11].map((n) => rotate(material(n), `rotate-free-${n}0000`)));
  const versions = await Promise.all(results.map(async (r) => (await expectJson(r, 200)).cryptoVersion as number));
  assert.equal(versions.sort((a, b) => a - b), [base + 1, base + 2, base + 3]);
  assert.is(await version(), base + 3);
});

test("concurrent duplicates of one rotation (same key, same content): one increment", async () => {
  const base = await version();
  const results = await Promise.all([1, 2, 3].map(() => rotate(material(12), "rotate-dupes-0001")));
  const bodies = await Promise.all(results.map((r) => r.json()));
  assert.ok(results.every((r) => r.status === 200));
  assert.ok(bodies.every((b) => b.cryptoVersion === base + 1));
  assert.is(await version(), base + 1);
});

test("every accepted version is kept in the history; answers never carry the material", async () => {
  const current = await version();
  const history = await h.store.collection(COLLECTIONS.crypto).find({ gatewaySubBusinessId: LOGISTICS }, { limit: 100 });
  assert.equal(history.items.map((d) => d.version).sort((a, b) => Number(a) - Number(b)), Array.from({ length: current }, (_, i) => i + 1));
  const v = await h.get(`/sub-businesses/${LOGISTICS}/identity-versions`);
  const text = await v.text();
  assert.not.ok(text.includes("PUBLIC KEY") || text.includes("CERTIFICATE"));
});

test("rotation refusals: body, ownership, unknown business, key", async () => {
  const p = await expectProblem(await rotate({ publicKey: "" }, "rotate-bad-00001"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(p.errors.map((e: { pointer: string }) => e.pointer).sort(), ["/certificate", "/publicKey"]);
  await expectProblem(await rotate({ ...material(1), expectedCryptoVersion: -1 }, "rotate-bad-00002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  await expectProblem(await rotate(material(1), "rotate-bad-00003", LOGISTICS, { apiKey: OTHER_KEY, host: OTHER }), 403, "GW_SUB_BUSINESS_FORBIDDEN");
  await expectProblem(await rotate(material(1), "rotate-bad-00004", "no-such-business"), 404, "GW_SUB_BUSINESS_NOT_FOUND");
  await expectProblem(await rotate(material(1), null), 400, "GW_IDEMPOTENCY_KEY_REQUIRED");
});

test("QR material that is not base64 (the docs' placeholder, a raw PEM) → 400 GW_REQUEST_VALIDATION_FAILED naming the field, at rotation and onboarding; nothing recorded", async () => {
  const before = await version();
  const placeholder = { publicKey: "<base64 public key>", certificate: material(9).certificate };
  const p = await expectProblem(await rotate(placeholder, "rotate-b64-00001"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(p.errors.map((e: { location: string; pointer: string; code: string }) => [e.location, e.pointer, e.code]), [["body", "/publicKey", "FORMAT"]]);
  assert.not.ok(JSON.stringify(p).includes("<base64 public key>"), "the value is not repeated");
  const pem = { publicKey: material(9).publicKey, certificate: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----" };
  const q = await expectProblem(await rotate(pem, "rotate-b64-00002"), 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(q.errors.map((e: { pointer: string }) => e.pointer), ["/certificate"]);
  const onboard = await h.post("/sub-businesses", { ...credentials(MULTI.email, MULTI.password), tin: MULTI.retail.tin, cryptoMaterial: placeholder }, "crypto-b64-onboard-01");
  const o = await expectProblem(onboard, 400, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(o.errors.map((e: { pointer: string }) => e.pointer), ["/cryptoMaterial/publicKey"]);
  assert.is(await version(), before, "nothing recorded");
  // Wrapped base64 (line breaks) is base64.
  const wrapped = { publicKey: `${material(9).publicKey.slice(0, 8)}\n${material(9).publicKey.slice(8)}`, certificate: material(9).certificate };
  assert.is((await rotate(wrapped, "rotate-b64-00003")).status, 200);
});

test.after(() => h.close());
test.run();
