/**
 * One seeding run of the directory (core/directory/seed.ts): its options, its report, and the
 * steps every record kind shares — audit, compare-and-set update, convergence under concurrent
 * seeders, and the warning for an operator change the file does not override.
 */
import { isDuplicateKeyError, type Collection, type Doc } from "../../adapters/ports.ts";
import type { Logger } from "../log.ts";
import { appendAudit, type AuditTargetType, type DirectoryStore } from "./store.ts";
import type { DirectoryChange } from "./types.ts";

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

export interface SeedRun {
  readonly ds: DirectoryStore;
  readonly o: SeedOptions;
  readonly report: SeedReport;
}

export function createSeedRun(ds: DirectoryStore, o: SeedOptions): SeedRun {
  return { ds, o, report: { created: 0, updated: 0, removed: 0, kept: [] } };
}

/** The run's current time as an ISO string. */
export function seedIso(run: SeedRun): string {
  return new Date(run.o.now()).toISOString();
}

/** Appends the audit record of one seeded change (actor "config", or "config-sync" under --sync). */
export function seedAudit(run: SeedRun, action: string, type: AuditTargetType, id: string, changes: Record<string, unknown>): Promise<void> {
  const { sync } = run.o;
  return appendAudit(
    run.ds.audit,
    { actor: sync ? "config-sync" : "config", requestId: null, action: `${sync ? "sync" : "seed"}.${action}`, target: { type, id }, changes },
    run.o.now(),
  );
}

/** Runs one record's seeding again when a concurrent writer won a race (duplicate key, lost compare-and-set). */
export async function converge(what: string, step: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      if (await step()) return;
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
    }
  }
  throw new Error(`directory seed: ${what} kept changing under concurrent writers; start again`);
}

/** A compare-and-set on `rev`: null when another writer changed the record first. */
export function updateRecord<T extends Doc & { rev: number }>(run: SeedRun, coll: Collection<T>, doc: T, set: Record<string, unknown>): Promise<T | null> {
  return coll.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, { $set: { ...set, updatedAt: seedIso(run) }, $inc: { rev: 1 } });
}

/** Reports (and warns about) an operator change the file's value does not override. */
export function keepOperatorChange(run: SeedRun, type: string, id: string, field: string): void {
  run.report.kept.push(`${type} ${id}: ${field}`);
  run.o.log.warn("directory_seed_kept_operator_change", {
    target: `${type} ${id}`,
    field,
    detail: "an operator changed this since the file was last applied; the file's value is not applied (npm start -- --sync applies the file)",
  });
}

export function pick(doc: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, doc[k]]));
}

/** field → { from, to } for every field whose value differs. */
export function diff(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, { from: unknown; to: unknown }> {
  const out: Record<string, { from: unknown; to: unknown }> = {};
  for (const [k, to] of Object.entries(after)) {
    const from = before[k] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) out[k] = { from, to };
  }
  return out;
}
