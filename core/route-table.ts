/**
 * The route table, derived from plugin declarations once at boot. Routes live on three surfaces:
 * gateway (approved domains), collections (collections hosts) and any (every host: health,
 * OpenAPI). A lookup answers the route, or the Allow list of a path known under other methods
 * (405), or nothing (404). Boot errors (duplicates, bad declarations) are BootErrors.
 *
 * Mode variants: one method + path may be declared more than once when every declaration names
 * `modes` and no mode is claimed twice (Pass-through sign and Stored intake share
 * `POST /api/v1/invoice/sign`, with different bodies). What the stages before "mode" read (service,
 * hosts, auth, quota, body limit, content types, skips) must be the same in every variant: the
 * lookup answers the first-declared variant, and the mode stage swaps in the one of the domain's
 * mode through `modeRoutes`, planned here once per route (a route without modes has none).
 */
import { addRoute, createRouter, findRoute, type RouterContext } from "rou3";
import type { Config } from "../config/schema.ts";
import type { HostKind } from "./context.ts";
import type { Mode } from "./directory.ts";
import type { GatewayPlugin, QuotaClass, RouteDeclaration } from "./plugin.ts";
import { declarationProblems } from "./route-table/checks.ts";
import type { StageName } from "./stages/names.ts";

export type Surface = "gateway" | "collections" | "any";

export interface CompiledRoute {
  /** "METHOD /pattern": the route's name in logs, quotas and OpenAPI. */
  readonly id: string;
  readonly plugin: string;
  readonly surface: Surface;
  readonly decl: RouteDeclaration;
  readonly bodyLimit: number;
  readonly accepts: ReadonlySet<string>;
  readonly quota: QuotaClass;
  readonly skips: ReadonlySet<StageName>;
  /**
   * The route serving each mode, or null when this route answers in every mode (no `modes`). A null
   * entry is a mode the method + path is not offered in (409 GW_OPERATION_MODE_CONFLICT). The mode
   * variants of one method + path share one table.
   */
  readonly modeRoutes: Readonly<Record<Mode, CompiledRoute | null>> | null;
}

interface PathEntry {
  pattern: string;
  /** The route of each method: its first-declared mode variant when it has several. */
  methods: Map<string, CompiledRoute>;
  /** Every declaration of each method (mode variants), in declaration order. */
  variants: Map<string, CompiledRoute[]>;
  allow: string;
}

export type RouteMatch =
  | { kind: "found"; route: CompiledRoute; params: Record<string, string> }
  | { kind: "method"; allow: string }
  /** `servedOn`: the other surface declares the path (an invoice route asked on a collections host, or the reverse). */
  | { kind: "none"; servedOn?: "gateway" | "collections" };

