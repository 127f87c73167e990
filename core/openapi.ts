/**
 * The OpenAPI 3.1 document, derived from the route declarations (one source of truth): paths,
 * methods, security scheme, parameters, request-body schemas (valibot → JSON Schema) and the
 * error responses every route can give. The mode variants of one method + path (core/route-table.ts)
 * are one operation: summaries per mode, `anyOf` of their body schemas, every documented status,
 * and `x-gatehouse.variants` saying which mode takes which body.
 */
import { toJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import type { CompiledRoute } from "./route-table.ts";

export function buildOpenApi(routes: readonly CompiledRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const groups = new Map<string, CompiledRoute[]>();
  for (const r of routes) {
    const group = groups.get(r.id);
    if (group) group.push(r);
    else groups.set(r.id, [r]);
  }
  for (const group of groups.values()) {
    const r = group[0]!;
    const d = r.decl;
    const oaPath = d.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    const op: Record<string, unknown> = {
      operationId: `${r.plugin}.${d.method.toLowerCase()}${oaPath.replace(/[^A-Za-z0-9]+/g, "_")}`,
      summary: group.length === 1 ? d.summary : group.map((v) => `${_modeLabel(v)}: ${v.decl.summary}`).join(" / "),
      tags: [...new Set(group.map((v) => v.plugin))],
      "x-gatehouse": {
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
      },
    };
    const descriptions = group.filter((v) => v.decl.description);
    if (group.length === 1 && d.description) op.description = d.description;
    else if (descriptions.length > 0) op.description = descriptions.map((v) => `${_modeLabel(v)}: ${v.decl.description}`).join("\n\n");
    const security = _security(d.auth);
    if (security) op.security = [{ [security]: [] }];
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
        required: true,
        schema: { type: "string", minLength: 8, maxLength: 128, pattern: "^[A-Za-z0-9._:-]+$" },
      });
    const query = d.schemas?.query ? _schema(d.schemas.query) : null;
    if (query && typeof query.properties === "object" && query.properties) {
      const required = new Set((query.required as string[] | undefined) ?? []);
      for (const [name, schema] of Object.entries(query.properties))
        parameters.push({ name, in: "query", required: required.has(name), schema });
    }
    if (parameters.length > 0) op.parameters = parameters;
    const bodies = group.filter((v) => v.decl.schemas?.body);
    if (bodies.length > 0) {
      const schema =
        group.length === 1
          ? _schema(d.schemas!.body!)
          : { anyOf: bodies.map((v) => ({ title: _modeLabel(v), ..._schema(v.decl.schemas!.body!) })) };
      const content: Record<string, unknown> = {};
      for (const type of r.accepts) content[type] = { schema };
      op.requestBody = { required: true, content };
    }
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
    op.responses = responses;
    (paths[oaPath] ??= {})[d.method.toLowerCase()] = op;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Gatehouse", version, description: "Collections and invoice-gateway APIs, derived from plugin route declarations." },
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        adminKey: { type: "apiKey", in: "header", name: "x-admin-api-key" },
        bearer: { type: "http", scheme: "bearer" },
      },
      schemas: {
        Problem: {
          type: "object",
          required: ["type", "title", "status", "statusCode", "detail", "message", "instance", "code", "requestId", "timestamp", "action", "retry", "path"],
          properties: {
            type: { type: "string", format: "uri" },
            title: { type: "string" },
            status: { type: "integer" },
            statusCode: { type: "integer" },
            detail: { type: "string" },
            message: { type: "string" },
            instance: { type: "string" },
            code: { type: "string", pattern: "^GW_[A-Z_]+$" },
            requestId: { type: "string" },
            timestamp: { type: "string", format: "date-time" },
            action: { type: "object" },
            retry: { type: "object" },
            errors: { type: "array", maxItems: 20 },
            operationId: { type: "string" },
            path: { type: "string" },
          },
        },
        CollectionsError: {
          type: "object",
          properties: {
            requestId: { type: "string" },
            requestTimestamp: { type: "string" },
            message: { type: "string" },
            statusCode: { type: "integer" },
            errors: { type: "array", items: { type: "object", properties: { field: { type: "string" }, message: { type: "string" } } } },
          },
        },
      },
    },
  };
}

// --- Internal helpers ---

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
