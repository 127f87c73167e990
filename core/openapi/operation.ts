/**
 * One OpenAPI operation from the route declarations of one method + path: a single route, or the
 * mode variants of one (core/route-table.ts), which become one operation with summaries per mode,
 * `anyOf` of their body schemas, every documented status, and `x-gatehouse.variants` saying which
 * mode takes which body.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { RouteHeader } from "../plugin.ts";
import type { CompiledRoute } from "../route-table.ts";

/** The OpenAPI form of a route path ("/x/:id" → "/x/{id}"). */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
}

/** The operation of `group`: the declarations of one method + path, in declaration order. */
export function buildOperation(group: readonly CompiledRoute[]): Record<string, unknown> {
  const r = group[0]!;
  const d = r.decl;
  const op: Record<string, unknown> = {
    operationId: `${r.plugin}.${d.method.toLowerCase()}${openApiPath(d.path).replace(/[^A-Za-z0-9]+/g, "_")}`,
    summary: group.length === 1 ? d.summary : group.map((v) => `${_modeLabel(v)}: ${v.decl.summary}`).join(" / "),
    tags: [...new Set(group.map((v) => v.plugin))],
    "x-gatehouse": _extension(group),
  };
  const description = _description(group);
  if (description !== undefined) op.description = description;
  const security = _security(d.auth);
  if (security) op.security = [{ [security]: [] }];
  const parameters = _parameters(group);
  if (parameters.length > 0) op.parameters = parameters;
  const requestBody = _requestBody(group);
  if (requestBody !== undefined) op.requestBody = requestBody;
  op.responses = _responses(group);
  return op;
}

// --- Internal helpers ---

/** `x-gatehouse`: what the gateway does with the route beyond OpenAPI's vocabulary. */
function _extension(group: readonly CompiledRoute[]): Record<string, unknown> {
  const r = group[0]!;
  const d = r.decl;
  return {
    service: d.service,
    hosts: r.surface,
    quota: r.quota,
    modes: group.length === 1 ? (d.modes ?? ["passthrough", "stored"]) : group.flatMap((v) => v.decl.modes ?? []),
    bodyLimitBytes: r.bodyLimit,
    idempotentMutation: group.some((v) => v.decl.idempotent === true),
    ...(group.length > 1
      ? {
          variants: group.map((v) => ({
            modes: v.decl.modes,
            plugin: v.plugin,
            summary: v.decl.summary,
            idempotentMutation: v.decl.idempotent === true,
          })),
        }
      : {}),
  };
}

function _description(group: readonly CompiledRoute[]): string | undefined {
  const d = group[0]!.decl;
  const descriptions = group.filter((v) => v.decl.description);
  if (group.length === 1 && d.description) return d.description;
  if (descriptions.length > 0) return descriptions.map((v) => `${_modeLabel(v)}: ${v.decl.description}`).join("\n\n");
  return undefined;
}

/** Path parameters, the idempotency key header of idempotent mutations, then query parameters. */
function _parameters(group: readonly CompiledRoute[]): unknown[] {
  const d = group[0]!.decl;
  const paramSchemas = d.schemas?.params ? _schema(d.schemas.params).properties : undefined;
  const parameters: unknown[] = [...d.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => ({
    name: m[1],
    in: "path",
    required: true,
    schema: (paramSchemas as Record<string, unknown> | undefined)?.[m[1]!] ?? { type: "string" },
  }));
  if (group.some((v) => v.decl.idempotent))
    parameters.push({
      name: "x-idempotency-key",
      in: "header",
      // Required when every variant requires it; "optional" variants validate it when present.
      required: group.every((v) => v.decl.idempotent === true),
      schema: { type: "string", minLength: 8, maxLength: 128, pattern: "^[A-Za-z0-9._:-]+$" },
    });
  for (const h of _declaredHeaders(group))
    parameters.push({
      name: h.name,
      in: "header",
      required: h.required,
      description: h.description,
      schema: h.pattern ? { type: "string", pattern: h.pattern } : { type: "string" },
    });
  const query = d.schemas?.query ? _schema(d.schemas.query) : null;
  if (query && typeof query.properties === "object" && query.properties) {
    const required = new Set((query.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries(query.properties))
      parameters.push({ name, in: "query", required: required.has(name), schema });
  }
  return parameters;
}

function _requestBody(group: readonly CompiledRoute[]): unknown {
  const r = group[0]!;
  const bodies = group.filter((v) => v.decl.schemas?.body);
  if (bodies.length === 0) return undefined;
  const schema =
    group.length === 1
      ? _schema(r.decl.schemas!.body!)
      : { anyOf: bodies.map((v) => ({ title: _modeLabel(v), ..._schema(v.decl.schemas!.body!) })) };
  const content: Record<string, unknown> = {};
  for (const type of r.accepts) content[type] = { schema };
  return { required: true, content };
}

/** Every documented status of every variant, then the error body of the route's service. */
function _responses(group: readonly CompiledRoute[]): Record<string, unknown> {
  const d = group[0]!.decl;
  const responses: Record<string, unknown> = {};
  for (const v of group)
    for (const [status, description] of Object.entries(v.decl.responses ?? { 200: "OK" })) {
      if (!description) continue;
      const text = group.length === 1 ? description : `${_modeLabel(v)}: ${description}`;
      const seen = responses[status] as { description: string } | undefined;
      responses[status] = { description: seen ? `${seen.description} / ${text}` : text };
    }
  responses.default = {
    description: d.service === "gateway" ? "Problem Details error (spec §2.4)" : "Collections error envelope",
    content:
      d.service === "gateway"
        ? { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } }
        : { "application/json": { schema: { $ref: "#/components/schemas/CollectionsError" } } },
  };
  return responses;
}

function _modeLabel(r: CompiledRoute): string {
  return (r.decl.modes ?? []).map((m) => (m === "passthrough" ? "Pass-through" : "Stored")).join(", ");
}

function _security(auth: string): string | null {
  return auth === "apiKey" ? "apiKey" : auth === "admin" ? "adminKey" : auth === "bearer" ? "bearer" : null;
}

function _schema(schema: v.GenericSchema): Record<string, unknown> {
  const s = toJsonSchema(schema, { errorMode: "ignore" }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

/** The headers the variants declare, once each by name; required only when every variant requires it. */
function _declaredHeaders(group: readonly CompiledRoute[]): RouteHeader[] {
  const byName = new Map<string, RouteHeader>();
  for (const v of group) for (const h of v.decl.headers ?? []) if (!byName.has(h.name)) byName.set(h.name, h);
  const requiredEverywhere = (name: string) => group.every((v) => (v.decl.headers ?? []).some((h) => h.name === name && h.required));
  return [...byName.values()].map((h) => ({ ...h, required: requiredEverywhere(h.name) }));
}
