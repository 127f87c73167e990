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
 * announced to running processes.
 */
import type { Config, CredentialConfig } from "../config/schema.ts";
import { isDuplicateKeyError, type Collection, type Doc } from "../adapters/ports.ts";
import { hashSecret, type DirectoryChange } from "./directory.ts";
import {
  appendAudit,
  type AuditTargetType,
  type BusinessDoc,
  type CredentialDoc,
  type CredentialScheme,
  type DirectoryStore,
  type DomainDoc,
  type DomainFields,
} from "./directory-store.ts";
import type { Logger } from "./log.ts";
import { ngnTextToKobo } from "./money.ts";

export interface SeedOptions {
  /** Make the store match the file exactly. */
  sync: boolean;
  now: () => number;
  log: Logger;
  /** Announces a change to running processes. */
  notify: (change: DirectoryChange) => Promise<void>;
}

export interface SeedReport {
  created: number;
  updated: number;
  removed: number;
  /** "domain stored.demo.localhost: signFeeKobo" — operator changes kept against the file. */
  kept: string[];
}

export async function seedDirectory(ds: DirectoryStore, config: Config, o: SeedOptions): Promise<SeedReport> {
  const report: SeedReport = { created: 0, updated: 0, removed: 0, kept: [] };
  const actor = o.sync ? "config-sync" : "config";
  const iso = () => new Date(o.now()).toISOString();

  const audit = (action: string, type: AuditTargetType, id: string, changes: Record<string, unknown>) =>
    appendAudit(ds.audit, { actor, requestId: null, action: `${o.sync ? "sync" : "seed"}.${action}`, target: { type, id }, changes }, o.now());

  /** Runs one record's seeding again when a concurrent writer won a race (duplicate key, lost compare-and-set). */
  const converge = async (what: string, step: () => Promise<boolean>): Promise<void> => {
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        if (await step()) return;
      } catch (e) {
        if (!isDuplicateKeyError(e)) throw e;
      }
    }
    throw new Error(`directory seed: ${what} kept changing under concurrent writers; start again`);
  };

  const update = <T extends Doc & { rev: number }>(coll: Collection<T>, doc: T, set: Record<string, unknown>) =>
    coll.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, { $set: { ...set, updatedAt: iso() }, $inc: { rev: 1 } });

  // --- businesses (file-owned) ---
  const fileBusinesses = new Set<string>();
  for (const b of config.businesses) {
    fileBusinesses.add(b.id);
    const want = {
      name: b.name,
      state: b.state,
      collections: b.collections ? { webhook: b.collections.webhook ?? null, feeBearerDefault: b.collections.feeBearerDefault } : null,
      gateway: b.gateway !== undefined,
      gatewayWebhook: b.gateway?.webhook ?? null,
    };
    await converge(`business ${b.id}`, async () => {
      const doc = await ds.businesses.get(b.id);
      if (!doc) {
        await ds.businesses.insert({ _id: b.id, ...want, rev: 1, createdAt: iso(), updatedAt: iso() });
        await audit("create", "business", b.id, _businessView(want));
        report.created++;
        await o.notify({ kind: "business", id: b.id });
        return true;
      }
      const changes = _diff(_businessView(doc), _businessView(want));
      const secretChanged =
        doc.collections?.webhook?.secret !== want.collections?.webhook?.secret ||
        (doc.gatewayWebhook?.secret ?? null) !== (want.gatewayWebhook?.secret ?? null);
      if (Object.keys(changes).length === 0 && !secretChanged && doc.gateway === want.gateway) return true;
      if (!(await update(ds.businesses, doc, want))) return false;
      await audit("update", "business", b.id, secretChanged ? { ...changes, webhookSecret: "changed" } : changes);
      report.updated++;
      await o.notify({ kind: "business", id: b.id });
      return true;
    });
  }

  // --- domains (three-way merge on the operator-changeable fields) ---
  const fileDomains = new Set<string>();
  for (const b of config.businesses) {
    for (const d of b.gateway?.domains ?? []) {
      fileDomains.add(d.host);
      const file: DomainFields = {
        businessId: b.id,
        mode: d.mode,
        approval: d.approved ? "approved" : "pending_approval",
        signFeeKobo: ngnTextToKobo(d.signFee),
        autoTransmit: d.autoTransmit,
      };
      await converge(`domain ${d.host}`, async () => {
        const doc = await ds.domains.get(d.host);
        if (!doc) {
          await ds.domains.insert({
            _id: d.host,
            ...file,
            modeVersion: 1,
            pendingMode: null,
            drainingSince: null,
            seed: file,
            rev: 1,
            createdAt: iso(),
            updatedAt: iso(),
          });
          await audit("create", "domain", d.host, { ...file });
          report.created++;
          await o.notify({ kind: "domain", id: d.host, modeVersion: 1 });
          return true;
        }
        const { set, seed, kept } = _merge(doc, file, o.sync);
        const approvedAnew = (set.mode !== undefined || set.approval !== undefined) && (set.approval ?? doc.approval) === "approved";
        const changes = _diff(_pick(doc, Object.keys(set)), set);
        if (approvedAnew || set.approval !== undefined) Object.assign(set, { pendingMode: null, drainingSince: null });
        if (approvedAnew) set.modeVersion = doc.modeVersion + 1;
        const seedChanged = JSON.stringify(seed) !== JSON.stringify(doc.seed);
        if (Object.keys(changes).length > 0 || seedChanged) {
          const done = await update(ds.domains, doc, { ...set, seed });
          if (!done) return false;
          if (Object.keys(changes).length > 0) {
            await audit("update", "domain", d.host, approvedAnew ? { ...changes, modeVersion: { from: doc.modeVersion, to: done.modeVersion } } : changes);
            report.updated++;
            await o.notify({ kind: "domain", id: d.host, modeVersion: done.modeVersion });
          }
        }
        for (const f of kept) _keep(report, o.log, "domain", d.host, f);
        return true;
      });
    }
  }

  // --- credentials (keys are matched by credential id; revoked and a roll's expiry are the operator's) ---
  const fileKeys = new Set<string>();
  const fileHashes = new Set<string>();
  const entries: Array<{ c: CredentialConfig; scheme: CredentialScheme; businessId: string | null }> = [];
  for (const b of config.businesses) {
    for (const c of b.gateway?.apiKeys ?? []) entries.push({ c, scheme: "apiKey", businessId: b.id });
    for (const c of b.collections?.apiKeys ?? []) entries.push({ c, scheme: "bearer", businessId: b.id });
  }
  for (const c of config.operators.apiKeys) entries.push({ c, scheme: "admin", businessId: null });

  for (const { c, scheme, businessId } of entries) {
    const hashId = c.keyHash ?? hashSecret(c.key!);
    if (fileHashes.has(hashId)) throw new Error(`directory seed: credential "${c.id}" has the same key as another credential of the file`);
    fileHashes.add(hashId);
    fileKeys.add(c.id);
    const owned = { scheme, businessId, ipWhitelisted: [...c.ipWhitelisted] };
    const fresh = (): CredentialDoc => ({
      _id: hashId,
      credentialId: c.id,
      ...owned,
      revoked: c.revoked,
      revokedAt: c.revoked ? iso() : null,
      expiresAt: null,
      hint: c.key ? `…${c.key.slice(-4)}` : null,
      source: "config",
      seed: { revoked: c.revoked },
      rolledFrom: null,
      rolledTo: null,
      rev: 1,
      createdAt: iso(),
      updatedAt: iso(),
    });
    await converge(`credential ${c.id}`, async () => {
      const byName = await ds.credentials.findOne({ credentialId: c.id });
      const byHash = byName?._id === hashId ? byName : await ds.credentials.get(hashId);
      const replaceable = (doc: CredentialDoc) => o.sync || (doc.source === "config" && _untouched(doc));

      if (byName && byName._id === hashId) {
        // The same key: file-owned fields follow the file; `revoked` merges three ways.
        const set: Record<string, unknown> = {};
        for (const [f, v] of Object.entries(owned)) if (JSON.stringify(byName[f]) !== JSON.stringify(v)) set[f] = v;
        let kept = false;
        if (o.sync) {
          if (byName.revoked !== c.revoked) set.revoked = c.revoked;
          if (byName.expiresAt !== null) set.expiresAt = null;
          if (byName.rolledTo !== null) set.rolledTo = null;
        } else if (byName.seed?.revoked !== c.revoked) {
          if (byName.seed === null || byName.revoked === byName.seed.revoked) {
            if (byName.revoked !== c.revoked) set.revoked = c.revoked;
          } else if (byName.revoked !== c.revoked) kept = true;
        }
        if (set.revoked !== undefined) set.revokedAt = set.revoked ? iso() : null;
        const seed = { revoked: kept ? byName.seed!.revoked : c.revoked };
        const changes = _diff(_pick(byName, Object.keys(set).filter((k) => k !== "revokedAt")), set);
        if (Object.keys(changes).length > 0 || byName.seed?.revoked !== seed.revoked) {
          if (!(await update(ds.credentials, byName, { ...set, seed }))) return false;
          if (Object.keys(changes).length > 0) {
            await audit("update", "key", c.id, changes);
            report.updated++;
            await o.notify({ kind: "credential", id: c.id });
          }
        }
        if (kept) _keep(report, o.log, "key", c.id, "revoked");
        return true;
      }
      if (byName) {
        // The file holds another key under this id.
        if (!replaceable(byName)) {
          _keep(report, o.log, "key", c.id, "key");
          return true;
        }
        if (byHash) throw new Error(`directory seed: the key of credential "${c.id}" is stored under id "${byHash.credentialId}"`);
        await ds.credentials.deleteMany({ _id: byName._id, rev: byName.rev });
        await ds.credentials.insert(fresh());
        await audit("replace", "key", c.id, { key: "replaced by the file's key" });
        report.updated++;
        await o.notify({ kind: "credential", id: c.id });
        return true;
      }
      if (byHash) {
        // The file renamed the key.
        if (!replaceable(byHash)) {
          _keep(report, o.log, "key", byHash.credentialId, "credentialId");
          return true;
        }
        if (!(await update(ds.credentials, byHash, { credentialId: c.id, ...owned }))) return false;
        await audit("update", "key", c.id, { credentialId: { from: byHash.credentialId, to: c.id } });
        report.updated++;
        return true;
      }
      await ds.credentials.insert(fresh());
      await audit("create", "key", c.id, { ...owned, revoked: c.revoked });
      report.created++;
      return true;
    });
  }

  if (o.sync) {
    const remove = async (kind: DirectoryChange["kind"], type: AuditTargetType, name: string) => {
      await audit("delete", type, name, {});
      await o.notify({ kind, id: name, removed: true });
    };
    report.removed += await _removeOthers(ds.domains, "_id", fileDomains, (id) => remove("domain", "domain", id));
    report.removed += await _removeOthers(ds.credentials, "credentialId", fileKeys, (id) => remove("credential", "key", id));
    report.removed += await _removeOthers(ds.businesses, "_id", fileBusinesses, (id) => remove("business", "business", id));
  }

  o.log.event("directory_seeded", { mode: o.sync ? "sync" : "seed", created: report.created, updated: report.updated, removed: report.removed, kept: report.kept.length });
  return report;
}

