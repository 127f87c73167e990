/**
 * GET /openapi.json: the OpenAPI 3.1 document derived from the route declarations (one source of
 * truth, ARCHITECTURE.md §3). Every declared route is listed, with its security scheme, path
 * parameters as `{name}`, query parameters, the JSON Schema of validated bodies and the
 * x-gatehouse metadata; it answers on any host without authentication.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import * as v from "valibot";
import { createRequestContext } from "../../core/context.ts";
import { gwError } from "../../core/errors/gateway-error.ts";
import { renderError } from "../../core/errors/render.ts";
import { hashSecret } from "../../core/directory.ts";
import { definePlugin } from "../../core/plugin.ts";
import type { CompiledRoute } from "../../core/route-table.ts";
import { json } from "../../core/respond.ts";
import { health } from "../../plugins/health/plugin.ts";
import { BEARER_DEMO, DEMO_KEY, PASSTHROUGH, startTestGateway, type TestGateway } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";

type Doc = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, Record<string, unknown>>; schemas: Record<string, { required?: string[]; properties?: Record<string, unknown> }> };
};
type Operation = {
  operationId: string;
  summary: string;
  tags: string[];
  security?: Array<Record<string, string[]>>;
  parameters?: Array<{ name: string; in: string; required: boolean; schema: Record<string, unknown> }>;
  requestBody?: { required: boolean; content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: { $ref: string } }> }>;
  "x-gatehouse": { service: string; hosts: string; quota: string; modes: string[]; bodyLimitBytes: number; idempotentMutation: boolean };
};

const oaProbe = definePlugin({
  name: "oa-probe",
  setup: () => ({
    routes: [
    {
      method: "GET",
      path: "/oa/list",
      service: "gateway",
      auth: "apiKey",
      schemas: {
        query: v.strictObject({
          limit: v.optional(v.pipe(v.string(), v.regex(/^\d+$/))),
          status: v.picklist(["pending", "signed"]),
        }),
      },
      summary: "a list with query parameters",
      handler: (ctx) => json(ctx, 200, { data: [] }),
    },
    {
      method: "POST",
      path: "/oa/forms/:formId/entries/:entryId",
      service: "gateway",
      auth: "apiKey",
      bodyLimit: 2048,
      accepts: ["application/json", "application/x-www-form-urlencoded"],
      schemas: { body: v.object({ value: v.string() }) },
      summary: "two path parameters and two body types",
      responses: { 201: "Created", 200: undefined },
      handler: (ctx) => json(ctx, 201, {}),
    },
    // Mode variants: one method + path, one declaration per mode, different bodies.
    {
      method: "POST",
      path: "/oa/variant",
      service: "gateway",
      auth: "apiKey",
      modes: ["passthrough"],
      schemas: { body: v.object({ document: v.string() }) },
      summary: "sign a document",
      responses: { 201: "Signed" },
      handler: (ctx) => json(ctx, 201, {}),
    },
    {
      method: "POST",
      path: "/oa/variant",
      service: "gateway",
      auth: "apiKey",
      modes: ["stored"],
      idempotent: true,
      schemas: { body: v.object({ intake: v.number() }) },
      summary: "accept an intake",
      responses: { 202: "Accepted" },
      handler: (ctx) => json(ctx, 202, {}),
    },
    {
      method: "POST",
      path: "/oa/headers",
      service: "gateway",
      auth: "apiKey",
      idempotent: "optional",
      headers: [
        { name: "x-sub-business-id", required: true, description: "the represented business" },
        { name: "x-attempt-number", required: false, description: "the attempt", pattern: "^[1-9][0-9]{0,8}$" },
      ],
      summary: "a route that reads headers",
      handler: (ctx) => json(ctx, 200, {}),
    },
    ],
  }),
});

let tg: TestGateway;
let doc: Doc;

test.before(async () => {
  tg = await startTestGateway({ plugins: [health, probePlugin, oaProbe] });
  const res = await tg.call("/openapi.json", { host: "anything.example" });
  assert.is(res.status, 200);
  doc = (await res.json()) as Doc;
});
test.after(async () => {
  await tg.close();
});

/** A route declared once per mode (several declarations, one operation). */
function isVariant(r: CompiledRoute): boolean {
  return r.modeRoutes !== null && new Set(Object.values(r.modeRoutes).filter(Boolean)).size > 1;
}