export class BootError extends Error {
  readonly isBootError = true;
  constructor(readonly problems: string[]) {
    super(`gateway boot failed:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "BootError";
  }
}

export interface RouteTable {
  lookup(hostKind: HostKind, method: string, path: string): RouteMatch;
  /** True when `path` has a route on the any-host surface (answers on unprovisioned hosts too). */
  isAnyHostPath(path: string): boolean;
  routes(): readonly CompiledRoute[];
}

export function buildRouteTable(
  config: Config,
  entries: ReadonlyArray<{ plugin: GatewayPlugin; routes: RouteDeclaration[] }>,
): RouteTable {
  const t: _Building = {
    problems: [],
    routers: { gateway: createRouter(), collections: createRouter(), any: createRouter() },
    byPattern: new Map(),
    all: [],
  };
  for (const { plugin, routes } of entries) for (const decl of routes) _declare(t, config, plugin.name, decl);
  _planModeRoutes(t.byPattern);
  // A service path that shadows an any-host path would make health or OpenAPI unreachable.
  for (const r of t.all) {
    if (r.surface !== "any" && findRoute(t.routers.any, "", r.decl.path))
      t.problems.push(`plugin "${r.plugin}" route ${r.id}: shadows an any-host route`);
  }
  if (t.problems.length > 0) throw new BootError(t.problems);
  return _lookupTable(t.routers, t.all);
}

// --- Internal helpers ---

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

type _MutableRoute = { -readonly [K in keyof CompiledRoute]: CompiledRoute[K] };

/** The table while declarations are read. */
interface _Building {
  problems: string[];
  routers: Record<Surface, RouterContext<PathEntry>>;
  /** By "surface normalized-pattern". */
  byPattern: Map<string, PathEntry>;
  all: CompiledRoute[];
}

/** Checks and compiles one declaration, and adds it to its path (a new method, or a mode variant). */
function _declare(t: _Building, config: Config, plugin: string, decl: RouteDeclaration): void {
  const where = `plugin "${plugin}" route ${decl.method} ${decl.path}`;
  t.problems.push(...declarationProblems(decl, where));
  const route = _compile(config, plugin, decl);
  const entry = _pathEntry(t, route.surface, decl.path, where);
  const declared = entry.variants.get(decl.method);
  if (declared) {
    const problem = _variantProblem(declared, route);
    if (problem) {
      t.problems.push(`${where}: ${problem}`);
      return;
    }
    declared.push(route);
  } else {
    entry.variants.set(decl.method, [route]);
    entry.methods.set(decl.method, route);
    entry.allow = [...entry.methods.keys()].sort().join(", ");
  }
  t.all.push(route);
}

function _compile(config: Config, plugin: string, decl: RouteDeclaration): _MutableRoute {
  const bodyLimit =
    typeof decl.bodyLimit === "number" ? decl.bodyLimit : decl.bodyLimit === "large" ? config.limits.largeBodyBytes : config.limits.bodyBytes;
  return {
    id: `${decl.method} ${decl.path}`,
    plugin,
    surface: decl.hosts === "any" ? "any" : decl.service,
    decl,
    bodyLimit,
    accepts: new Set(decl.accepts ?? ["application/json"]),
    quota: decl.quota ?? (decl.auth === "none" ? "none" : "default"),
    skips: new Set(decl.skip ?? []),
    modeRoutes: null,
  };
}

/** The entry of a path on its surface, created (and routed) on first sight. */
function _pathEntry(t: _Building, surface: Surface, path: string, where: string): PathEntry {
  const key = `${surface} ${_normalizePattern(path)}`;
  let entry = t.byPattern.get(key);
  if (!entry) {
    entry = { pattern: path, methods: new Map(), variants: new Map(), allow: "" };
    t.byPattern.set(key, entry);
    addRoute(t.routers[surface], "", path, entry);
  } else if (entry.pattern !== path) {
    t.problems.push(`${where}: same path shape as ${entry.pattern} with other parameter names`);
  }
  return entry;
}

/** Mode tables, planned once: the mode stage does one lookup per request, none for routes without modes. */
function _planModeRoutes(byPattern: Map<string, PathEntry>): void {
  for (const entry of byPattern.values()) {
    for (const variants of entry.variants.values()) {
      if (!variants[0]!.decl.modes) continue;
      const table: Record<Mode, CompiledRoute | null> = { passthrough: null, stored: null };
      for (const v of variants) for (const mode of v.decl.modes!) table[mode] = v;
      const frozen = Object.freeze(table);
      for (const v of variants) (v as _MutableRoute).modeRoutes = frozen;
    }
  }
}

function _lookupTable(routers: Record<Surface, RouterContext<PathEntry>>, all: readonly CompiledRoute[]): RouteTable {
  const lookupIn = (surface: Surface, path: string) => findRoute(routers[surface], "", path);
  const _none = (hostKind: string, path: string): RouteMatch => {
    const other = hostKind === "gateway" ? "collections" : hostKind === "collections" ? "gateway" : null;
    return other && lookupIn(other, path) ? { kind: "none", servedOn: other } : { kind: "none" };
  };
  return {
    lookup(hostKind, method, path) {
      const hit = lookupIn("any", path) ?? (hostKind === "unknown" ? undefined : lookupIn(hostKind, path));
      if (!hit) return _none(hostKind, path);
      const route = hit.data.methods.get(method === "HEAD" ? "GET" : method);
      if (!route) return { kind: "method", allow: hit.data.allow };
      // rou3 builds a fresh params object per match; the route stage reads it once and decodes.
      return { kind: "found", route, params: hit.params ?? NO_PARAMS };
    },
    isAnyHostPath: (path) => findRoute(routers.any, "", path) !== undefined,
    routes: () => all,
  };
}

/**
 * Why `route` cannot be another declaration of a method + path already declared by `declared`, or
 * null when it is a valid mode variant: every declaration names modes, no mode twice, and the
 * stages before "mode" see the same route whichever variant the domain's mode selects.
 */
function _variantProblem(declared: readonly CompiledRoute[], route: CompiledRoute): string | null {
  const first = declared[0]!;
  const duplicate = `duplicate route (already declared by plugin "${first.plugin}")`;
  if (!route.decl.modes || declared.some((d) => !d.decl.modes)) return duplicate;
  const taken = declared.find((d) => d.decl.modes!.some((m) => route.decl.modes!.includes(m)));
  if (taken) return `${duplicate} for the same mode`;
  const differs: string[] = [];
  if (route.decl.service !== first.decl.service) differs.push("service");
  if (route.surface !== first.surface) differs.push("hosts");
  if (route.decl.auth !== first.decl.auth) differs.push("auth");
  if (route.quota !== first.quota) differs.push("quota");
  if (route.bodyLimit !== first.bodyLimit) differs.push("bodyLimit");
  if (!_sameSet(route.accepts, first.accepts)) differs.push("accepts");
  if (!_sameSet(route.skips, first.skips)) differs.push("skip");
  if (differs.length > 0) return `a mode variant of plugin "${first.plugin}"'s route must declare the same ${differs.join(", ")}`;
  if (route.skips.has("mode")) return "a mode variant cannot skip the mode stage";
  return null;
}

function _sameSet<T>(a: ReadonlySet<T>, b: ReadonlySet<T>): boolean {
  return a.size === b.size && [...a].every((x) => b.has(x));
}

function _normalizePattern(path: string): string {
  return path.replace(/:[A-Za-z0-9_]+/g, ":");
}
