/**
 * Seeding businesses: they are file-owned (no Admin API writes them), so the file always wins.
 * The audit records a changed webhook secret as "changed", never its value.
 */
import type { Config } from "../../config/schema.ts";
import { converge, diff, seedAudit, seedIso, updateRecord, type SeedRun } from "./seed-run.ts";
import type { BusinessDoc } from "./store.ts";

/** Seeds every business of the file; answers their ids. */
export async function seedBusinesses(run: SeedRun, config: Config): Promise<Set<string>> {
  const fileBusinesses = new Set<string>();
  for (const b of config.businesses) {
    fileBusinesses.add(b.id);
    const want: _Wanted = {
      name: b.name,
      state: b.state,
      collections: b.collections ? { webhook: b.collections.webhook ?? null, feeBearerDefault: b.collections.feeBearerDefault } : null,
      gateway: b.gateway !== undefined,
      gatewayWebhook: b.gateway?.webhook ?? null,
    };
    await converge(`business ${b.id}`, () => _seedBusiness(run, b.id, want));
  }
  return fileBusinesses;
}

// --- Internal helpers ---

type _Wanted = Pick<BusinessDoc, "name" | "state" | "collections" | "gateway" | "gatewayWebhook">;

async function _seedBusiness(run: SeedRun, id: string, want: _Wanted): Promise<boolean> {
  const { ds, report } = run;
  const doc = await ds.businesses.get(id);
  if (!doc) {
    await ds.businesses.insert({ _id: id, ...want, rev: 1, createdAt: seedIso(run), updatedAt: seedIso(run) });
    await seedAudit(run, "create", "business", id, _businessView(want));
    report.created++;
    await run.o.notify({ kind: "business", id });
    return true;
  }
  const changes = diff(_businessView(doc), _businessView(want));
  const secretChanged =
    doc.collections?.webhook?.secret !== want.collections?.webhook?.secret ||
    (doc.gatewayWebhook?.secret ?? null) !== (want.gatewayWebhook?.secret ?? null);
  if (Object.keys(changes).length === 0 && !secretChanged && doc.gateway === want.gateway) return true;
  if (!(await updateRecord(run, ds.businesses, doc, want))) return false;
  await seedAudit(run, "update", "business", id, secretChanged ? { ...changes, webhookSecret: "changed" } : changes);
  report.updated++;
  await run.o.notify({ kind: "business", id });
  return true;
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