function op(path: string, method: string): Operation {
  const o = doc.paths[path]?.[method];
  assert.ok(o, `${method.toUpperCase()} ${path} missing; have ${Object.keys(doc.paths).join(", ")}`);
  return o!;
}

test("GET /openapi.json answers on any host without authentication, as JSON, OpenAPI 3.1", async () => {
  for (const host of ["anything.example", PASSTHROUGH, "localhost", "collections.demo.localhost", "10.1.2.3"]) {
    const res = await tg.call("/openapi.json", { host });
    assert.is(res.status, 200, host);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
    assert.ok(res.headers.get("x-request-id"));
    const d = (await res.json()) as Doc;
    assert.is(d.openapi, "3.1.0");
    assert.type(d.info.title, "string");
    assert.type(d.info.version, "string");
    assert.equal(d, doc, "the same document everywhere");
  }
});

test("a trusted-edge deployment still serves /openapi.json without edge proof (customer routes do not)", async () => {
  const edged = await startTestGateway({ plugins: [probePlugin], patch: { edge: { mode: "trusted", secretHash: hashSecret("edge-secret-for-tests") } } });
  assert.is((await edged.call("/openapi.json", { host: "anything.example" })).status, 200);
  assert.is((await edged.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).status, 403);
  await edged.close();
});

