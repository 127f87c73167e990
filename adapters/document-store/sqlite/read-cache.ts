/**
 * Answers repeated point reads of a collection from memory while nothing has written to it since
 * they were read (docs/decisions.md "SQLite read cache"). A billed sign or a Stored intake reads
 * the same few documents on every request: the key's record, the represented business, its
 * pending-review check, the wallet's suspension flag. Read through the binding, each costs a
 * statement and the pages SQLite dropped after the writer's last commit.
 *
 * Sound only in a process that is the database's sole writer (the exclusive process lock, or an
 * in-memory database): every change then comes through this process's writer, which tells the
 * cache about each settled write before its caller (or anyone else) runs again. A write drops
 * everything remembered of its collection, whether it succeeded or failed (a failure may still
 * have committed). Nothing is remembered of collections with a TTL field (their answers change
 * with the clock).
 *
 * An answer is the document's JSON text (parsed again for each caller: callers may change what
 * they get), null, or a count. The cache holds at most BUDGET_CHARS characters of keys and texts;
 * when full it starts again empty.
 */

/** What a read answered: a document's JSON text, no document, or a count. */
export type CachedAnswer = string | number | null;

export interface ReadCacheStats {
  hits: number;
  misses: number;
  entries: number;
  /** Characters held (keys and document texts). */
  chars: number;
}

export interface ReadCache {
  /** The answer remembered for `key`, or undefined. */
  get(collection: string, key: string): CachedAnswer | undefined;
  remember(collection: string, key: string, answer: CachedAnswer): void;
  /** A write to `collection` settled: its answers are forgotten. */
  written(collection: string): void;
  /** Everything is forgotten (the writer died with operations outstanding). */
  clear(): void;
  stats(): ReadCacheStats;
}

/** About 16 MiB of UTF-16 text at most. */
const BUDGET_CHARS = 8 * 1024 * 1024;

export function createReadCache(budgetChars = BUDGET_CHARS): ReadCache {
  const byCollection = new Map<string, _Remembered>();
  const counts = { hits: 0, misses: 0, chars: 0 };
  const forget = (r: _Remembered): void => {
    counts.chars -= r.chars;
    r.chars = 0;
    r.answers.clear();
  };
  const cache: ReadCache = {
    get(collection, key) {
      const answer = byCollection.get(collection)?.answers.get(key);
      if (answer === undefined) counts.misses++;
      else counts.hits++;
      return answer;
    },
    remember(collection, key, answer) {
      const size = _chars(key, answer);
      if (size > budgetChars) return;
      if (counts.chars + size > budgetChars) cache.clear();
      let r = byCollection.get(collection);
      if (!r) byCollection.set(collection, (r = { answers: new Map(), chars: 0 }));
      const before = r.answers.get(key);
      const change = size - (before === undefined ? 0 : _chars(key, before));
      r.answers.set(key, answer);
      r.chars += change;
      counts.chars += change;
    },
    written(collection) {
      const r = byCollection.get(collection);
      if (r && r.answers.size > 0) forget(r);
    },
    clear() {
      for (const r of byCollection.values()) forget(r);
    },
    stats() {
      let entries = 0;
      for (const r of byCollection.values()) entries += r.answers.size;
      return { ...counts, entries };
    },
  };
  return cache;
}

/**
 * The cache key of a filter: its JSON text when the filter is plain JSON (strings, finite numbers,
 * booleans, null, arrays and plain objects), so that two filters with one text ask the same
 * question; null otherwise (not cached).
 */
export function filterKey(filter: object): string | null {
  return _plain(filter, 0) ? JSON.stringify(filter) : null;
}

// --- Internal helpers ---

/** One collection's remembered answers and the characters they hold. */
interface _Remembered {
  answers: Map<string, CachedAnswer>;
  chars: number;
}

function _chars(key: string, answer: CachedAnswer): number {
  return key.length + (typeof answer === "string" ? answer.length : 8);
}

function _plain(value: unknown, depth: number): boolean {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (typeof value !== "object" || depth > 16) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!(i in value) || !_plain(value[i], depth + 1)) return false;
    return true;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in value) if (!_plain((value as Record<string, unknown>)[key], depth + 1)) return false;
  return true;
}
