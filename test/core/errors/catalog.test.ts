import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CATALOG, type GwCode } from "../../../core/errors/catalog.ts";

const SPEC = new URL("../../../../shared/spec/invoice-gateway-service.md", import.meta.url);

interface SpecRow {
  code: string;
  status: number;
  strategy: string;
  sameKey: boolean;
}

function specRows(): SpecRow[] {
  const rows: SpecRow[] = [];
  for (const line of readFileSync(SPEC, "utf8").split("\n")) {
    const m = /^\| (GW_[A-Z_]+) \| (\d+) \| .* \| (.*) \|$/.exec(line);
    if (!m) continue;
    const strategyCell = m[3]!;
    rows.push({
      code: m[1]!,
      status: Number(m[2]),
      strategy: strategyCell.split(";")[0]!.trim(),
      sameKey: strategyCell.includes("same key"),
    });
  }
  return rows;
}

test("the spec's error tables are readable (guards the parser itself)", () => {
  assert.ok(specRows().length >= 80, "expected the §7.4–§7.10 tables");
});

test("every spec code is in the catalog with its status, strategy and sameIdempotencyKey", () => {
  for (const row of specRows()) {
    const entry = CATALOG[row.code as GwCode];
    assert.ok(entry, `${row.code} missing from the catalog`);
    assert.is(entry.status, row.status, `${row.code} status`);
    assert.is(entry.strategy, row.strategy, `${row.code} strategy`);
    assert.is(entry.sameIdempotencyKey, row.sameKey, `${row.code} sameIdempotencyKey`);
  }
});

test("the catalog has no code the spec does not name (no invented public codes)", () => {
  const spec = new Set(specRows().map((r) => r.code));
  for (const code of Object.keys(CATALOG)) assert.ok(spec.has(code), `${code} is not in the spec`);
});

test("every row has a title, an action code and a description", () => {
  for (const [code, e] of Object.entries(CATALOG)) {
    assert.ok(e.title.length > 0, `${code} title`);
    assert.match(e.action, /^[A-Z_]+$/, `${code} action`);
    assert.ok(e.description.length > 0, `${code} description`);
  }
});

test.run();
