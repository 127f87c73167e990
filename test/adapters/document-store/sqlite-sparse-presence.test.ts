/**
 * Sparse indexes on presence columns (adapters/document-store/sqlite/keys.ts `presenceColumn`,
 * schema.ts, rows.ts, upgrade.ts `upgradeSparseIndexes`): every write keeps each sparse path's
 * presence column as `json_type(doc, path) IS NOT NULL` computes it; an update that leaves a sparse
 * field alone writes no presence column; and a file whose sparse indexes read `doc` (plain key
 * columns, before presence columns) is upgraded once at open, its unique sparse keys, queries and
 * plans intact.
 */
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openConnection } from "../../../adapters/document-store/sqlite/connection.ts";
import { ident, presenceColumn, presenceExpr, tableName } from "../../../adapters/document-store/sqlite/keys.ts";
import { updateSql } from "../../../adapters/document-store/sqlite/rows.ts";
import { loadSchema } from "../../../adapters/document-store/sqlite/schema.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { upgradeKeyColumns, upgradeSparseIndexes } from "../../../adapters/document-store/sqlite/upgrade.ts";
import { isDuplicateKeyError, type CollectionSpec, type Doc } from "../../../adapters/ports.ts";
import { writeGeneratedColumnsFile } from "../../support/generated-key-columns.ts";
import { withSqliteFile } from "../../support/sqlite-file.ts";
import { tempDir } from "../../support/temp.ts";

const SPEC: CollectionSpec = {
  indexes: [{ fields: ["intakeKey"], unique: true, sparse: true }, { fields: ["linkId", "formToken"], unique: true, sparse: true }, { fields: ["status"] }],
};
const SPARSE = ["intakeKey", "linkId", "formToken"];

test("every write keeps the presence columns; an update that leaves the sparse fields alone sets none", async () => {
  const file = join(tempDir("presence"), "gatehouse.db");
  const store = await createSqliteDocumentStore({ file });
  try {
    const c = store.collection<Doc>("invoices", SPEC);
    await c.insert({ _id: "a", intakeKey: "K1", status: "new" });
    await c.insertMany([{ _id: "b", intakeKey: null, linkId: "L", formToken: "F" }, { _id: "c", status: "new" }]);
    await c.updateOne({ _id: "a", status: "new" }, { $set: { status: "done" } });
    await c.updateOne({ _id: "c" }, { $set: { intakeKey: "K3", linkId: "L" } });
    await c.findOneAndUpdate({ _id: "b" }, { $unset: ["intakeKey"], $inc: { n: 1 } });
    await c.findOneAndUpdate({ _id: "d", status: "x" }, { $set: { formToken: "F2", linkId: "L" } }, { upsert: true });
    assert.is(_stalePresence(file), 0);
    assert.equal(_presence(file), { a: [1, 0, 0], b: [0, 1, 1], c: [1, 1, 0], d: [0, 1, 1] });
    const schema = withSqliteFile(file, (conn) => loadSchema(conn, "invoices"));
    assert.ok(!updateSql(schema, ["status"]).includes("p_"), "status is no sparse field");
    assert.ok(updateSql(schema, ["intakeKey"]).includes(ident(presenceColumn("intakeKey"))));
    const clash = await c.insert({ _id: "e", linkId: "L", formToken: "F" }).catch((e: unknown) => e);
    assert.ok(isDuplicateKeyError(clash) && clash.index === "linkId_1_formToken_1", String(clash));
    await c.insert({ _id: "f", linkId: "L" }); // formToken missing: not in the sparse index
    assert.equal((await c.find({ intakeKey: "K3" })).items.map((d) => d._id), ["c"]);
    assert.ok(store.explain("invoices", { intakeKey: "K3" }).plan.some((l) => l.includes("intakeKey_1/unique/sparse")));
  } finally {
    await store.close();
  }
});

test("a file whose sparse indexes read doc: presence columns added and filled, indexes created on them, once", async () => {
  const file = join(tempDir("presence-upgrade"), "gatehouse.db");
  writeGeneratedColumnsFile(file, {
    invoices: {
      spec: SPEC,
      docs: [
        { _id: "a", intakeKey: "K1", status: "new" },
        { _id: "b", intakeKey: null, linkId: "L", formToken: "F" },
        { _id: "c", status: "new" },
      ],
    },
  });
  const conn = openConnection({ file, busyTimeoutMs: 1000, synchronous: "FULL" });
  try {
    assert.is(upgradeKeyColumns(conn), 1, "plain key columns first: the layout before presence columns");
  } finally {
    conn.close();
  }
  assert.is(_docIndexes(file), 2, "both sparse indexes read doc");

  const store = await createSqliteDocumentStore({ file });
  try {
    assert.is(_docIndexes(file), 0, "no index reads doc");
    assert.equal(_presence(file), { a: [1, 0, 0], b: [1, 1, 1], c: [0, 0, 0] });
    const c = store.collection<Doc>("invoices", SPEC);
    const clash = await c.insert({ _id: "x", intakeKey: null }).catch((e: unknown) => e);
    assert.ok(isDuplicateKeyError(clash) && clash.index === "intakeKey_1", "null is present: b holds it");
    await c.insert({ _id: "y", status: "new" }); // missing: not in the sparse index, as c
    assert.equal((await c.find({ linkId: "L", formToken: "F" })).items.map((d) => d._id), ["b"]);
    assert.ok(store.explain("invoices", { intakeKey: "K1" }).plan.some((l) => l.includes("intakeKey_1/unique/sparse")));
  } finally {
    await store.close();
  }
  assert.is(withSqliteFile(file, upgradeSparseIndexes, "write"), 0, "a second open finds nothing to do");
});

test.run();

// --- Internal helpers ---

/** Each document's presence columns, in SPARSE's order. */
function _presence(file: string): Record<string, number[]> {
  return withSqliteFile(file, (conn) => {
    const cols = SPARSE.map((p) => ident(presenceColumn(p))).join(", ");
    const rows = conn.all(`SELECT _id, ${cols} FROM ${ident(tableName("invoices"))} ORDER BY _id`);
    return Object.fromEntries(rows.map((r) => [r[0] as string, r.slice(1) as number[]]));
  });
}

function _stalePresence(file: string): number {
  return withSqliteFile(file, (conn) => {
    const terms = SPARSE.map((p) => `${ident(presenceColumn(p))} IS NOT (${presenceExpr(p)})`).join(" OR ");
    return conn.get(`SELECT count(*) FROM ${ident(tableName("invoices"))} WHERE ${terms}`)![0] as number;
  });
}

function _docIndexes(file: string): number {
  return withSqliteFile(file, (conn) => conn.get("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? AND sql LIKE '%json_type(doc%'", [tableName("invoices")])![0] as number);
}
