/**
 * The one-time import of the embedded store of earlier releases (a folder, `.data/` by default)
 * into an SQLite database. That store kept one JSON file per document, `<dir>/<collection>/<id>`
 * (both names URI-encoded, `.` and `*` too; an id too long for a file name as `~<sha256>`, the
 * document holding its `_id`), plus write-ahead journals `<dir>/@journal-<n>`, one JSON line
 * `[collection, id, document | null]` per change, replayed over the files in order (the files are
 * written about a second after the journal, and the journals deleted at a clean shutdown).
 *
 * The folder is read here directly, never written: nothing of it is changed or removed. The
 * documents go into the database in ONE transaction together with a marker row in
 * `gatehouse_meta` recording where they came from and the counts, so an import either happened
 * whole or not at all, and happens once (a second attempt finds the marker and imports nothing).
 * What the old store skipped as unreadable (a torn journal line, a damaged file) is skipped and
 * counted here too. Documents go in by `_id` per collection (the old store's order), read one at a time.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { isDuplicateKeyError, type Doc } from "../../ports.ts";
import { openWriterConnection } from "./commit-loop.ts";
import type { SqliteConnection } from "./connection.ts";
import { applyOp, createWriterState, type WriterState } from "./writes.ts";

/** What a folder holds, as far as the import is concerned. */
export type LegacyFolder =
  | { kind: "none" }
  /** The old layout, and nothing else: imported at first start. */
  | { kind: "legacy"; collections: string[]; journals: string[] }
  /** The old layout beside entries the old store never wrote: imported only when asked (`npx gatehouse import`). */
  | { kind: "mixed"; collections: string[]; journals: string[]; foreign: string[] };

export interface LegacyImportReport {
  /** The folder read. */
  from: string;
  /** The database written. */
  file: string;
  /** When the import ran (ISO 8601). */
  importedAt: string;
  documents: number;
  /** Documents per collection. */
  collections: Record<string, number>;
  /** Files and journal lines skipped as unreadable (relative to `from`). */
  skipped: string[];
  /** Changes found in journals (a crash left them; applied over the files). */
  journalChanges: number;
  /** False: this call imported; true: the database already held an import (its report is the recorded one). */
  alreadyImported: boolean;
  ms: number;
}

export interface LegacyImportOptions {
  /** The SQLite database (created when missing). */
  file: string;
  /** The old store's folder. */
  dir: string;
  busyTimeoutMs: number;
  /** Entries of `dir` to leave alone (the database's own files when it lives there). */
  ignore?: (name: string) => boolean;
  now?: () => number;
}

/** The marker table: one row per fact about the database (`legacy-import`: the import's report). */
export const META_SQL = "CREATE TABLE IF NOT EXISTS gatehouse_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)";
const MARKER = "legacy-import";

/** Reads `dir`'s entries and says whether it holds the old store's layout. */
export function inspectLegacyFolder(dir: string, ignore: (name: string) => boolean = () => false): LegacyFolder {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { kind: "none" };
  }
  const collections: string[] = [];
  const journals: string[] = [];
  const foreign: string[] = [];
  for (const name of names.sort()) {
    if (ignore(name) || name.startsWith(".") || name === "@ping") continue;
    if (JOURNAL.test(name)) journals.push(name);
    else if (SEGMENT.test(name) && _isDir(join(dir, name))) collections.push(name);
    else foreign.push(name);
  }
  if (collections.length === 0 && journals.length === 0) return { kind: "none" };
  return foreign.length === 0 ? { kind: "legacy", collections, journals } : { kind: "mixed", collections, journals, foreign };
}

/** The import's recorded report, or null when the database holds none. */
export function recordedImport(conn: SqliteConnection): LegacyImportReport | null {
  if (!conn.get("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'gatehouse_meta'")) return null;
  const row = conn.get("SELECT value FROM gatehouse_meta WHERE key = ?", [MARKER]);
  return row ? ({ ...(JSON.parse(row[0] as string) as LegacyImportReport), alreadyImported: true } as LegacyImportReport) : null;
}

/**
 * Imports `dir` into `file` unless the database already records an import. Throws (importing
 * nothing) when a document clashes with one the database holds, or when SQLite fails.
 */
