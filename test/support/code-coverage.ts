/**
 * The catalog-coverage check: every GW_* code of core/errors/catalog.ts must be read off a real
 * HTTP answer somewhere in the suite. Each test process records the codes of the problem+json
 * answers it receives (fetch, node:http clients, and the raw-socket helpers) into a file of its own under the folder
 * the runner names in `GATEHOUSE_CODES_DIR`; the runner joins the files and, on a whole-suite run,
 * fails when a catalog code was never seen. Codes built in-process (unit tests calling gwError)
 * never pass through here, so they do not count.
 */
import { appendFileSync, readdirSync, readFileSync } from "node:fs";
import { IncomingMessage } from "node:http";
import { join } from "node:path";
import { CATALOG } from "../../core/errors/catalog.ts";

/** The environment variable naming the folder where test processes record the codes they saw. */
export const CODES_DIR_ENV = "GATEHOUSE_CODES_DIR";

/**
 * Catalog codes no gateway answer can carry, each with the reason (also listed in docs/errors.md).
 * Empty: every code is produced by a test over HTTP.
 */
export const COVERAGE_ALLOW_LIST: Readonly<Record<string, string>> = {};

export interface CoverageReport {
  seen: string[];
  missing: string[];
  total: number;
}

/** Records a code read off an HTTP answer (no-op outside the runner, or for anything but a GW_* code). */
export function recordCode(code: unknown): void {
  const dir = process.env[CODES_DIR_ENV];
  if (!dir || typeof code !== "string" || !/^GW_[A-Z0-9_]+$/.test(code) || _seen.has(code)) return;
  _seen.add(code);
  try {
    appendFileSync(join(dir, `${process.pid}.codes`), `${code}\n`);
  } catch {
    // The runner's folder is gone (a suite outliving its run): nothing to record into.
  }
}

/** Records the code of an answer's body when the answer is problem+json. */
export function recordProblemAnswer(contentType: string | null | undefined, body: string): void {
  if (!contentType?.toLowerCase().startsWith("application/problem+json")) return;
  try {
    recordCode((JSON.parse(body) as { code?: unknown }).code);
  } catch {
    // Not JSON: not an answer the catalog speaks of.
  }
}

/**
 * Wraps the process's fetch so every problem+json answer it receives is recorded. The body is read
 * from a clone, so the test reads the answer as it would without the recorder.
 */
export function installFetchRecorder(): void {
  if (!process.env[CODES_DIR_ENV] || _installed) return;
  _installed = true;
  const original = globalThis.fetch;
  globalThis.fetch = async (input: Parameters<typeof fetch>[0], init?: Parameters<typeof fetch>[1]) => {
    const res = await original(input, init);
    const type = res.headers.get("content-type");
    if (type?.toLowerCase().startsWith("application/problem+json") && res.body !== null) {
      res
        .clone()
        .text()
        .then((text) => recordProblemAnswer(type, text), () => {});
    }
    return res;
  };
}

/**
 * Records every problem+json answer a node:http client of this process receives. It watches the
 * bytes the HTTP parser pushes into the response stream, so the test's own reading (flowing or
 * paused, early or late) is untouched. Server-side requests (no status code) are left alone.
 */
export function installNodeHttpRecorder(): void {
  if (!process.env[CODES_DIR_ENV] || _httpInstalled) return;
  _httpInstalled = true;
  const original = IncomingMessage.prototype.push;
  IncomingMessage.prototype.push = function (this: IncomingMessage, chunk: unknown, encoding?: BufferEncoding): boolean {
    const type = this.statusCode ? this.headers["content-type"] : undefined;
    if (type?.toLowerCase().startsWith("application/problem+json")) {
      const parts = _bodies.get(this) ?? [];
      _bodies.set(this, parts);
      if (chunk === null) recordProblemAnswer(type, Buffer.concat(parts).toString("utf8"));
      else if (Buffer.isBuffer(chunk) && parts.length < 256) parts.push(chunk);
      else if (typeof chunk === "string" && parts.length < 256) parts.push(Buffer.from(chunk, encoding));
    }
    return original.call(this, chunk, encoding);
  };
}

/** The union of the codes recorded under `dir`, against the catalog (less the allow-list). */
export function readCoverage(dir: string): CoverageReport {
  const seen = new Set<string>();
  for (const name of _safeList(dir)) {
    for (const line of readFileSync(join(dir, name), "utf8").split("\n")) if (line) seen.add(line);
  }
  const codes = Object.keys(CATALOG);
  const missing = codes.filter((c) => !seen.has(c) && !(c in COVERAGE_ALLOW_LIST));
  return { seen: codes.filter((c) => seen.has(c)), missing, total: codes.length };
}

// --- Internal helpers ---

const _seen = new Set<string>();
let _installed = false;
let _httpInstalled = false;
const _bodies = new WeakMap<IncomingMessage, Buffer[]>();

function _safeList(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => n.endsWith(".codes"));
  } catch {
    return [];
  }
}
