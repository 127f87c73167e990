/**
 * EXPLAIN QUERY PLAN of the statement a query runs, judged: does SQLite find the rows through an
 * index, or walk the collection? A list of product queries is checked through it (a query that
 * scans a collection growing with traffic is a bug).
 */
import type { SqlParam, SqliteConnection } from "./connection.ts";
import type { MatchStatement } from "./queries.ts";
import type { CollectionSchema } from "./schema.ts";

export interface QueryPlan {
  /** The statement explained (its parameters bound as the query would bind them). */
  sql: string;
  /** The plan's lines (EXPLAIN QUERY PLAN's `detail` column), the marker subquery's left out. */
  plan: string[];
  /** A line seeks the collection's rows through an index (`SEARCH <table> USING ... INDEX` or the primary key). */
  usesIndex: boolean;
  /**
   * How the collection is walked, if it is: "table" (every row), "index" (every entry of an index,
   * in its order: cheap only while a LIMIT stops it early), or "none".
   */
  scan: "table" | "index" | "none";
  /**
   * Whether SQLite sorts rows itself (a temporary B-tree): "full" (every match, before the first row
   * comes out), "partial" (only runs of equal leading keys, e.g. the `_id` tie-break after an index's
   * order: rows still stream), or "none".
   */
  sorts: "full" | "partial" | "none";
  /** Some rows are re-checked in JS (the translation is not exact for this filter). */
  jsCheck: boolean;
}

export function explainStatement(conn: SqliteConnection, schema: CollectionSchema, st: MatchStatement, count: boolean): QueryPlan {
  const sql = count ? st.sql.replace(/^SELECT .*? FROM /, "SELECT count(*) FROM ").replace(/ ORDER BY .*$/, "") : `${st.sql} LIMIT 1000`;
  const table = schema.tableRaw;
  const lines = schema.exists ? _explain(conn, `EXPLAIN QUERY PLAN ${sql}`, st.params) : [];
  const plan = lines.filter((l) => !l.includes("/scalar/") && !/^(SCALAR SUBQUERY|CO-ROUTINE|SCAN CONSTANT ROW)/.test(l));
  const onTable = plan.filter((l) => l.startsWith(`SEARCH ${table} `) || l === `SCAN ${table}` || l.startsWith(`SCAN ${table} `));
  const scanLine = onTable.find((l) => l.startsWith("SCAN "));
  return {
    sql,
    plan,
    usesIndex: onTable.some((l) => l.startsWith(`SEARCH ${table} `) && /USING (COVERING )?INDEX|PRIMARY KEY/.test(l)),
    scan: scanLine === undefined ? "none" : /USING (COVERING )?INDEX/.test(scanLine) ? "index" : "table",
    sorts: _sorts(plan),
    jsCheck: st.checked,
  };
}

// --- Internal helpers ---

/**
 * The plan's `detail` lines. libsql leaves an EXPLAIN statement read to its end with `all()` active
 * (a DROP run next on the connection fails with "database table is locked"); `get()` resets it.
 */
function _explain(conn: SqliteConnection, sql: string, params: readonly SqlParam[]): string[] {
  const lines = conn.all(sql, params).map((r) => String(r[3]));
  conn.get(sql, params);
  return lines;
}

function _sorts(plan: readonly string[]): QueryPlan["sorts"] {
  const line = plan.find((l) => l.startsWith("USE TEMP B-TREE FOR") && l.includes("ORDER BY"));
  if (!line) return "none";
  return line.includes("RIGHT PART") || line.includes("LAST TERM") ? "partial" : "full";
}
