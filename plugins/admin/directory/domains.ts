/**
 * A domain's settings (sign fee, autoTransmit), and the shape every domain mutation shares
 * (`domainMutation`, also used by the mode change and approval in mode-change.ts): read the domain,
 * resume this mutation's own change or decide and apply one (applyChange), announce the domain to
 * every process.
 */
import type { DomainDoc } from "../../../core/directory-store.ts";
import { koboToNgn, ngnToKobo } from "../../../core/money.ts";
import type { DomainUpdateInput } from "../directory-schemas.ts";
import { applyChange, resumeChange, type RecordChange } from "./apply.ts";
import { mutate, type AdminAnswer, type DirectoryEnv, type OperatorCall } from "./env.ts";
import { domainOf } from "./lookups.ts";
import { domainView } from "./views.ts";

export async function updateDomain(env: DirectoryEnv, op: OperatorCall, host: string, input: DomainUpdateInput): Promise<AdminAnswer> {
  return domainMutation(env, op, host, { host, ...input }, {
    decide(doc) {
      const set: Partial<DomainDoc> = {};
      const changes: Record<string, unknown> = {};
      const fee = input.signFee === undefined ? undefined : ngnToKobo(input.signFee)!;
      if (fee !== undefined && fee !== doc.signFeeKobo) {
        set.signFeeKobo = fee;
        changes.signFee = { from: koboToNgn(doc.signFeeKobo), to: koboToNgn(fee) };
      }
      if (input.autoTransmit !== undefined && input.autoTransmit !== doc.autoTransmit) {
        set.autoTransmit = input.autoTransmit;
        changes.autoTransmit = { from: doc.autoTransmit, to: input.autoTransmit };
      }
      return Object.keys(changes).length > 0 ? { action: "domain.update", set, changes } : null;
    },
  });
}

/** What a domain mutation does besides the shared steps. */
export interface DomainMutation {
  /** The change to apply, decided from the record read; null: nothing to change. May throw (a refused change). */
  decide(doc: DomainDoc): Omit<RecordChange<DomainDoc>, "target"> | null;
  /** After a change this run applied (its log event). */
  applied?(doc: DomainDoc): void;
  /** Fields added to the answer besides the domain. */
  extra?(doc: DomainDoc): Record<string, unknown>;
}

/**
 * The shape every domain mutation shares: read the domain, resume this mutation's own change or
 * decide and apply one, announce the domain to every process, answer the domain.
 */
export async function domainMutation(
  env: DirectoryEnv,
  op: OperatorCall,
  host: string,
  content: Record<string, unknown>,
  m: DomainMutation,
): Promise<AdminAnswer> {
  await domainOf(env, host);
  return mutate(env, op, content, async (recordId) => {
    let doc = await domainOf(env, host);
    const target = { type: "domain", id: host } as const;
    if (doc.lastChange?.op === recordId) doc = await resumeChange(env, doc, target, op, recordId);
    else {
      const change = m.decide(doc);
      if (change) {
        doc = await applyChange(env, env.store.domains, doc, op, recordId, { target, ...change });
        m.applied?.(doc);
      }
    }
    await env.directory.changed({ kind: "domain", id: host, modeVersion: doc.modeVersion });
    return { status: 200, body: { ...domainView(doc), ...m.extra?.(doc) } };
  });
}
