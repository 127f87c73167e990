/**
 * The dependency rule (docs/architecture.md "Allowed imports"): every import of the product follows
 * the table, and no folder or file imports itself back. The checker's own cases show that each
 * kind of forbidden import is caught.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { RULES, fileCycles, folderCycles, importsOf, layeringViolations, readImports, type ImportEdge } from "./support/layering.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const edges = readImports(ROOT);

test("every import of the product follows the table of allowed imports", () => {
  assert.ok(edges.length > 500, "the checker found the product's imports");
  const violations = layeringViolations(edges);
  assert.equal(violations, [], `forbidden imports:\n${violations.join("\n")}`);
});

test("no import cycle between folders (each plugin and adapter counted on its own)", () => {
  assert.equal(folderCycles(edges), []);
});

test("no import cycle between files", () => {
  assert.equal(fileCycles(edges), []);
});

test("docs/architecture.md shows the same table the test checks", () => {
  const doc = readFileSync(new URL("../docs/architecture.md", import.meta.url), "utf8");
  for (const rule of RULES) assert.ok(doc.includes(`| \`${rule.files}\` |`), `docs/architecture.md has a row for ${rule.files}`);
});

// --- The checker's own cases: each forbidden import is caught, each allowed one passes ---

/** The violations of one synthetic file's source. */
function violationsOf(from: string, source: string): string[] {
  return layeringViolations(importsOf(from, source));
}

test("core importing a stage, an adapter implementation or a plugin is refused", () => {
  assert.is(violationsOf("core/x.ts", `import { STAGES } from "../pipeline/stages.ts";`).length, 1);
  assert.is(violationsOf("core/x.ts", `import { createPolicyRegistry } from "../adapters/policies.ts";`).length, 1);
  assert.is(violationsOf("core/http/x.ts", `import { plugins } from "../../plugins/index.ts";`).length, 1);
  assert.is(violationsOf("core/x.ts", `import { loadConfig } from "../config/load.ts";`).length, 1, "config's loader at run time");
  assert.equal(violationsOf("core/x.ts", `import type { Config } from "../config/schema.ts";`), [], "config types are allowed");
  assert.equal(violationsOf("core/x.ts", `import { isDuplicateKeyError } from "../adapters/ports.ts";\nimport type { RegulatorClient } from "../adapters/regulator/port.ts";`), []);
});

test("a plugin importing another plugin's folder is refused; the invoice kit, core and the ports are not", () => {
  const v = violationsOf("plugins/recovery/jobs.ts", `import { openSigningStore } from "../signing/store.ts";`);
  assert.is(v.length, 1);
  assert.match(v[0]!, /plugins\/recovery\/jobs\.ts imports plugins\/signing\/store\.ts/);
  assert.equal(
    violationsOf(
      "plugins/recovery/jobs.ts",
      `import { x } from "./own.ts";\nimport { y } from "../invoice/records.ts";\nimport { gwError } from "../../core/errors/gateway-error.ts";\nimport type { Doc } from "../../adapters/ports.ts";`,
    ),
    [],
  );
  assert.is(violationsOf("plugins/invoice/x.ts", `import { s } from "../signing/service.ts";`).length, 1, "the kit imports no plugin");
  assert.equal(violationsOf("plugins/index.ts", `import { signing } from "./plugins/signing/plugin.ts";`), [], "the plugin list");
});

test("adapters never import pipeline or plugins; config imports nothing else", () => {
  assert.is(violationsOf("adapters/regulator/http/x.ts", `import { HOP } from "../../../pipeline/routing-loop.ts";`).length, 1);
  assert.is(violationsOf("adapters/x.ts", `import type { SubBusinessDoc } from "../plugins/invoice/represented-businesses.ts";`).length, 1);
  assert.equal(violationsOf("adapters/x.ts", `import { describeError } from "../core/log.ts";`), []);
  assert.is(violationsOf("config/load.ts", `import { webhookUrlProblems } from "../adapters/alerts/context.ts";`).length, 1);
});

test("the client names server types only: a run-time import of server code is refused", () => {
  assert.equal(violationsOf("client/types.ts", `import type { GwCode } from "../core/errors/catalog.ts";`), []);
  assert.is(violationsOf("client/types.ts", `import { CATALOG } from "../core/errors/catalog.ts";`).length, 1);
  assert.is(violationsOf("client/x.ts", `import { type GwCode, CATALOG } from "../core/errors/catalog.ts";`).length, 1, "one run-time name makes it a run-time import");
});

test("the parser sees every kind of import: re-exports, dynamic imports and import() types", () => {
  const found = importsOf(
    "core/x.ts",
    [
      `export { a } from "./a.ts";`,
      `export type { B } from "./b.ts";`,
      `const m = await import("../boot/compose.ts");`,
      `let t: import("../pipeline/stages.ts").X;`,
      `import "./side-effect.ts";`,
      `import { readFileSync } from "node:fs";`,
    ].join("\n"),
  );
  assert.equal(
    found.map((e) => [e.to, e.typeOnly]),
    [
      ["core/a.ts", false],
      ["core/b.ts", true],
      ["boot/compose.ts", false],
      ["pipeline/stages.ts", true],
      ["core/side-effect.ts", false],
    ],
  );
  assert.is(layeringViolations(found).length, 2, "the dynamic boot import and the pipeline type");
});

test("cycles are found between files and between folders, through run-time imports only", () => {
  const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, typeOnly });
  assert.equal(fileCycles([edge("core/a.ts", "core/b.ts"), edge("core/b.ts", "core/c.ts"), edge("core/c.ts", "core/a.ts")]), [["core/a.ts", "core/b.ts", "core/c.ts"]]);
  assert.equal(fileCycles([edge("core/a.ts", "core/b.ts"), edge("core/b.ts", "core/a.ts", true)]), [], "a type-only edge closes no loop");
  assert.equal(folderCycles([edge("core/a.ts", "pipeline/s.ts"), edge("pipeline/s.ts", "core/b.ts")]), [["core", "pipeline"]]);
  assert.equal(folderCycles([edge("plugins/a/x.ts", "plugins/b/y.ts"), edge("plugins/b/y.ts", "plugins/a/z.ts")]), [["plugins/a", "plugins/b"]]);
  assert.equal(folderCycles([edge("adapters/policies.ts", "adapters/policies/circuit.ts"), edge("adapters/policies/circuit.ts", "adapters/ports.ts")]), []);
});

test.run();
