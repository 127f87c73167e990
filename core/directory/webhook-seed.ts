/**
 * Seeding webhook endpoints from the config file's `collections.webhook` and `gateway.webhook`
 * entries (docs/webhooks.md "Endpoints and the config file"). Each entry is the endpoint
 * "cfg-<service>-<business>"; its url and secret follow a three-way merge with `seed`, as domains do:
 *
 * - the file changed a field since it was last applied and nobody changed it at run time: applied;
 * - it was changed at run time (the dashboard edited the url, rotated the secret): kept, and
 *   `directory_seed_kept_operator_change` is logged at every boot until the file agrees or --sync;
 * - the file dropped the entry: the endpoint is deleted unless it was changed at run time (kept, warned).
 *
 * Enabled/disabled, the description and the services are run-time state the file does not declare.
 * --sync makes url and secret match the file (dropping rotated secrets) and deletes the seeded
 * endpoints the file no longer names; endpoints added at run time are never touched by the file.
 */
import type { Config } from "../../config/schema.ts";
import { converge, keepOperatorChange, seedAudit, seedIso, updateRecord, type SeedRun } from "./seed-run.ts";
import { seededEndpointId, type WebhookEndpointDoc } from "./webhook-store.ts";
import type { WebhookService } from "./webhook-types.ts";

export async function seedWebhookEndpoints(run: SeedRun, config: Config): Promise<void> {
  for (const b of config.businesses) {
    const entries: Array<[WebhookService, { url: string; secret: string } | undefined]> = [
      ["collections", b.collections?.webhook],
      ["invoice", b.gateway?.webhook],
    ];
    for (const [service, hook] of entries) {
      const id = seededEndpointId(b.id, service);
      await converge(`webhook endpoint ${id}`, () => (hook ? _seed(run, b.id, id, service, hook) : _dropped(run, id)));
    }
  }
}

// --- Internal helpers ---

async function _seed(run: SeedRun, businessId: string, id: string, service: WebhookService, file: { url: string; secret: string }): Promise<boolean> {
  const coll = run.ds.webhookEndpoints;
  const doc = await coll.get(id);
  if (!doc) {
    const at = run.o.now();
    await coll.insert({
      _id: id,
      businessId,
      url: file.url,
      services: [service],
      description: `From the config file (${service} events)`,
      enabled: true,
      disabled: null,
      secrets: [{ secret: file.secret, createdAtMs: at, expiresAtMs: null }],
      failingSinceMs: null,
      source: "config",
      seed: { ...file },
      rev: 1,
      createdAt: seedIso(run),
      updatedAt: seedIso(run),
    });
    await seedAudit(run, "create", "webhook_endpoint", id, { url: file.url, services: [service] });
    run.report.created++;
    await run.o.notify({ kind: "webhook", id: businessId });
    return true;
  }
  return _merge(run, doc, file);
}

async function _merge(run: SeedRun, doc: WebhookEndpointDoc, file: { url: string; secret: string }): Promise<boolean> {
  const seed = doc.seed ?? { url: doc.url, secret: doc.secrets[0]?.secret ?? "" };
  const current = doc.secrets[0]?.secret ?? "";
  const set: Record<string, unknown> = {};
  const nextSeed = { ...seed };
  if (file.url !== seed.url || (run.o.sync && file.url !== doc.url)) {
    if (doc.url === seed.url || run.o.sync) {
      set.url = file.url;
      nextSeed.url = file.url;
    } else keepOperatorChange(run, "webhook endpoint", doc._id, "url");
  }
  if (file.secret !== seed.secret || (run.o.sync && (file.secret !== current || doc.secrets.length > 1))) {
    if ((current === seed.secret && doc.secrets.length === 1) || run.o.sync) {
      set.secrets = [{ secret: file.secret, createdAtMs: run.o.now(), expiresAtMs: null }];
      nextSeed.secret = file.secret;
    } else keepOperatorChange(run, "webhook endpoint", doc._id, "secret");
  }
  if (Object.keys(set).length === 0) return true;
  if (!(await updateRecord(run, run.ds.webhookEndpoints, doc, { ...set, seed: nextSeed }))) return false;
  await seedAudit(run, "update", "webhook_endpoint", doc._id, {
    ...(set.url ? { url: { from: doc.url, to: set.url } } : {}),
    ...(set.secrets ? { secret: "changed" } : {}),
  });
  run.report.updated++;
  await run.o.notify({ kind: "webhook", id: doc.businessId });
  return true;
}

/** The file no longer names this endpoint: deleted unless changed at run time (or --sync). */
async function _dropped(run: SeedRun, id: string): Promise<boolean> {
  const doc = await run.ds.webhookEndpoints.get(id);
  if (!doc) return true;
  const seed = doc.seed;
  const edited = !seed || doc.url !== seed.url || doc.secrets.length !== 1 || doc.secrets[0]!.secret !== seed.secret;
  if (edited && !run.o.sync) {
    keepOperatorChange(run, "webhook endpoint", id, "removed from the file");
    return true;
  }
  if (await run.ds.webhookEndpoints.delete(id)) {
    await seedAudit(run, "delete", "webhook_endpoint", id, {});
    run.report.removed++;
    await run.o.notify({ kind: "webhook", id: doc.businessId });
  }
  return true;
}
