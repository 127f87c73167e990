/**
 * One change of one record, written so that a retry resumes it: a compare-and-set on the record's
 * `rev` that also records the change as its `lastChange`, then the audit record. A retry of the same
 * mutation finds its own `lastChange` and completes the audit only (`resumeChange`).
 */
import type { Collection } from "../../../adapters/ports.ts";
import type { AuditTargetType, CredentialDoc, DomainDoc, LastChange } from "../../../core/directory-store.ts";
import { audit, isoNow, type DirectoryEnv, type OperatorCall } from "./env.ts";
import { approvalState, keyRaced } from "./failures.ts";

/** What a mutation changes in a record, and how the audit log describes it. */
export interface RecordChange<T> {
  target: { type: AuditTargetType; id: string };
  action: string;
  set: Partial<T>;
  changes: Record<string, unknown>;
}

/**
 * Applies `change` to `doc`. A concurrent writer in between loses nothing: this request fails
 * (409 GW_DOMAIN_APPROVAL_STATE_CHANGED: the record changed while this request ran; read it and decide again).
 */
export async function applyChange<T extends DomainDoc | CredentialDoc>(
  env: DirectoryEnv,
  coll: Collection<T>,
  doc: T,
  op: OperatorCall,
  recordId: string,
  change: RecordChange<T>,
): Promise<T> {
  const lastChange: LastChange = { op: recordId, action: change.action, changes: change.changes };
  const updated = await coll.findOneAndUpdate({ _id: doc._id, rev: doc.rev }, { $set: { ...change.set, lastChange, updatedAt: isoNow(env) }, $inc: { rev: 1 } });
  if (!updated) throw change.target.type === "domain" ? approvalState("The domain changed while this request ran; read it and decide again.") : keyRaced();
  await audit(env, op, recordId, change.action, change.target, change.changes);
  return updated;
}

/** A record this mutation changed already (a resumed run): its audit record is completed, nothing else. */
export async function resumeChange<T extends DomainDoc | CredentialDoc>(
  env: DirectoryEnv,
  doc: T,
  target: { type: AuditTargetType; id: string },
  op: OperatorCall,
  recordId: string,
): Promise<T> {
  const c = doc.lastChange!;
  await audit(env, op, recordId, c.action, target, c.changes);
  return doc;
}