// --- Internal helpers ---

const DOMAIN_FIELDS: ReadonlyArray<keyof DomainFields> = ["businessId", "mode", "approval", "signFeeKobo", "autoTransmit"];

/**
 * The three-way merge of one domain: `set` (fields to write), `seed` (to record) and `kept` (fields
 * an operator changed that the file now wants otherwise). Sync: the file, whole.
 */
function _merge(doc: DomainDoc, file: DomainFields, sync: boolean): { set: Partial<DomainDoc>; seed: DomainFields; kept: string[] } {
  const set: Record<string, unknown> = {};
  const seed: Record<string, unknown> = { ...file };
  const kept: string[] = [];
  for (const f of DOMAIN_FIELDS) {
    const current = doc[f];
    if (sync) {
      if (current !== file[f]) set[f] = file[f];
      continue;
    }
    const before = doc.seed ? doc.seed[f] : undefined;
    if (doc.seed && before === file[f]) continue; // the file did not change it since the last seed
    if (!doc.seed || current === before) {
      if (current !== file[f]) set[f] = file[f];
    } else if (current !== file[f]) {
      kept.push(f);
      seed[f] = before; // keep reporting it until the file agrees or --sync runs
    }
  }
  return { set: set as Partial<DomainDoc>, seed: seed as unknown as DomainFields, kept };
}

