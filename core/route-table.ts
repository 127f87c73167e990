/**
 * The route table, derived from plugin declarations once at boot. Routes live on three surfaces:
 * gateway (approved domains), collections (collections hosts) and any (every host: health,
 * OpenAPI). A lookup answers the route, or the Allow list of a path known under other methods
 * (405), or nothing (404). Boot errors (duplicates, bad declarations) are BootErrors.
 */
import { addRoute, createRouter, findRoute, type RouterContext } from "rou3";
import type { Config } from "../config/schema.ts";
import type { HostKind } from "./context.ts";
import type { GatewayPlugin, QuotaClass, RouteDeclaration } from "./plugin.ts";
import { MANDATORY_STAGES, isStageName, type StageName } from "../pipeline/stage-names.ts";

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
}

interface PathEntry {
  pattern: string;
  methods: Map<string, CompiledRoute>;
  allow: string;
}

export type RouteMatch =
  | { kind: "found"; route: CompiledRoute; params: Record<string, string> }
  | { kind: "method"; allow: string }
  | { kind: "none" };

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
  const problems: string[] = [];
  const routers: Record<Surface, RouterContext<PathEntry>> = {
    gateway: createRouter(),
    collections: createRouter(),
    any: createRouter(),
  };
  const byPattern = new Map<string, PathEntry>();
  const all: CompiledRoute[] = [];

  for (const { plugin, routes } of entries) {
    for (const decl of routes) {
      const id = `${decl.method} ${decl.path}`;
      const where = `plugin "${plugin.name}" route ${id}`;
      if (!decl.path.startsWith("/")) problems.push(`${where}: path must start with "/"`);
      for (const s of decl.skip ?? []) {
        if (!isStageName(s)) problems.push(`${where}: skips unknown stage "${s}"`);
        else if (MANDATORY_STAGES.includes(s)) problems.push(`${where}: stage "${s}" cannot be skipped`);
      }
      if (decl.auth === "none" && decl.idempotent) problems.push(`${where}: an idempotent mutation needs authentication`);
      if (decl.modes && decl.service !== "gateway") problems.push(`${where}: modes apply to gateway routes only`);
      if (decl.auth === "bearer" && decl.service !== "collections") problems.push(`${where}: Bearer auth is for collections routes`);
      if (decl.auth === "apiKey" && decl.service !== "gateway") problems.push(`${where}: x-api-key auth is for gateway routes`);
      if (decl.auth === "apiKey" && decl.hosts === "any") problems.push(`${where}: x-api-key routes answer on approved domains only`);
      const surface: Surface = decl.hosts === "any" ? "any" : decl.service;
      const bodyLimit =
        typeof decl.bodyLimit === "number"
          ? decl.bodyLimit
          : decl.bodyLimit === "large"
            ? config.limits.largeBodyBytes
            : config.limits.bodyBytes;
      const route: CompiledRoute = {
        id,
        plugin: plugin.name,
        surface,
        decl,
        bodyLimit,
        accepts: new Set(decl.accepts ?? ["application/json"]),
        quota: decl.quota ?? (decl.auth === "none" ? "none" : "default"),
        skips: new Set(decl.skip ?? []),
      };
      const key = `${surface} ${_normalizePattern(decl.path)}`;
      let entry = byPattern.get(key);
      if (!entry) {
        entry = { pattern: decl.path, methods: new Map(), allow: "" };
        byPattern.set(key, entry);
        addRoute(routers[surface], "", decl.path, entry);
      } else if (entry.pattern !== decl.path) {
        problems.push(`${where}: same path shape as ${entry.pattern} with other parameter names`);
      }
      const clash = entry.methods.get(decl.method);
      if (clash) {
        problems.push(`${where}: duplicate route (already declared by plugin "${clash.plugin}")`);
        continue;
      }
      entry.methods.set(decl.method, route);
      entry.allow = [...entry.methods.keys()].sort().join(", ");
      all.push(route);
    }
  }
  // A service path that shadows an any-host path would make health or OpenAPI unreachable.
  for (const r of all) {
    if (r.surface !== "any" && findRoute(routers.any, "", r.decl.path))
      problems.push(`plugin "${r.plugin}" route ${r.id}: shadows an any-host route`);
  }
  if (problems.length > 0) throw new BootError(problems);

  const lookupIn = (surface: Surface, path: string) => findRoute(routers[surface], "", path);
  return {
    lookup(hostKind, method, path) {
      const hit = lookupIn("any", path) ?? (hostKind === "unknown" ? undefined : lookupIn(hostKind, path));
      if (!hit) return { kind: "none" };
      const route = hit.data.methods.get(method === "HEAD" ? "GET" : method);
      if (!route) return { kind: "method", allow: hit.data.allow };
      // rou3 builds a fresh params object per match; the route stage reads it once and decodes.
      return { kind: "found", route, params: hit.params ?? NO_PARAMS };
    },
    isAnyHostPath: (path) => findRoute(routers.any, "", path) !== undefined,
    routes: () => all,
  };
}

// --- Internal helpers ---

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

function _normalizePattern(path: string): string {
  return path.replace(/:[A-Za-z0-9_]+/g, ":");
}
