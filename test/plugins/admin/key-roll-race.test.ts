/**
 * Concurrent rolls of one key, over real sockets: exactly one wins (201); every other answers 409
 * with a strategy that tells the truth (AFTER_CORRECTION: read the key and decide again; sending
 * the same request again would not help), never the 503 "send the same request again" of a
 * dependency outage. A loser's never-shown new key does not stay behind, and a revoke that races a
 * roll still revokes.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DIRECTORY_COLLECTIONS, type CredentialDoc } from "../../../core/directory-store.ts";
import { problem, startAdminHarness, type AdminHarness } from "./admin-helpers.ts";

let h: AdminHarness;
test.before(async () => {
  h = await startAdminHarness();
});
test.after(async () => {
  await h.close();
});
test.before.each(() => h.fault(null));

/** New keys are stored slowly: every concurrent request has read the old key before any of them writes. */
const slowIssue = () => h.fault((collection, method) => (collection === DIRECTORY_COLLECTIONS.credentials && method === "insert" ? "slow" : null));

test("four concurrent rolls of one key: one 201, three 409 AFTER_CORRECTION; only the winner's new key exists", async () => {
  assert.is((await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-raced" }, "race-setup-0001")).status, 201);
  slowIssue();
  const until = new Date(Date.now() + 3_600_000).toISOString();
  const answers = await Promise.all([1, 2, 3, 4].map((i) => h.admin("POST", "/admin/keys/demo-raced/roll", { oldKeyExpiresAt: until }, `race-roll-000${i}`)));
  h.fault(null);
  const won = answers.filter((a) => a.status === 201);
  const lost = answers.filter((a) => a.status !== 201);
  assert.is(won.length, 1, answers.map((a) => `${a.status} ${a.text.slice(0, 120)}`).join("\n"));
  assert.is(lost.length, 3);
  for (const a of lost) {
    const p = problem(a, 409, "GW_DOMAIN_APPROVAL_STATE_CHANGED");
    assert.is(p.retry.strategy, "AFTER_CORRECTION");
    assert.is(p.retry.sameIdempotencyKey, false);
    assert.match(p.detail, /The key changed while this request ran/);
    assert.is(p.title, "Key changed while this request ran", "the title names the key, not a domain");
  }
  const rolledFrom = (await h.all<CredentialDoc>(DIRECTORY_COLLECTIONS.credentials)).filter((c) => c.rolledFrom === "demo-raced");
  assert.equal(rolledFrom.map((c) => c.credentialId), [won[0]!.body.key.id], "the losers' never-shown keys were withdrawn");
  // What a loser's retry with its idempotency key answers now: the truth (already rolled), not a success it never had.
  // Any of the four may win the race: the retry uses a loser's key.
  const loser = answers.findIndex((a) => a.status !== 201) + 1;
  problem(await h.admin("POST", "/admin/keys/demo-raced/roll", { oldKeyExpiresAt: until }, `race-roll-000${loser}`), 400, "GW_REQUEST_VALIDATION_FAILED");
});

test("a revoke that races a roll still revokes the key", async () => {
  assert.is((await h.admin("POST", "/admin/keys", { scheme: "gateway", businessId: "demo", id: "demo-raced-2" }, "race-setup-0002")).status, 201);
  slowIssue();
  const until = new Date(Date.now() + 3_600_000).toISOString();
  const roll = h.admin("POST", "/admin/keys/demo-raced-2/roll", { oldKeyExpiresAt: until }, "race-roll-0010");
  await new Promise((r) => setTimeout(r, 50));
  const revoke = await h.admin("POST", "/admin/keys/demo-raced-2/revoke", {}, "race-revoke-0001");
  await roll;
  h.fault(null);
  assert.is(revoke.status, 200, revoke.text);
  assert.is(revoke.body.key.status, "revoked");
});

test.run();
