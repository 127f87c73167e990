/**
 * The fields the MongoDB store keeps in a document besides the port's ones (names starting with
 * `_gh_`, reserved): a revision token replaced by every write (the compare-and-set guard of
 * findOneAndUpdate and claim), and a Date mirror of a numeric ttlField (MongoDB's TTL monitor only
 * deletes documents whose indexed field is a BSON Date).
 */
import type { Document } from "mongodb";
import { InvalidQueryError, type Doc, type Filter, type Update } from "../../ports.ts";
import { newId } from "../query/ids.ts";
import { upsertDocument } from "../query/update.ts";
import { getPath } from "../query/values.ts";
import { definedFields } from "./translate.ts";

export const HIDDEN_PREFIX = "_gh_";
/** Date mirror of a numeric ttlField (MongoDB's TTL monitor only deletes Dates). */
export const TTL_MIRROR = "_gh_expiresAt";
/** Revision token, replaced by every write: the compare-and-set guard of findOneAndUpdate and claim. */
export const REV = "_gh_rev";

/** A stored document: string `_id` (never an ObjectId), JSON fields plus the hidden fields. */
export type StoredDoc = { _id: string } & Document;

/** Hidden fields to set and to remove. */
export interface HiddenChange {
  set: Document;
  unset: string[];
}

/** The hidden fields a document with these (port) contents stores besides them. */
export function hiddenFields(doc: Doc, ttlField: string | undefined): HiddenChange {
  const set: Document = { [REV]: newId() };
  const unset: string[] = [];
  if (ttlField) {
    const v = getPath(doc, ttlField);
    if (typeof v === "number" && Number.isFinite(v)) set[TTL_MIRROR] = new Date(v);
    else unset.push(TTL_MIRROR);
  }
  return { set, unset };
}

/** The document as stored: its fields and its hidden fields. */
export function toStored(doc: Doc, ttlField: string | undefined): StoredDoc {
  const { set } = hiddenFields(doc, ttlField);
  return { ...doc, ...set };
}

/**
 * The TTL mirror after `update`, when the update alone says it: untouched, set from a `$set` of
 * the TTL field, or removed by its `$unset`; "unknown" when the update increments the TTL field or
 * changes an object above or below it (the caller then reads the document first).
 */
export function ttlMirrorOf(update: Update, ttlField: string | undefined): HiddenChange | "unknown" {
  if (!ttlField) return { set: {}, unset: [] };
  const f = ttlField;
  const touches = (p: string) => p === f || f.startsWith(`${p}.`) || p.startsWith(`${f}.`);
  if (Object.keys(update.$inc ?? {}).some(touches)) return "unknown";
  const set = Object.keys(definedFields(update.$set)).filter(touches);
  const unset = (update.$unset ?? []).filter(touches);
  if (set.length === 0 && unset.length === 0) return { set: {}, unset: [] };
  if (set.length === 1 && unset.length === 0 && set[0] === f) {
    const v = update.$set![f];
    return typeof v === "number" && Number.isFinite(v) ? { set: { [TTL_MIRROR]: new Date(v) }, unset: [] } : { set: {}, unset: [TTL_MIRROR] };
  }
  if (set.length === 0 && unset.length === 1 && unset[0] === f) return { set: {}, unset: [TTL_MIRROR] };
  return "unknown";
}

/** Removes the hidden fields (in place) and returns the port's document. */
export function strip(doc: Document): Doc {
  delete doc[TTL_MIRROR];
  delete doc[REV];
  return doc as Doc;
}

export function stripOrNull(doc: Document | null): Doc | null {
  return doc ? strip(doc) : null;
}

/** `upsertDocument`, refusing the reserved field names. */
export function upsertDocumentChecked(filter: Filter, update: Update): Doc {
  const built = upsertDocument(filter, update);
  assertNoHiddenFields(built);
  return built;
}

/** An update must not name a reserved field (updateOne sends it as it is). */
export function assertNoHiddenPaths(update: Update): void {
  const paths = [...Object.keys(update.$set ?? {}), ...Object.keys(update.$inc ?? {}), ...(update.$unset ?? [])];
  for (const p of paths) if (p.split(".")[0]!.startsWith(HIDDEN_PREFIX)) throw new InvalidQueryError(`field names starting with ${HIDDEN_PREFIX} are reserved`);
}

export function assertNoHiddenFields(doc: Doc): void {
  for (const k of Object.keys(doc)) if (k.startsWith(HIDDEN_PREFIX)) throw new InvalidQueryError(`field names starting with ${HIDDEN_PREFIX} are reserved`);
}