export function importLegacyStore(options: LegacyImportOptions): LegacyImportReport {
  const started = performance.now();
  const now = options.now ?? Date.now;
  const conn = openWriterConnection(options.file, options.busyTimeoutMs, "FULL");
  try {
    conn.begin("IMMEDIATE");
    try {
      conn.exec(META_SQL);
      const recorded = recordedImport(conn);
      if (recorded) {
        conn.rollback();
        return recorded;
      }
      const report = _importInto(createWriterState(conn), options, now());
      report.ms = Math.round(performance.now() - started);
      conn.run("INSERT INTO gatehouse_meta (key, value) VALUES (?, ?)", [MARKER, JSON.stringify({ ...report, alreadyImported: undefined })]);
      conn.commit();
      return report;
    } catch (e) {
      conn.rollback();
      throw e;
    }
  } finally {
    conn.close();
  }
}

// --- Internal helpers ---

const JOURNAL = /^@journal-(\d+)$/;
/** A name encodeURIComponent can produce with `.` and `*` escaped (the old store's segments). */
const SEGMENT = /^[A-Za-z0-9\-_!~'()%]+$/;

interface _Change {
  collection: string;
  id: string;
  doc: Doc | null;
}

function _importInto(state: WriterState, options: LegacyImportOptions, now: number): LegacyImportReport {
  const folder = inspectLegacyFolder(options.dir, options.ignore);
  const report: LegacyImportReport = {
    from: options.dir,
    file: options.file,
    importedAt: new Date(now).toISOString(),
    documents: 0,
    collections: {},
    skipped: [],
    journalChanges: 0,
    alreadyImported: false,
    ms: 0,
  };
  if (folder.kind === "none") return report;
  const journal = _readJournals(options.dir, folder.journals, report);
  const insert = (collection: string, doc: Doc): void => {
    try {
      applyOp(state, { kind: "insert", collection, id: doc._id, text: JSON.stringify(doc), now });
    } catch (e) {
      if (isDuplicateKeyError(e))
        throw new Error(`importing ${options.dir}: document ${JSON.stringify(doc._id)} of collection "${collection}" is already in ${options.file} (the database is not empty): nothing was imported`);
      throw e;
    }
    report.collections[collection] = (report.collections[collection] ?? 0) + 1;
    report.documents++;
  };
  for (const segment of folder.collections) {
    const collection = _decode(segment);
    if (collection === null) {
      report.skipped.push(segment);
      continue;
    }
    for (const doc of _readCollection(join(options.dir, segment), segment, report)) {
      if (!journal.has(_key(collection, doc._id))) insert(collection, doc);
    }
  }
  const fromJournal = [...journal.values()].filter((c) => c.doc !== null).sort((a, b) => (a.collection === b.collection ? _cmp(a.id, b.id) : _cmp(a.collection, b.collection)));
  for (const c of fromJournal) insert(c.collection, c.doc!);
  return report;
}

/**
 * The document files of one collection folder, one at a time, in `_id` order (a file's name is its
 * encoded `_id`; hashed names last); unreadable ones are skipped and counted.
 */
function* _readCollection(path: string, segment: string, report: LegacyImportReport): Generator<Doc> {
  const names = readdirSync(path).map((name) => ({ name, id: name.startsWith("~") ? null : _decode(name) }));
  names.sort((a, b) => (a.id === null ? (b.id === null ? _cmp(a.name, b.name) : 1) : b.id === null ? -1 : _cmp(a.id, b.id)));
  for (const { name } of names) {
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(join(path, name), "utf8"));
    } catch {
      doc = undefined;
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc) || typeof (doc as Doc)._id !== "string") report.skipped.push(`${segment}/${name}`);
    else yield doc as Doc;
  }
}

/** The latest state per document the journals record, oldest journal first (torn lines skipped and counted). */
function _readJournals(dir: string, names: readonly string[], report: LegacyImportReport): Map<string, _Change> {
  const changes = new Map<string, _Change>();
  const ordered = [...names].sort((a, b) => Number(JOURNAL.exec(a)![1]) - Number(JOURNAL.exec(b)![1]));
  for (const name of ordered) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), "utf8");
    } catch {
      report.skipped.push(name);
      continue;
    }
    text.split("\n").forEach((line, i) => {
      if (line === "") return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        parsed = null;
      }
      if (!Array.isArray(parsed) || typeof parsed[0] !== "string" || typeof parsed[1] !== "string") {
        report.skipped.push(`${basename(name)}:${i + 1}`);
        return;
      }
      const doc = (parsed[2] ?? null) as Doc | null;
      changes.set(_key(parsed[0], parsed[1]), { collection: parsed[0], id: parsed[1], doc: doc && typeof doc === "object" ? { ...doc, _id: parsed[1] } : null });
      report.journalChanges++;
    });
  }
  return changes;
}

function _key(collection: string, id: string): string {
  return `${collection}\u0000${id}`;
}

function _decode(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function _isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function _cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
