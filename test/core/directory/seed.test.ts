/**
 * The config file seeds the directory (decK-style, core/directory/seed.ts): missing records are
 * created, the file's own changes are applied, an operator's change is never overwritten by a seed
 * (only by --sync, which makes the store match the file exactly), and two processes seeding at once
 * converge. Runs on the embedded store with the in-process coordination, as `npm start` does.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { CoordinationStore, DocumentStore } from "../../../adapters/ports.ts";
import { hashSecret, openDirectory, type TenantDirectory } from "../../../core/directory.ts";
import { DIRECTORY_COLLECTIONS, openDirectoryStore, type DirectoryStore } from "../../../core/directory-store.ts";
import { createLogger, type LogFields } from "../../../core/log.ts";
import { credentialDoc } from "../../support/directory.ts";
import { ADMIN_KEY, DEMO_KEY, DEMO_RAW, OTHER, PASSTHROUGH, STORED, testConfig } from "../../support/gateway.ts";

interface Env {
  store: DocumentStore;
  coordination: CoordinationStore;
  ds: DirectoryStore;
  logs: LogFields[];
  open(patch?: Record<string, unknown>, sync?: boolean): Promise<TenantDirectory>;
  close(): Promise<void>;
}

async function env(): Promise<Env> {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const coordination = createMemoryCoordination();
  const logs: LogFields[] = [];
  const log = createLogger({ level: "debug", sink: (r) => logs.push(r) });
  const opened: TenantDirectory[] = [];
  return {
    store,
    coordination,
    ds: openDirectoryStore(store),
    logs,
    async open(patch = {}, sync = false) {
      const d = await openDirectory({ config: testConfig(patch), store, coordination, log, sync });
      opened.push(d);
      return d;
    },
    async close() {
      for (const d of opened) await d.close();
      await store.close();
      await coordination.close();
    },
  };
}

/** The demo config's businesses with `edit` applied to a copy. */
function businesses(edit: (b: any[]) => void): { businesses: unknown[] } {
  const raw = structuredClone(DEMO_RAW) as any;
  edit(raw.businesses);
  return { businesses: raw.businesses };
}

test("a fresh store is seeded with every business, domain and key of the file; keys are stored as hashes only", async () => {
  const e = await env();
  const d = await e.open();
  assert.equal(d.businesses().map((b) => b.id).sort(), ["demo", "demo-stored", "other"]);
  const domain = await d.loadDomain(PASSTHROUGH);
  assert.is(domain?.mode, "passthrough");
  assert.is(domain?.modeVersion, 1);
  assert.is(domain?.approval, "approved");
  assert.is(domain?.signFeeKobo, 5_000);
  assert.is((await d.loadDomain(STORED))?.mode, "stored");
  assert.is((await d.authenticate("apiKey", DEMO_KEY))?.credentialId, "demo-primary");
  assert.is((await d.authenticate("admin", ADMIN_KEY))?.credentialId, "demo-operator");
  assert.is(await d.authenticate("bearer", DEMO_KEY), null, "a gateway key is not a collections key");
  const dump = JSON.stringify(await e.ds.credentials.find({}));
  for (const key of [DEMO_KEY, ADMIN_KEY, "sk_test_demo_0001"]) assert.not.ok(dump.includes(key), "no plain key in the store");
  assert.ok(dump.includes(hashSecret(DEMO_KEY)));
  const audit = await e.ds.audit.find({});
  assert.ok(audit.items.length >= 10, "every created record is audited");
  assert.ok(audit.items.every((a) => a.actor === "config" && a.action === "seed.create"));
  await e.close();
});

test("seeding again changes nothing; a field the file changed (and no operator did) is applied", async () => {
  const e = await env();
  await e.open();
  const before = (await e.ds.domains.get(STORED))!;
  await e.open();
  assert.is((await e.ds.domains.get(STORED))!.rev, before.rev, "an unchanged file writes nothing");
  await e.open(businesses((b) => (b.find((x) => x.id === "demo-stored").gateway.domains[0].signFee = "75.00")));
  const after = (await e.ds.domains.get(STORED))!;
  assert.is(after.signFeeKobo, 7_500);
  assert.is(after.modeVersion, 1, "a fee is not a mode change");
  // A mode changed in the file is an approval in that mode: modeVersion + 1.
  await e.open(businesses((b) => ((b.find((x) => x.id === "demo-stored").gateway.domains[0].signFee = "75.00"), (b.find((x) => x.id === "demo-stored").gateway.domains[0].mode = "passthrough"))));
  const moved = (await e.ds.domains.get(STORED))!;
  assert.is(moved.mode, "passthrough");
  assert.is(moved.modeVersion, 2);
  await e.close();
});

