/**
 * A folder in the on-disk layout of the embedded store of earlier releases, written by hand (the
 * import reads that layout without that store's code): one JSON file per document at
 * `<dir>/<encoded collection>/<encoded id>` (URI-encoded with `.` and `*` escaped; an id longer
 * than 200 encoded characters as `~<sha256 of the id>`), and journals `<dir>/@journal-<8 digits>`
 * of JSON lines `[collection, id, document | null]` a crash left behind.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export function legacySegment(s: string): string {
  const enc = encodeURIComponent(s).replace(/\./g, "%2E").replace(/\*/g, "%2A");
  return enc.length <= 200 ? enc : `~${createHash("sha256").update(s).digest("hex")}`;
}

/** Writes every document of `collections` as its own file. */
export function writeLegacyFiles(dir: string, collections: Record<string, Array<Record<string, unknown> & { _id: string }>>): void {
  for (const [name, docs] of Object.entries(collections)) {
    const folder = join(dir, legacySegment(name));
    mkdirSync(folder, { recursive: true });
    for (const doc of docs) writeFileSync(join(folder, legacySegment(doc._id)), JSON.stringify(doc));
  }
}

/** Writes journal `seq` with these lines (a string is written as it is: a torn line). */
export function writeLegacyJournal(dir: string, seq: number, lines: Array<[string, string, unknown] | string>): void {
  const text = lines.map((l) => (typeof l === "string" ? l : JSON.stringify(l))).join("\n");
  writeFileSync(join(dir, `@journal-${String(seq).padStart(8, "0")}`), text);
}

/** Every file under `dir` (relative path → its sha-256), to prove a folder was left as it was. */
export function folderDigest(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string): void => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const path = join(rel, name);
      if (statSync(join(dir, path)).isDirectory()) walk(path);
      else out[path] = createHash("sha256").update(readFileSync(join(dir, path))).digest("hex");
    }
  };
  walk("");
  return out;
}