test("every declared route is listed, and nothing else", () => {
  const routes = tg.gateway.routes.routes();
  assert.ok(routes.length >= 15);
  const listed: string[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) for (const m of Object.keys(methods)) listed.push(`${m.toUpperCase()} ${path}`);
  const declared = [...new Set(routes.map((r) => `${r.decl.method} ${r.decl.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}")}`))];
  assert.equal(listed.sort(), declared.sort(), "mode variants of one method + path are one operation");
  for (const r of routes) {
    if (isVariant(r)) continue; // checked by the mode-variants test
    const o = op(r.decl.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"), r.decl.method.toLowerCase());
    assert.is(o.summary, r.decl.summary);
    assert.equal(o.tags, [r.plugin]);
  }
  const ids = listed.map((l) => {
    const [m, p] = l.split(" ");
    return doc.paths[p!]![m!.toLowerCase()]!.operationId;
  });
  assert.is(new Set(ids).size, ids.length, "operationIds are unique");
});

test("mode variants are one operation: per-mode summaries, anyOf bodies, every status, x-gatehouse.variants", () => {
  const o = op("/oa/variant", "post") as Operation & { description?: string };
  assert.is(o.summary, "Pass-through: sign a document / Stored: accept an intake");
  assert.equal(o.tags, ["oa-probe"]);
  const schema = o.requestBody!.content["application/json"]!.schema as { anyOf: Array<Record<string, unknown>> };
  assert.equal(schema.anyOf.map((s) => s.title), ["Pass-through", "Stored"]);
  assert.equal(schema.anyOf.map((s) => Object.keys(s.properties as object)), [["document"], ["intake"]]);
  assert.equal(Object.keys(o.responses).sort(), ["201", "202", "default"]);
  assert.is(o.responses["202"]!.description, "Stored: Accepted");
  const x = o["x-gatehouse"] as Operation["x-gatehouse"] & { variants: Array<{ modes: string[]; idempotentMutation: boolean }> };
  assert.equal(x.modes, ["passthrough", "stored"]);
  assert.equal(x.variants.map((v) => [v.modes, v.idempotentMutation]), [[["passthrough"], false], [["stored"], true]]);
  assert.ok(o.parameters!.some((p) => p.name === "x-idempotency-key"), "the Stored variant's required key is documented");
});

test("security follows the auth scheme; the schemes are declared", () => {
  assert.equal(op("/probe/echo", "get").security, [{ apiKey: [] }]);
  assert.equal(op("/api/v1/probe", "get").security, [{ bearer: [] }]);
  assert.equal(op("/probe/admin", "get").security, [{ adminKey: [] }]);
  assert.equal(op("/health/dependencies", "get").security, [{ adminKey: [] }]);
  assert.is(op("/health", "get").security, undefined);
  assert.is(op("/openapi.json", "get").security, undefined);
  for (const r of tg.gateway.routes.routes()) {
    const o = op(r.decl.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"), r.decl.method.toLowerCase());
    const want = { apiKey: "apiKey", bearer: "bearer", admin: "adminKey", none: null }[r.decl.auth];
    assert.equal(o.security ?? null, want ? [{ [want]: [] }] : null, r.id);
  }
  const s = doc.components.securitySchemes;
  assert.equal(s.apiKey, { type: "apiKey", in: "header", name: "x-api-key" });
  assert.equal(s.adminKey, { type: "apiKey", in: "header", name: "x-admin-api-key" });
  assert.equal(s.bearer, { type: "http", scheme: "bearer" });
});

test("path parameters appear as {name}, required, with the declared schema", () => {
  assert.ok(doc.paths["/probe/items/{itemId}"]);
  assert.not.ok(Object.keys(doc.paths).some((p) => p.includes(":")), "no rou3 syntax left");
  const items = op("/probe/items/{itemId}", "post");
  const itemId = items.parameters!.find((p) => p.in === "path")!;
  assert.equal(itemId, { name: "itemId", in: "path", required: true, schema: { type: "string", pattern: "^[a-z0-9-]{3,20}$" } });
  const two = op("/oa/forms/{formId}/entries/{entryId}", "post");
  assert.equal(
    two.parameters!.filter((p) => p.in === "path").map((p) => [p.name, p.required, p.schema]),
    [["formId", true, { type: "string" }], ["entryId", true, { type: "string" }]],
  );
});

test("query parameters come from the query schema, with their required flags", () => {
  const list = op("/oa/list", "get");
  const q = list.parameters!.filter((p) => p.in === "query");
  assert.equal(q.map((p) => [p.name, p.required]), [["limit", false], ["status", true]]);
  assert.equal(q.find((p) => p.name === "status")!.schema, { type: "string", enum: ["pending", "signed"] });
  assert.is(list.requestBody, undefined, "a GET has no body");
});

test("validated routes carry the JSON Schema of their body, per accepted content type", () => {
  const items = op("/probe/items/{itemId}", "post");
  assert.is(items.requestBody!.required, true);
  assert.equal(Object.keys(items.requestBody!.content), ["application/json"]);
  assert.equal(items.requestBody!.content["application/json"]!.schema, {
    type: "object",
    properties: {
      name: { type: "string", minLength: 2 },
      count: { type: "integer", minimum: 1 },
      tags: { type: "array", items: { type: "string" } },
    },
    required: ["name"],
    additionalProperties: false,
  });
  const coll = op("/api/v1/probe", "post");
  assert.equal(coll.requestBody!.content["application/json"]!.schema, {
    type: "object",
    properties: { amount: { type: "number", minimum: 100 } },
    required: ["amount"],
  });
  const forms = op("/oa/forms/{formId}/entries/{entryId}", "post");
  assert.equal(Object.keys(forms.requestBody!.content).sort(), ["application/json", "application/x-www-form-urlencoded"]);
  assert.is(op("/probe/echo", "get").requestBody, undefined);
  assert.is(op("/probe/sign", "post").requestBody, undefined, "no schema declared, no body schema invented");
});

test("x-gatehouse metadata: service, hosts, quota, modes, bodyLimitBytes, idempotentMutation", () => {
  const x = (path: string, method: string) => op(path, method)["x-gatehouse"];
  assert.equal(x("/probe/items/{itemId}", "post"), {
    service: "gateway",
    hosts: "gateway",
    quota: "management",
    modes: ["passthrough", "stored"],
    bodyLimitBytes: 64 * 1024,
    idempotentMutation: true,
  });
  assert.equal(x("/probe/sign", "post"), {
    service: "gateway",
    hosts: "gateway",
    quota: "sign",
    modes: ["passthrough"],
    bodyLimitBytes: 1024 * 1024,
    idempotentMutation: false,
  });
  assert.equal(x("/probe/stored-only", "get").modes, ["stored"]);
  assert.is(x("/probe/echo", "get").quota, "default");
  assert.is(x("/health", "get").quota, "none");
  assert.is(x("/health", "get").hosts, "any");
  assert.is(x("/api/v1/probe", "post").service, "collections");
  assert.is(x("/api/v1/probe", "post").hosts, "collections");
  assert.is(x("/oa/forms/{formId}/entries/{entryId}", "post").bodyLimitBytes, 2048);
  for (const r of tg.gateway.routes.routes()) {
    const meta = x(r.decl.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}"), r.decl.method.toLowerCase());
    assert.is(meta.quota, r.quota, r.id);
    assert.is(meta.bodyLimitBytes, r.bodyLimit, r.id);
    if (!isVariant(r)) assert.is(meta.idempotentMutation, r.decl.idempotent === true, r.id);
    assert.is(meta.hosts, r.surface, r.id);
  }
});

test("bodyLimitBytes follows the config's limits", async () => {
  const small = await startTestGateway({ plugins: [probePlugin], patch: { limits: { bodyBytes: 1000, largeBodyBytes: 5000 } } });
  const d = (await (await small.call("/openapi.json")).json()) as Doc;
  assert.is(d.paths["/probe/items/{itemId}"]!.post!["x-gatehouse"].bodyLimitBytes, 1000);
  assert.is(d.paths["/probe/sign"]!.post!["x-gatehouse"].bodyLimitBytes, 5000);
  await small.close();
});

test("idempotent mutations document the required x-idempotency-key header (spec §4.1)", () => {
  const h = op("/probe/items/{itemId}", "post").parameters!.find((p) => p.in === "header");
  assert.equal(h, {
    name: "x-idempotency-key",
    in: "header",
    required: true,
    schema: { type: "string", minLength: 8, maxLength: 128, pattern: "^[A-Za-z0-9._:-]+$" },
  });
  assert.not.ok((op("/probe/echo", "get").parameters ?? []).some((p) => p.name === "x-idempotency-key"));
});

test("declared headers are documented, and an optional idempotency key as optional", () => {
  const headers = (op("/oa/headers", "post").parameters ?? []).filter((p) => p.in === "header");
  assert.equal(
    headers.map((h) => [h.name, h.required]),
    [
      ["x-idempotency-key", false],
      ["x-sub-business-id", true],
      ["x-attempt-number", false],
    ],
  );
  assert.equal((headers[2] as { schema?: unknown }).schema, { type: "string", pattern: "^[1-9][0-9]{0,8}$" });
});

test("responses: documented statuses plus the service's error shape as default", () => {
  const items = op("/probe/items/{itemId}", "post");
  assert.equal(items.responses.default!.content, { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } });
  const coll = op("/api/v1/probe", "post");
  assert.equal(coll.responses.default!.content, { "application/json": { schema: { $ref: "#/components/schemas/CollectionsError" } } });
  const forms = op("/oa/forms/{formId}/entries/{entryId}", "post");
  assert.equal(Object.keys(forms.responses).sort(), ["201", "default"], "an undefined description drops the status");
  assert.ok(op("/health/ready", "get").responses["503"]);
  // Every $ref resolves.
  const refs = JSON.stringify(doc).match(/"\$ref":"#\/components\/schemas\/[A-Za-z]+"/g) ?? [];
  assert.ok(refs.length > 0);
  for (const r of refs) assert.ok(doc.components.schemas[r.split("/").pop()!.replace('"', "")], r);
});

test("the Problem schema requires exactly the fields every rendered problem carries", async () => {
  const schema = doc.components.schemas.Problem!;
  const url = new URL("http://x/p");
  const rendered = renderError(createRequestContext(new Request(url), crypto.randomUUID(), url), gwError("GW_API_KEY_INVALID")).response;
  const body = (await rendered.json()) as Record<string, unknown>;
  assert.equal([...schema.required!].sort(), Object.keys(body).sort());
  for (const field of [...Object.keys(body), "errors", "operationId"]) assert.ok(schema.properties![field], `Problem.properties.${field}`);
  const envelope = doc.components.schemas.CollectionsError!;
  assert.equal(Object.keys(envelope.properties!).sort(), ["errors", "message", "requestId", "requestTimestamp", "statusCode"]);
});

test("the document's routes actually answer as declared (spot check against real requests)", async () => {
  assert.is((await tg.call("/probe/echo", { headers: { "x-api-key": DEMO_KEY } })).status, 200);
  assert.is((await tg.call("/api/v1/probe", { host: "localhost", headers: { authorization: `Bearer ${BEARER_DEMO}` } })).status, 200);
  assert.is((await tg.call("/oa/list?status=pending", { headers: { "x-api-key": DEMO_KEY } })).status, 200);
  assert.is((await tg.call("/oa/list", { headers: { "x-api-key": DEMO_KEY } })).status, 400, "required query parameter");
});

test.run();
