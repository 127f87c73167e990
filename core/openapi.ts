/**
 * The OpenAPI 3.1 document, derived from the route declarations (one source of truth): paths,
 * methods, security scheme, parameters, request-body schemas (valibot → JSON Schema) and the
 * error responses every route can give. The mode variants of one method + path (core/route-table.ts)
 * are one operation (core/openapi/operation.ts); the fixed components are in
 * core/openapi/components.ts.
 */
import { errorSchemas, securitySchemes } from "./openapi/components.ts";
import { buildOperation, openApiPath } from "./openapi/operation.ts";
import type { CompiledRoute } from "./route-table.ts";

export function buildOpenApi(routes: readonly CompiledRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const group of _groups(routes)) {
    const d = group[0]!.decl;
    (paths[openApiPath(d.path)] ??= {})[d.method.toLowerCase()] = buildOperation(group);
  }
  return {
    openapi: "3.1.0",
    info: { title: "Gatehouse", version, description: "Collections and invoice-gateway APIs, derived from plugin route declarations." },
    paths,
    components: { securitySchemes: securitySchemes(), schemas: errorSchemas() },
  };
}

// --- Internal helpers ---

/** The routes by id ("METHOD /pattern"): mode variants of one method + path together, in declaration order. */
function _groups(routes: readonly CompiledRoute[]): Iterable<CompiledRoute[]> {
  const groups = new Map<string, CompiledRoute[]>();
  for (const r of routes) {
    const group = groups.get(r.id);
    if (group) group.push(r);
    else groups.set(r.id, [r]);
  }
  return groups.values();
}
