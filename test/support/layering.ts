/**
 * The dependency rule of docs/architecture.md as data, and the checker test/layering.test.ts runs
 * over the product's sources: every relative import of a product file is classified (runtime or
 * type-only) and checked against the table of allowed imports; import cycles between folders and
 * between files are reported.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";

/** The folders whose files the rule governs (test/, bench/, scripts/ and docs/ may import anything). */
export const PRODUCT_FOLDERS = ["boot", "core", "pipeline", "plugins", "adapters", "config", "cli", "client", "deploy"] as const;

/** The files every layer may import besides its own: the ports (interfaces and the regulator's contract). */
export const PORT_FILES = ["adapters/ports.ts", "adapters/ports/", "adapters/regulator/port.ts", "adapters/regulator/port-types/", "adapters/regulator/irn.ts"];

export interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

export interface Rule {
  /** Which files the row governs (a folder prefix, or a file). */
  files: string;
  /** What they may import at run time (prefixes; "own" = the importing plugin's own folder). */
  may: readonly string[];
  /** What they may import with `import type` only (erased at run time). */
  mayTypes?: readonly string[];
  why: string;
}

/** The table of allowed imports. The first row whose `files` prefix matches a file governs it. */
export const RULES: readonly Rule[] = [
  { files: "boot/", may: ["*"], why: "the composition root: config → adapters → plugins → gateway" },
  { files: "deploy/", may: ["deploy/", "config/", "core/"], why: "renders the edge's config from a gateway config" },
  { files: "config/", may: ["config/"], why: "the schema and the loader: the bottom layer" },
  { files: "core/", may: ["core/", "ports"], mayTypes: ["config/"], why: "the kernel: its own parts, the ports, the config's types" },
  { files: "pipeline/", may: ["pipeline/", "core/", "ports"], mayTypes: ["config/"], why: "stages see the kernel and the ports only" },
  { files: "plugins/index.ts", may: ["plugins/", "core/"], why: "the plugin list: one import per plugin" },
  { files: "plugins/invoice/", may: ["plugins/invoice/", "core/", "ports"], mayTypes: ["config/"], why: "the invoice domain kit the invoice plugins share" },
  { files: "plugins/", may: ["own", "plugins/invoice/", "core/", "ports"], mayTypes: ["config/"], why: "a plugin: its own folder, the invoice kit, the kernel, the ports" },
  { files: "adapters/", may: ["adapters/", "core/", "config/"], why: "implementations behind the ports; never pipeline or plugins" },
  { files: "cli/", may: ["cli/", "config/", "core/", "boot/"], why: "the operator CLI: an Admin API client, plus the config commands' wiring" },
  { files: "client/", may: ["client/"], mayTypes: ["core/", "plugins/"], why: "the published merchant client: runs on its own; names server types only" },
];

/** Every product file's relative imports (runtime and type-only), found by TypeScript's parser. */
export function readImports(root: string): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const folder of PRODUCT_FOLDERS)
    for (const file of _walk(join(root, folder))) {
      const from = relative(root, file);
      edges.push(...importsOf(from, readFileSync(file, "utf8")));
    }
  return edges;
}

/** The relative imports of one file's source (paths relative to the project root). */
export function importsOf(from: string, source: string): ImportEdge[] {
  const sf = ts.createSourceFile(from, source, ts.ScriptTarget.Latest, false);
  const edges: ImportEdge[] = [];
  const add = (spec: string, typeOnly: boolean) => {
    if (!spec.startsWith(".")) return; // packages and node: builtins
    edges.push({ from, to: normalize(join(dirname(from), spec)), typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, _typeOnlyImport(node));
    else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) add(node.moduleSpecifier.text, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteral(node.arguments[0]))
      add(node.arguments[0].text, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) add(node.argument.literal.text, true);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return edges;
}

/** Imports the table does not allow, one line each. */
export function layeringViolations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const e of edges) {
    const rule = RULES.find((r) => e.from === r.files || e.from.startsWith(r.files));
    if (!rule) continue;
    if (_allowed(rule.may, e) || (e.typeOnly && _allowed(rule.mayTypes ?? [], e))) continue;
    out.push(`${e.from} imports ${e.to}${e.typeOnly ? " (type)" : ""}: ${rule.files} may import ${_describe(rule)}`);
  }
  return out;
}

/**
 * Cycles among files, each as its sorted members. Run-time imports only: `import type` is erased,
 * and types that refer to each other across files (a route's handler takes the request context,
 * whose route slot is the route) are not a loading order.
 */
export function fileCycles(edges: readonly ImportEdge[]): string[][] {
  return _cycles(edges.filter((e) => !e.typeOnly).map((e) => [e.from, e.to] as const));
}

/** Cycles among folders (see `folderOf`), run-time imports only, as for files. */
export function folderCycles(edges: readonly ImportEdge[]): string[][] {
  return _cycles(edges.filter((e) => !e.typeOnly).map((e) => [folderOf(e.from), folderOf(e.to)] as const).filter(([a, b]) => a !== b));
}

/**
 * The unit a file belongs to for folder cycles: a top-level folder, except that each plugin and
 * each adapter is its own unit (`plugins/signing`, `adapters/policies` for both policies.ts and
 * policies/).
 */
export function folderOf(file: string): string {
  const parts = file.split("/");
  if ((parts[0] === "plugins" || parts[0] === "adapters") && parts.length > 1) return `${parts[0]}/${parts[1]!.replace(/\.ts$/, "")}`;
  return parts[0]!;
}

// --- Internal helpers ---

function _allowed(prefixes: readonly string[], e: ImportEdge): boolean {
  return prefixes.some((p) => {
    if (p === "*") return true;
    if (p === "ports") return PORT_FILES.some((f) => e.to === f || (f.endsWith("/") && e.to.startsWith(f)));
    if (p === "own") return folderOf(e.to) === folderOf(e.from);
    return e.to.startsWith(p);
  });
}

function _describe(rule: Rule): string {
  const names = (ps: readonly string[]) => ps.map((p) => (p === "own" ? "its own folder" : p === "ports" ? "the port files" : p)).join(", ");
  return names(rule.may) + (rule.mayTypes?.length ? `; types from ${names(rule.mayTypes)}` : "");
}

function _typeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (!clause) return false; // a side-effect import runs the module
  if (clause.isTypeOnly) return true;
  if (clause.name) return false;
  const bindings = clause.namedBindings;
  return bindings !== undefined && ts.isNamedImports(bindings) && bindings.elements.length > 0 && bindings.elements.every((el) => el.isTypeOnly);
}

/** Strongly connected components with more than one node (Tarjan), each as a sorted list. */
function _cycles(pairs: ReadonlyArray<readonly [string, string]>): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!graph.has(a)) graph.set(a, new Set());
    if (!graph.has(b)) graph.set(b, new Set());
    graph.get(a)!.add(b);
  }
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const connect = (v: string) => {
    indexOf.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)!) {
      if (!indexOf.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, indexOf.get(w)!));
    }
    if (low.get(v) === indexOf.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) out.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!indexOf.has(v)) connect(v);
  return out;
}

function _walk(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) return n === "node_modules" ? [] : _walk(p);
    return p.endsWith(".ts") && !p.endsWith(".d.ts") ? [p] : [];
  });
}
