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
  const byCollection = new Map<string, Map<string, CachedAnswer>>();
  const counts = { hits: 0, misses: 0, entries: 0, chars: 0 };
  const forget = (answers: Map<string, CachedAnswer>): void => {
    for (const [key, answer] of answers) counts.chars -= _chars(key, answer);
    counts.entries -= answers.size;
  };
  const cache: ReadCache = {
    get(collection, key) {
      const answer = byCollection.get(collection)?.get(key);
      if (answer === undefined) counts.misses++;
      else counts.hits++;
      return answer;
    },
    remember(collection, key, answer) {
      const size = _chars(key, answer);
      if (size > budgetChars) return;
      if (counts.chars + size > budgetChars) cache.clear();
      let answers = byCollection.get(collection);
      if (!answers) byCollection.set(collection, (answers = new Map()));
      const before = answers.get(key);
      if (before !== undefined) {
        counts.chars -= _chars(key, before);
        counts.entries--;
      }
      answers.set(key, answer);
      counts.chars += size;
      counts.entries++;
    },
    written(collection) {
      const answers = byCollection.get(collection);
      if (!answers || answers.size === 0) return;
      forget(answers);
      answers.clear();
    },
    clear() {
      for (const answers of byCollection.values()) forget(answers);
      byCollection.clear();
    },
    stats: () => ({ ...counts }),
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