/** A config key no operator has changed: not revoked or un-revoked against the file, never rolled. */
function _untouched(doc: CredentialDoc): boolean {
  return doc.seed !== null && doc.revoked === doc.seed.revoked && doc.expiresAt === null && doc.rolledTo === null;
}

function _keep(report: SeedReport, log: Logger, type: string, id: string, field: string): void {
  report.kept.push(`${type} ${id}: ${field}`);
  log.warn("directory_seed_kept_operator_change", {
    target: `${type} ${id}`,
    field,
    detail: "an operator changed this since the file was last applied; the file's value is not applied (npm start -- --sync applies the file)",
  });
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

/** The audited view of a business (the webhook secret is never written to the audit log). */
function _businessView(b: Pick<BusinessDoc, "name" | "state" | "collections" | "gatewayWebhook">): Record<string, unknown> {
  return {
    name: b.name,
    state: b.state,
    feeBearerDefault: b.collections?.feeBearerDefault ?? null,
    webhookUrl: b.collections?.webhook?.url ?? null,
    invoiceWebhookUrl: b.gatewayWebhook?.url ?? null,
  };
}

function _pick(doc: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, doc[k]]));
}

/** field → { from, to } for every field whose value differs. */
function _diff(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, to] of Object.entries(after)) {
    const from = before[k] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[k] = { from, to };
  }
  return out;
}
