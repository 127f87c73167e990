// Lists source files over N lines and functions over M lines. Usage: npx tsx /work/tools/shape.ts [dirs...]
import ts from "typescript";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
const dirs = process.argv.slice(2).length ? process.argv.slice(2) : ["boot", "core", "pipeline", "plugins", "adapters", "config", "cli", "client"];
const FILE_MAX = Number(process.env.FILE_MAX ?? 400), FN_MAX = Number(process.env.FN_MAX ?? 80);
function walk(d: string): string[] { try { return readdirSync(d).flatMap((n) => { const p = join(d, n); return statSync(p).isDirectory() ? walk(p) : p.endsWith(".ts") ? [p] : []; }); } catch { return []; } }
for (const f of dirs.flatMap(walk)) {
  const text = readFileSync(f, "utf8"); const lines = text.split("\n").length;
  if (lines > FILE_MAX) console.log(`FILE ${lines} ${f}`);
  const sf = ts.createSourceFile(f, text, ts.ScriptTarget.Latest, true);
  const visit = (n: ts.Node) => {
    if (ts.isFunctionDeclaration(n) || ts.isFunctionExpression(n) || ts.isArrowFunction(n) || ts.isMethodDeclaration(n) || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n)) {
      const a = sf.getLineAndCharacterOfPosition(n.getStart()).line, b = sf.getLineAndCharacterOfPosition(n.getEnd()).line;
      if (b - a + 1 > FN_MAX) { const name = (n as any).name?.getText?.() ?? (ts.isVariableDeclaration(n.parent) ? n.parent.name.getText() : ts.isPropertyAssignment(n.parent) ? n.parent.name.getText() : "<anon>"); console.log(`FN   ${b - a + 1} ${f}:${a + 1} ${name}`); }
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
}
