/**
 * The fuzz suite's routes and identifiers, from the running gateway itself: every route of its
 * route table (a route a plugin adds is fuzzed without editing the suite), with the query names its
 * schema declares, and real identifiers for path parameters, harvested from what the gateway lists
 * (every GET route without path parameters, called with the right credential and host): a value is
 * taken for a parameter from fields of the same name (`host`, `gatewaySubBusinessId`, `reference`,
 * `invoiceId`, …) anywhere in a list's answer, and from the `id` of the items of the list the
 * parameter's path continues (`/admin/keys` gives `/admin/keys/:keyId`). Keys the suite itself
 * sends are never offered (a fuzzed revoke or roll of them would lock the suite out).
 */
import type { CompiledRoute } from "../../../core/route-table.ts";
import type { OpenApiRoute } from "./requests.ts";

/** How the suite calls the gateway to harvest (in process: a read, never a fuzz case). */
export type Caller = (path: string, init: { host: string; headers: Record<string, string> }) => Promise<Response>;

/** Every route of the table in the suite's model: `{param}` templates, service, hosts, credential, query names. */
export function routesFromTable(table: readonly CompiledRoute[]): OpenApiRoute[] {
  return table.map((r) => ({
    method: r.decl.method,
    template: r.decl.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"),
    service: r.decl.service,
    hosts: r.decl.hosts === "any" ? "any" : r.decl.service,
    auth: r.decl.auth === "apiKey" ? "apiKey" : r.decl.auth === "bearer" ? "bearer" : r.decl.auth === "admin" ? "admin" : "none",
    query: Object.keys((r.decl.schemas?.query as { entries?: Record<string, unknown> } | undefined)?.entries ?? {}),
  }));
}

/**
 * Real identifiers per path-parameter name, harvested by listing. `seed` adds values known up
 * front (the onboarded sub-business, a signed IRN, …).
 */
export async function harvestIdentifiers(
  routes: readonly OpenApiRoute[],
  call: Caller,
  credentials: { apiKey: string; bearer: string; admin: string; gatewayHost: string; storedHost: string; collectionsHost: string; inUse?: readonly string[] },
  seed: Record<string, readonly string[]> = {},
): Promise<Record<string, string[]>> {
  const byField = new Map<string, Set<string>>();
  const idsOfList = new Map<string, Set<string>>();
  const own = [credentials.apiKey, credentials.bearer, credentials.admin, ...(credentials.inUse ?? [])];
  const protectedIds = new Set<string>();
  for (const r of routes.filter((x) => x.method === "GET" && !x.template.includes("{"))) {
    for (const host of r.hosts === "collections" ? [credentials.collectionsHost] : [credentials.gatewayHost, credentials.storedHost]) {
      const headers: Record<string, string> =
        r.auth === "apiKey" ? { "x-api-key": credentials.apiKey } : r.auth === "bearer" ? { authorization: `Bearer ${credentials.bearer}` } : r.auth === "admin" ? { "x-admin-api-key": credentials.admin } : {};
      const res = await call(r.template, { host, headers }).catch(() => null);
      if (!res || res.status !== 200 || !(res.headers.get("content-type") ?? "").includes("json")) continue;
      const body = (await res.json().catch(() => null)) as unknown;
      // Only list answers: the items' fields (health, metrics and the OpenAPI document name no resources).
      const items = _items(body);
      _collect(items, byField, 0);
      const ids = idsOfList.get(r.template) ?? new Set<string>();
      for (const item of items) if (typeof item.id === "string") ids.add(item.id);
      for (const item of items) if (typeof item.id === "string" && _isOwnKey(item, own)) protectedIds.add(item.id);
      idsOfList.set(r.template, ids);
    }
  }
  const out: Record<string, string[]> = {};
  for (const r of routes) {
    for (const m of r.template.matchAll(/\{([^}]+)\}/g)) {
      const name = m[1]!;
      const parent = r.template.slice(0, m.index! - 1);
      const values = new Set([...(seed[name] ?? []), ...(byField.get(name) ?? []), ...(idsOfList.get(parent) ?? [])]);
      out[name] = [...new Set([...(out[name] ?? []), ...values])].filter((v) => !protectedIds.has(v)).slice(0, MAX_PER_NAME);
    }
  }
  return out;
}

// --- Internal helpers ---

const MAX_PER_NAME = 12;
/** Field names whose values are secrets or bodies, never used as identifiers. */
const NOT_IDENTIFIERS = /key|secret|password|token|document|body/i;

/** A listed key whose hint (`…last4`, `prefix…last4`) could be one of the suite's own credentials. */
function _isOwnKey(item: Record<string, unknown>, own: readonly string[]): boolean {
  if (typeof item.hint !== "string" || !item.hint.includes("…")) return false;
  const [prefix = "", tail = ""] = item.hint.split("…");
  return own.some((k) => k.startsWith(prefix) && k.endsWith(tail));
}

/** Every string field (by name) of a JSON answer, a few levels deep. */
function _collect(value: unknown, into: Map<string, Set<string>>, depth: number): void {
  if (depth > 5 || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const v of value.slice(0, 50)) _collect(v, into, depth + 1);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    if (typeof v === "string" && v.length > 0 && v.length <= 120 && !NOT_IDENTIFIERS.test(k)) {
      const set = into.get(k) ?? new Set<string>();
      set.add(v);
      into.set(k, set);
    } else _collect(v, into, depth + 1);
  }
}

/** The items of a list answer: `{ data: [...] }`, `{ data: { items | data: [...] } }` or an array. */
function _items(body: unknown): Array<Record<string, unknown>> {
  const b = body as { data?: unknown; items?: unknown } | null;
  const d = b?.data as { items?: unknown; data?: unknown } | undefined;
  const list = Array.isArray(body) ? body : Array.isArray(b?.data) ? b.data : Array.isArray(b?.items) ? b.items : Array.isArray(d?.items) ? d.items : Array.isArray(d?.data) ? d.data : [];
  return (list as unknown[]).filter((x): x is Record<string, unknown> => typeof x === "object" && x !== null);
}
