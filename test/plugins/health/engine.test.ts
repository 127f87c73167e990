/**
 * The document store engine in /health/dependencies and /metrics (plugins/health): on the SQLite
 * file the snapshot carries the file and WAL sizes, free bytes, commits with their latency and the
 * cache's bound, and /metrics exposes them as gauges; both read what the background refresh
 * fetched, so neither a snapshot request nor a scrape asks the store for its figures.
 */
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore } from "../../../adapters/ports.ts";
import { ADMIN_KEY, startTestGateway } from "../../support/gateway.ts";
import { tempDir } from "../../support/temp.ts";

test("the SQLite engine's figures: in the cached snapshot and as gauges; a request or scrape never asks the store for them", async () => {
  const sqlite = await createSqliteDocumentStore({ file: join(tempDir("health-engine"), "gatehouse.sqlite") });
  let statsCalls = 0;
  const store: DocumentStore = {
    kind: sqlite.kind,
    collection: (name, spec) => sqlite.collection(name, spec),
    ping: () => sqlite.ping(),
    stats: () => {
      statsCalls++;
      return sqlite.stats();
    },
    close: () => sqlite.close(),
  };
  for (let i = 0; i < 20; i++) await sqlite.collection("health_probe").insert({ _id: `d${i}`, text: "x".repeat(500) });
  const tg = await startTestGateway({ ports: { documentStore: store }, patch: { dependencies: { healthRefreshMs: 600_000 } } });
  try {
    const calls = statsCalls;
    assert.ok(calls >= 1, "read by the refresh at start");
    const res = await tg.call("/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    assert.is(res.status, 200);
    const engine = (await res.json()).stores.documentStore.engine;
    assert.is(engine.engine, "sqlite");
    assert.ok(engine.fileBytes > 0 && typeof engine.walBytes === "number" && typeof engine.freeBytes === "number", JSON.stringify(engine));
    assert.ok(engine.commits >= 20, JSON.stringify(engine));
    assert.ok(engine.commitMs.p99 >= engine.commitMs.p50 && engine.commitMs.p50 > 0, JSON.stringify(engine));
    assert.ok(engine.cacheLimitBytes > 0);
    assert.is(engine.readCache, undefined, "not opened as the file's sole writer: every read asks SQLite");

    for (let i = 0; i < 5; i++) {
      const m = await tg.call("/metrics", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
      assert.is(m.status, 200);
      const families = new Map(parsePrometheusTextFormat(await m.text()).map((f) => [f.name, f]));
      const bytes = families.get("gatehouse_document_store_bytes")!;
      assert.equal(bytes.metrics.map((s) => s.labels?.part).sort(), ["file", "free", "wal"]);
      assert.is(Number(bytes.metrics.find((s) => s.labels?.part === "file")!.value), engine.fileBytes);
      assert.equal(families.get("gatehouse_document_store_commit_seconds")!.metrics.map((s) => s.labels?.stat), ["last", "p50", "p99"]);
      assert.is(Number(families.get("gatehouse_document_store_commits")!.metrics[0]!.value), engine.commits);
      assert.is(Number(families.get("gatehouse_document_store_cache_limit_bytes")!.metrics[0]!.value), engine.cacheLimitBytes);
    }
    assert.is(statsCalls, calls, "neither the snapshot nor a scrape asked the store");
  } finally {
    await tg.close();
  }
});

test("the in-memory SQLite store reports its figures too, without a WAL (an in-memory database has none)", async () => {
  const tg = await startTestGateway({ patch: { dependencies: { healthRefreshMs: 600_000 } } });
  try {
    const snap = await (await tg.call("/health/dependencies", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } })).json();
    assert.is(snap.stores.documentStore.engine.engine, "sqlite");
    assert.is(snap.stores.documentStore.engine.walBytes, undefined);
    // One connection, this process's only writer: its point reads are remembered between writes.
    const reads = snap.stores.documentStore.engine.readCache;
    assert.ok(reads.hits + reads.misses > 0 && reads.entries >= 0, JSON.stringify(reads));
    const m = await tg.call("/metrics", { host: "localhost", headers: { "x-admin-api-key": ADMIN_KEY } });
    const families = new Map(parsePrometheusTextFormat(await m.text()).map((f) => [f.name, f]));
    assert.equal(families.get("gatehouse_document_store_remembered_reads")!.metrics.map((s) => s.labels?.answer), ["hit", "miss"]);
    assert.is(Number(families.get("gatehouse_document_store_remembered_answers")!.metrics[0]!.value), reads.entries);
  } finally {
    await tg.close();
  }
});

test.run();
