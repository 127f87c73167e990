/**
 * Seeding domains: a three-way merge on the operator-changeable fields (mode/approval, sign fee,
 * autoTransmit). A field the file changed since it was last applied (`seed`) is updated unless an
 * operator changed it since; then the operator's value stays and is reported at every boot. A mode
 * or approval the seed changes counts as an approval in that mode: `modeVersion` + 1.
 */
import type { Config } from "../../config/schema.ts";
import { ngnTextToKobo } from "../money.ts";
import { converge, diff, keepOperatorChange, pick, seedAudit, seedIso, updateRecord, type SeedRun } from "./seed-run.ts";
import type { DomainDoc, DomainFields } from "./store.ts";

/** Seeds every domain of the file; answers their hosts. */
export async function seedDomains(run: SeedRun, config: Config): Promise<Set<string>> {
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
      await converge(`domain ${d.host}`, () => _seedDomain(run, d.host, file));
    }
  }
  return fileDomains;
}

// --- Internal helpers ---

const DOMAIN_FIELDS: ReadonlyArray<keyof DomainFields> = ["businessId", "mode", "approval", "signFeeKobo", "autoTransmit"];

async function _seedDomain(run: SeedRun, host: string, file: DomainFields): Promise<boolean> {
  const doc = await run.ds.domains.get(host);
  if (!doc) {
    await run.ds.domains.insert({
      _id: host,
      ...file,
      modeVersion: 1,
      pendingMode: null,
      drainingSince: null,
      seed: file,
      rev: 1,
      createdAt: seedIso(run),
      updatedAt: seedIso(run),
    });
    await seedAudit(run, "create", "domain", host, { ...file });
    run.report.created++;
    await run.o.notify({ kind: "domain", id: host, modeVersion: 1 });
    return true;
  }
  return _updateDomain(run, doc, file);
}

async function _updateDomain(run: SeedRun, doc: DomainDoc, file: DomainFields): Promise<boolean> {
  const host = doc._id;
  const { set, seed, kept } = _merge(doc, file, run.o.sync);
  const approvedAnew = (set.mode !== undefined || set.approval !== undefined) && (set.approval ?? doc.approval) === "approved";
  const changes = diff(pick(doc, Object.keys(set)), set);
  if (approvedAnew || set.approval !== undefined) Object.assign(set, { pendingMode: null, drainingSince: null });
  if (approvedAnew) set.modeVersion = doc.modeVersion + 1;
  const seedChanged = JSON.stringify(seed) !== JSON.stringify(doc.seed);
  if (Object.keys(changes).length > 0 || seedChanged) {
    const done = await updateRecord(run, run.ds.domains, doc, { ...set, seed });
    if (!done) return false;
    if (Object.keys(changes).length > 0) {
      await seedAudit(run, "update", "domain", host, approvedAnew ? { ...changes, modeVersion: { from: doc.modeVersion, to: done.modeVersion } } : changes);
      run.report.updated++;
      await run.o.notify({ kind: "domain", id: host, modeVersion: done.modeVersion });
    }
  }
  for (const f of kept) keepOperatorChange(run, "domain", host, f);
  return true;
}

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
