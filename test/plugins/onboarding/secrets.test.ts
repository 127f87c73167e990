/**
 * Transient credentials stay transient (spec §1, §5.8): after onboarding, replays, refusals,
 * reverification and rotation with every demo and test taxpayer, no password, taxpayer e-mail or
 * raw idempotency key appears in any log record or in any document of any collection (read raw from
 * the memory store), and no QR material appears in a log.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { OnboardingHarness } from "./onboarding-helpers.ts";
import { ALL_TAXPAYER_SECRETS, MULTI, TAXPAYER, credentials, expectJson, startOnboardingHarness } from "./onboarding-helpers.ts";

const DEMO_LOGINS: Array<[string, string, string?]> = [
  [TAXPAYER.email, TAXPAYER.password],
  [MULTI.email, MULTI.password],
  [MULTI.email, MULTI.password, MULTI.retail.tin],
  ["inactive@demo.ng", "demo-password-3"],
  ["notemplate@demo.ng", "demo-password-4"],
  ["unlinked@demo.ng", "demo-password-5"],
  [TAXPAYER.email, "wrong-password-1"],
];
const TEST_LOGINS: Array<[string, string, string?]> = [
  ["solo@test.ng", "test-password-solo"],
  ["multi@test.ng", "test-password-multi", "20000002-0002"],
  ["dup-tin@test.ng", "test-password-dup"],
  ["noactive@test.ng", "test-password-noactive"],
  ["inactive@test.ng", "test-password-inactive"],
  ["missing-template@test.ng", "test-password-missing"],
  ["null-template@test.ng", "test-password-null"],
  ["long-metadata@test.ng", "test-password-long"],
  ["bad-metadata@test.ng", "test-password-bad"],
  ["unlinked@test.ng", "test-password-unlinked"],
  ["ghost@test.ng", "test-password-ghost"],
];
const KEYS: string[] = [];
const MATERIAL = { publicKey: "MATERIAL-PUBLIC-KEY-BODY", certificate: "MATERIAL-CERTIFICATE-BODY1" }; // base64 text (the QR material is refused otherwise)

async function exercise(h: OnboardingHarness, logins: Array<[string, string, string?]>, prefix: string): Promise<string[]> {
  const onboarded: string[] = [];
  for (const [i, [email, password, tin]] of logins.entries()) {
    const key = `${prefix}-secret-key-${i}-Zq9`;
    KEYS.push(key);
    const body = { ...credentials(email, password), ...(tin ? { tin } : {}), ...(i === 0 ? { cryptoMaterial: MATERIAL } : {}) };
    const res = await h.post("/sub-businesses", body, key);
    const text = await res.text();
    for (const s of [password, email]) assert.not.ok(text.includes(s), `answer to ${email} leaks a credential`);
    if (res.status === 201) {
      onboarded.push(JSON.parse(text).gatewaySubBusinessId);
      await h.post("/sub-businesses", body, key); // replay
    }
  }
  for (const [i, id] of onboarded.entries()) {
    const [email, password] = logins[i]!;
    const key = `${prefix}-reverify-${i}-Zq9`;
    KEYS.push(key);
    await expectJson(await h.post(`/sub-businesses/${id}/identity-reverification`, credentials(email, password), key), 200);
    const rk = `${prefix}-rotate-${i}-Zq9`;
    KEYS.push(rk);
    await expectJson(await h.post(`/sub-businesses/${id}/reg-crypto-material`, MATERIAL, rk), 200);
  }
  return onboarded;
}

function assertClean(label: string, text: string, forbidden: readonly string[]): void {
  for (const s of forbidden) assert.not.ok(text.includes(s), `${label} contains "${s}"`);
}

test("demo taxpayers: nothing secret in logs or stored documents", async () => {
  const h = await startOnboardingHarness();
  const onboarded = await exercise(h, DEMO_LOGINS, "demo");
  assert.equal(onboarded, [TAXPAYER.businessId, MULTI.retail.id]);
  const logs = JSON.stringify(h.tg.logs);
  const store = await h.dumpStore();
  assert.ok(store.includes(TAXPAYER.businessId), "the dump holds the stored documents");
  assert.ok(h.collections.size >= 6);
  assertClean("logs", logs, [...ALL_TAXPAYER_SECRETS, "wrong-password-1", ...KEYS, MATERIAL.publicKey, MATERIAL.certificate]);
  assertClean("store", store, [...ALL_TAXPAYER_SECRETS, "wrong-password-1", ...KEYS]);
  assert.ok(h.tg.logs.some((l) => l.event === "onboarding_sub_business_created"));
  assert.ok(h.tg.logs.some((l) => l.event === "gateway_dependency_call" && l.operation === "authenticate"));
  await h.close();
});

test("test-fixture taxpayers (every refusal path): nothing secret in logs or stored documents", async () => {
  const h = await startOnboardingHarness({ fixtures: "test" });
  const onboarded = await exercise(h, TEST_LOGINS, "test");
  assert.equal(onboarded, ["b1000000-0000-4000-8000-000000000101", "b1000000-0000-4000-8000-000000000202"]);
  const logs = JSON.stringify(h.tg.logs);
  const store = await h.dumpStore();
  assertClean("logs", logs, [...ALL_TAXPAYER_SECRETS, ...KEYS, MATERIAL.publicKey, MATERIAL.certificate]);
  assertClean("store", store, [...ALL_TAXPAYER_SECRETS, ...KEYS]);
  await h.close();
});

test.run();
