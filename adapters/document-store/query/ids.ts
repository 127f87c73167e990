/** Document ids: time-ordered new ids, and the check that a document carries a string `_id`. */
import { randomBytes } from "node:crypto";
import type { Doc } from "../../ports.ts";
import { InvalidQueryError } from "../../ports.ts";

/** A 28-hex-character id ordered by creation time (48-bit ms timestamp, counter, random). */
export function newId(): string {
  _idCounter = (_idCounter + 1) & 0xffffff;
  return Date.now().toString(16).padStart(12, "0") + _idCounter.toString(16).padStart(6, "0") + randomBytes(5).toString("hex");
}

/** Throws InvalidQueryError unless `doc` is an object with a string `_id` (what `insert` accepts). */
export function assertDocument(doc: Doc): void {
  if (typeof doc !== "object" || doc === null || typeof doc._id !== "string") throw new InvalidQueryError("a document needs a string _id");
}

// --- Internal helpers ---

let _idCounter = randomBytes(3).readUIntBE(0, 3);