test("an operator's change is never overwritten by a seed: kept and logged until the file agrees; --sync applies the file", async () => {
  const e = await env();
  await e.open();
  // An operator sets the fee and revokes a key (as the Admin API does: the stored value moves off its seed).
  await e.ds.domains.findOneAndUpdate({ _id: PASSTHROUGH }, { $set: { signFeeKobo: 6_000 }, $inc: { rev: 1 } });
  await e.ds.credentials.findOneAndUpdate({ credentialId: "demo-primary" }, { $set: { revoked: true }, $inc: { rev: 1 } });
  // The file now wants another fee, and changes autoTransmit, which no operator touched.
  const changed = businesses((b) => {
    b[0].gateway.domains[0].signFee = "55.00";
    b[0].gateway.domains[0].autoTransmit = true;
  });
  let d = await e.open(changed);
  let doc = (await e.ds.domains.get(PASSTHROUGH))!;
  assert.is(doc.signFeeKobo, 6_000, "the operator's fee stays");
  assert.is(doc.autoTransmit, true, "the file's untouched field is applied");
  assert.is(await d.authenticate("apiKey", DEMO_KEY), null, "the operator's revocation stays");
  const kept = e.logs.filter((l) => l.event === "directory_seed_kept_operator_change").map((l) => `${l.target} ${l.field}`);
  assert.ok(kept.includes(`domain ${PASSTHROUGH} signFeeKobo`), kept.join("; "));
  // A later boot with the same file still keeps it and still says so.
  e.logs.length = 0;
  await e.open(changed);
  assert.is((await e.ds.domains.get(PASSTHROUGH))!.signFeeKobo, 6_000);
  assert.ok(e.logs.some((l) => l.event === "directory_seed_kept_operator_change" && l.field === "signFeeKobo"));
  // --sync: the store matches the file.
  d = await e.open(changed, true);
  doc = (await e.ds.domains.get(PASSTHROUGH))!;
  assert.is(doc.signFeeKobo, 5_500);
  assert.is((await d.authenticate("apiKey", DEMO_KEY))?.credentialId, "demo-primary", "the file does not revoke it: --sync un-revokes");
  const syncAudit = (await e.ds.audit.find({ actor: "config-sync" })).items;
  assert.ok(syncAudit.some((a) => a.target.id === PASSTHROUGH && a.action === "sync.update"));
  await e.close();
});

test("--sync deletes what the file does not name (an operator's key, a domain); a seed leaves them", async () => {
  const e = await env();
  await e.open();
  await e.ds.credentials.insert(credentialDoc("gw_test_operator_made_0001", { credentialId: "demo-extra", scheme: "apiKey", businessId: "demo" }));
  const withoutOther = businesses((b) => b.find((x) => x.id === "other").gateway.domains.splice(0, 1));
  let d = await e.open(withoutOther);
  assert.ok(await e.ds.domains.get(OTHER), "a seed never deletes");
  assert.is((await d.authenticate("apiKey", "gw_test_operator_made_0001"))?.credentialId, "demo-extra");
  d = await e.open(withoutOther, true);
  assert.is(await e.ds.domains.get(OTHER), null, "--sync deletes the domain the file dropped");
  assert.is(await d.loadDomain(OTHER), null);
  assert.is(await d.authenticate("apiKey", "gw_test_operator_made_0001"), null, "--sync deletes the operator's key");
  assert.ok((await e.ds.audit.find({ action: "sync.delete" })).items.length === 2);
  await e.close();
});

test("a key the file replaces under the same id: the old key stops working, the new one works", async () => {
  const e = await env();
  await e.open();
  const d = await e.open(
    businesses((b) => {
      b[0].gateway.apiKeys[0].key = "gw_demo_key_0002";
    }),
  );
  assert.is(await d.authenticate("apiKey", DEMO_KEY), null);
  assert.is((await d.authenticate("apiKey", "gw_demo_key_0002"))?.credentialId, "demo-primary");
  assert.is((await e.ds.credentials.find({ credentialId: "demo-primary" })).items.length, 1);
  await e.close();
});

test("two processes seeding one store at once converge: one record each, every key works", async () => {
  const e = await env();
  const [a, b] = await Promise.all([e.open(), e.open()]);
  for (const name of [DIRECTORY_COLLECTIONS.businesses, DIRECTORY_COLLECTIONS.domains, DIRECTORY_COLLECTIONS.credentials]) {
    const items = (await e.store.collection(name).find({})).items;
    assert.is(new Set(items.map((i) => i._id)).size, items.length, `${name}: no duplicate`);
  }
  assert.is((await e.ds.domains.find({})).items.length, 3);
  assert.is((await a.authenticate("apiKey", DEMO_KEY))?.credentialId, "demo-primary");
  assert.is((await b.authenticate("apiKey", DEMO_KEY))?.credentialId, "demo-primary");
  await e.close();
});

test("a change announced by one directory reaches another process's cache at once (no TTL wait)", async () => {
  const e = await env();
  const a = await e.open({ directory: { domainCacheTtlMs: 3_600_000 } });
  const b = await e.open({ directory: { domainCacheTtlMs: 3_600_000 } });
  const cached = await b.loadDomain(PASSTHROUGH);
  assert.is(b.cachedDomain(PASSTHROUGH)?.signFeeKobo, 5_000);
  const updated = await e.ds.domains.findOneAndUpdate(
    { _id: PASSTHROUGH },
    { $set: { signFeeKobo: 9_900, modeVersion: 2 }, $inc: { rev: 1 } },
  );
  await a.changed({ kind: "domain", id: PASSTHROUGH, modeVersion: updated!.modeVersion });
  assert.is(b.isCurrent(cached!), false, "the other process refuses a request authorized under modeVersion 1");
  for (let i = 0; i < 100 && b.cachedDomain(PASSTHROUGH)?.signFeeKobo !== 9_900; i++) await new Promise((r) => setTimeout(r, 5));
  assert.is(b.cachedDomain(PASSTHROUGH)?.signFeeKobo, 9_900, "reloaded after the message, long before the TTL");
  await e.close();
});

test.run();
