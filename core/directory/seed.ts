/**
 * The config file seeds the directory at boot, declaratively (as decK does for Kong):
 *
 * - seed (default, every boot): what the file declares and the store lacks is created; a field the
 *   file changed since it was last applied is updated — unless an operator changed that field since
 *   (the store's value differs from the recorded `seed` value): then the operator's value stays and
 *   `directory_seed_kept_operator_change` is logged at every boot until the file agrees or `--sync`
 *   runs. Records the file does not mention are left alone.
 * - sync (`npm start -- --sync`, `npx gatehouse config sync FILE`): the store is made to match the
 *   file exactly. Operator changes are overwritten and records the file does not mention (domains,
 *   keys created through the Admin API, businesses) are deleted.
 *
 * Businesses are file-owned (no Admin API writes them), so the file always wins for them. A domain's
 * operator-changeable fields are its mode/approval, sign fee and autoTransmit; a config key's is
 * `revoked` (and an expiry set by a roll). A mode or approval the seed changes counts as an approval
 * in that mode: `modeVersion` + 1. Every write is a compare-and-set on `rev` (two processes seeding
 * at once converge: the loser re-reads), is audited (actor "config" or "config-sync") and is
 * announced to running processes. One file per record kind: seed-businesses.ts, seed-domains.ts,
 * seed-credentials.ts, webhook-seed.ts (webhook endpoints: what a config change does to an endpoint
 * edited at run time); their shared steps are in seed-run.ts.
 */
import type { Collection, Doc } from "../../adapters/ports.ts";
import type { Config } from "../../config/schema.ts";
import { seedBusinesses } from "./seed-businesses.ts";
import { seedCredentials } from "./seed-credentials.ts";
import { seedDomains } from "./seed-domains.ts";
import { createSeedRun, seedAudit, type SeedOptions, type SeedReport, type SeedRun } from "./seed-run.ts";
import { seedWebhookEndpoints } from "./webhook-seed.ts";
import type { AuditTargetType, DirectoryStore } from "./store.ts";
import type { DirectoryChange } from "./types.ts";

export type { SeedOptions, SeedReport } from "./seed-run.ts";

export async function seedDirectory(ds: DirectoryStore, config: Config, o: SeedOptions): Promise<SeedReport> {
  const run = createSeedRun(ds, o);
  const fileBusinesses = await seedBusinesses(run, config);
  const fileDomains = await seedDomains(run, config);
  const fileKeys = await seedCredentials(run, config);
  await seedWebhookEndpoints(run, config);
  if (o.sync) await _removeUnlisted(run, fileDomains, fileKeys, fileBusinesses);
  const { report } = run;
  o.log.event("directory_seeded", { mode: o.sync ? "sync" : "seed", created: report.created, updated: report.updated, removed: report.removed, kept: report.kept.length });
  return report;
}

// --- Internal helpers ---

/** --sync: deletes the domains, keys and businesses the file does not name (audited and announced). */
async function _removeUnlisted(run: SeedRun, fileDomains: Set<string>, fileKeys: Set<string>, fileBusinesses: Set<string>): Promise<void> {
  const { ds, report } = run;
  const remove = async (kind: DirectoryChange["kind"], type: AuditTargetType, name: string) => {
    await seedAudit(run, "delete", type, name, {});
    await run.o.notify({ kind, id: name, removed: true });
  };
  report.removed += await _removeOthers(ds.domains, "_id", fileDomains, (id) => remove("domain", "domain", id));
  report.removed += await _removeOthers(ds.credentials, "credentialId", fileKeys, (id) => remove("credential", "key", id));
  report.removed += await _removeOthers(ds.businesses, "_id", fileBusinesses, (id) => remove("business", "business", id));
}

/** Deletes every record whose `idField` the file does not name; `removed` audits and announces each. */
async function _removeOthers<T extends Doc>(
  coll: Collection<T>,
  idField: string,
  keep: ReadonlySet<string>,
  removed: (name: string) => Promise<void>,
): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  const doomed: Array<{ _id: string; name: string }> = [];
  do {
    const page: { items: T[]; nextCursor: string | null } = await coll.find({}, { limit: 1000, cursor });
    for (const doc of page.items) {
      const name = String(doc[idField]);
      if (!keep.has(name)) doomed.push({ _id: doc._id, name });
    }
    cursor = page.nextCursor;
  } while (cursor !== null);
  for (const d of doomed) {
    if (await coll.delete(d._id)) {
      count++;
      await removed(d.name);
    }
  }
  return count;
}
