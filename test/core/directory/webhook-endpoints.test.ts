/**
 * Webhook endpoints in the directory: the config's `webhook` entries seed endpoints; a config change
 * applies unless the endpoint was changed at run time (then it is kept and warned about at every
 * boot; --sync applies the file); an entry dropped from the file deletes its unedited endpoint;
 * a change made in one process reaches another's snapshot through the change feed.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { openDirectory, type TenantDirectory } from "../../../core/directory.ts";
import { createLogger, type LogFields } from "../../../core/log.ts";
import { DEMO_RAW, testConfig } from "../../support/gateway.ts";
import { eventually } from "../../support/webhook-receiver.ts";

const BY = { actor: "user:test", requestId: null };
const SECRET_A = "whsec_QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB";
const SECRET_B = "whsec_QkJCQkJCQkJCQkJCQkJCQkJCQkJCQkJC";

async function env() {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  const coordination = createMemoryCoordination();
  const logs: LogFields[] = [];
  const log = createLogger({ level: "debug", sink: (r) => logs.push(r) });
  const opened: TenantDirectory[] = [];
  return {
    logs,
    async open(hook: { url: string; secret: string } | null, sync = false): Promise<TenantDirectory> {
      const raw = structuredClone(DEMO_RAW) as any;
      const demo = raw.businesses.find((b: { id: string }) => b.id === "demo");
      if (hook) demo.collections.webhook = hook;
      const d = await openDirectory({ config: testConfig({ businesses: raw.businesses }), store, coordination, log, sync });
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

test("config entries seed endpoints; file changes apply unless edited at run time (kept, warned; --sync applies the file)", async () => {
  const e = await env();
  try {
    const d1 = await e.open({ url: "https://a.example/hooks", secret: SECRET_A });
    const [seeded] = await d1.webhooks.list("demo");
    assert.is(seeded!.id, "cfg-collections-demo");
    assert.is(seeded!.source, "config");
    assert.equal(d1.webhooks.targets("demo", "collections"), [{ id: "cfg-collections-demo", url: "https://a.example/hooks" }]);
    assert.equal(d1.webhooks.targets("demo", "invoice"), []);

    // The file changes url and secret, nobody edited the endpoint: both applied.
    const d2 = await e.open({ url: "https://b.example/hooks", secret: SECRET_B });
    assert.is((await d2.webhooks.get("demo", "cfg-collections-demo"))!.url, "https://b.example/hooks");
    assert.is((await d2.webhooks.revealSecret(BY, "demo", "cfg-collections-demo"))!.secret, SECRET_B);

    // Edited in the dashboard, then the file changes again: the dashboard's url and rotated secret stay.
    await d2.webhooks.update(BY, "demo", "cfg-collections-demo", { url: "https://dash.example/hooks" });
    await d2.webhooks.rotate(BY, "demo", "cfg-collections-demo");
    const rotated = (await d2.webhooks.revealSecret(BY, "demo", "cfg-collections-demo"))!.secret;
    const d3 = await e.open({ url: "https://c.example/hooks", secret: SECRET_A });
    assert.is((await d3.webhooks.get("demo", "cfg-collections-demo"))!.url, "https://dash.example/hooks");
    assert.is((await d3.webhooks.revealSecret(BY, "demo", "cfg-collections-demo"))!.secret, rotated);
    const kept = e.logs.filter((l) => (l.msg ?? l.event) === "directory_seed_kept_operator_change").map((l) => l.field);
    assert.ok(kept.includes("url") && kept.includes("secret"), `warned: ${kept.join(", ")}`);

    // Dropped from the file while edited: kept. --sync applies the file (and deletes what it no longer names).
    await e.open(null);
    assert.ok(await d3.webhooks.get("demo", "cfg-collections-demo"), "an edited endpoint outlives its file entry");
    const synced = await e.open({ url: "https://c.example/hooks", secret: SECRET_A }, true);
    const after = (await synced.webhooks.get("demo", "cfg-collections-demo"))!;
    assert.is(after.url, "https://c.example/hooks");
    assert.is(after.secrets.length, 1);
    const again = await e.open(null);
    assert.is(await again.webhooks.get("demo", "cfg-collections-demo"), null, "an unedited endpoint goes with its file entry");
  } finally {
    await e.close();
  }
});

test("an endpoint added, disabled or enabled in one process reaches another's targets through the change feed", async () => {
  const e = await env();
  try {
    const a = await e.open(null);
    const b = await e.open(null);
    const ep = await a.webhooks.create(BY, "demo", { url: "https://new.example/hooks", services: ["invoice"] });
    assert.equal(a.webhooks.targets("demo", "invoice").map((t) => t.id), [ep.id], "at once in the writing process");
    await eventually(() => b.webhooks.targets("demo", "invoice").length === 1, 2000, "the other process");
    await a.webhooks.update(BY, "demo", ep.id, { enabled: false });
    await eventually(() => b.webhooks.targets("demo", "invoice").length === 0, 2000, "disabled in the other process");
    await b.webhooks.update(BY, "demo", ep.id, { enabled: true, url: "https://moved.example/hooks" });
    await eventually(() => a.webhooks.targets("demo", "invoice")[0]?.url === "https://moved.example/hooks", 2000, "edited in the first process");
  } finally {
    await e.close();
  }
});

test.run();
