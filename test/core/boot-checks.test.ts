/**
 * Boot checks (ARCHITECTURE.md §3; STYLE.md habit 3): a plugin's declarations are checked when the
 * gateway is built, and a bad declaration stops startup with a BootError that lists every problem
 * and names the plugin (and the route, for route problems). Nothing is served by a gateway that
 * failed its checks.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMemoryCoordination } from "../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../adapters/document-store/sqlite/store.ts";
import { createPolicyRegistry } from "../../adapters/policies.ts";
import { composeGateway } from "../../boot/compose.ts";
import { createGateway } from "../../core/create-gateway.ts";
import { openDirectory, type TenantDirectory } from "../../core/directory.ts";
import { createLogger } from "../../core/log.ts";
import { definePlugin, type GatewayPlugin, type PortName, type Ports, type RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import { BootError } from "../../core/route-table.ts";
import type { StageName } from "../../core/stages/names.ts";
import { STAGES } from "../../pipeline/stages.ts";
import { health } from "../../plugins/health/plugin.ts";
import { testConfig } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";

const log = createLogger({ level: "silent", sink: () => {} });

/** The tenant directory createGateway needs (on stores of its own: some tests leave a port out on purpose). */
async function directoryOn(patch?: Record<string, unknown>): Promise<TenantDirectory> {
  const store = await createSqliteDocumentStore({ file: ":memory:" });
  return openDirectory({ config: testConfig(patch), store, coordination: createMemoryCoordination(), log });
}

function route(overrides: Partial<RouteDeclaration> = {}): RouteDeclaration {
  return {
    method: "GET",
    path: "/thing",
    service: "gateway",
    auth: "apiKey",
    summary: "a route",
    handler: (ctx) => json(ctx, 200, {}),
    ...overrides,
  };
}

function plugin(name: string, routes: RouteDeclaration[], extra: Partial<GatewayPlugin> = {}): GatewayPlugin {
  return definePlugin({ name, setup: () => ({ routes }), ...extra });
}

/** Builds a gateway that must fail its boot checks; returns the BootError's problems. */
async function bootProblems(
  plugins: readonly GatewayPlugin[],
  options: { patch?: Record<string, unknown>; ports?: Partial<Ports> } = {},
): Promise<{ error: BootError; problems: string[] }> {
  const ports: Ports = {
    documentStore: await createSqliteDocumentStore({ file: ":memory:" }),
    coordination: createMemoryCoordination(),
    ...options.ports,
  } as Ports;
  try {
    const directory = await directoryOn(options.patch);
    const gw = createGateway({ stages: STAGES, config: testConfig(options.patch), ports, plugins, log, policies: createPolicyRegistry(), directory });
    await gw.close();
  } catch (e) {
    await Promise.allSettled([ports.documentStore?.close(), ports.coordination?.close()]);
    assert.instance(e, BootError, `expected a BootError, got ${String(e)}`);
    const error = e as BootError;
    assert.is(error.name, "BootError");
    for (const p of error.problems) assert.ok(error.message.includes(p), "the message lists every problem");
    assert.ok(error.message.startsWith("gateway boot failed"));
    return { error, problems: error.problems };
  }
  assert.unreachable("expected the boot checks to fail");
  throw new Error("unreachable");
}

function one(problems: string[], ...parts: string[]): string {
  const hits = problems.filter((p) => parts.every((part) => p.includes(part)));
  assert.is(hits.length, 1, `expected one problem with ${JSON.stringify(parts)} in:\n${problems.join("\n")}`);
  return hits[0]!;
}

test("a valid set of plugins boots (guards the harness)", async () => {
  const ports: Ports = { documentStore: await createSqliteDocumentStore({ file: ":memory:" }), coordination: createMemoryCoordination() };
  const gw = createGateway({ stages: STAGES, config: testConfig(), ports, plugins: [health, probePlugin], log, policies: createPolicyRegistry(), directory: await directoryOn() });
  assert.ok(gw.routes.routes().length > 5);
  await gw.close();
});

test("duplicate route across two plugins: names both plugins and the route", async () => {
  const { problems } = await bootProblems([
    plugin("alpha", [route({ path: "/shared/:id" })]),
    plugin("beta", [route({ path: "/shared/:id" })]),
  ]);
  const p = one(problems, "duplicate route");
  assert.ok(p.includes('plugin "beta"'), p);
  assert.ok(p.includes('"alpha"'), p);
  assert.ok(p.includes("GET /shared/:id"), p);
});

test("the same path under another method is not a duplicate; the same shape with other parameter names is refused", async () => {
  const { problems } = await bootProblems([
    plugin("alpha", [route({ path: "/items/:id" }), route({ method: "POST", path: "/items/:id", idempotent: true })]),
    plugin("beta", [route({ method: "DELETE", path: "/items/:itemId" })]),
  ]);
  assert.is(problems.length, 1, problems.join("\n"));
  const p = one(problems, 'plugin "beta"', "DELETE /items/:itemId", "/items/:id");
  assert.ok(p.includes("other parameter names"));
});

test("duplicate plugin name", async () => {
  const { problems } = await bootProblems([plugin("twin", [route({ path: "/a" })]), plugin("twin", [route({ path: "/b" })])]);
  one(problems, 'plugin "twin"', "registered twice");
});

test("a plugin named like the core's own is refused too (its routes would be ambiguous in logs)", async () => {
  const { problems } = await bootProblems([plugin("health", [route({ path: "/a" })]), health]);
  one(problems, 'plugin "health"', "registered twice");
});

test("unknown stage in skip: names the plugin, the route and the stage", async () => {
  const { problems } = await bootProblems([plugin("skippy", [route({ path: "/s", skip: ["quotas" as StageName] })])]);
  one(problems, 'plugin "skippy"', "GET /s", 'unknown stage "quotas"');
});

test("skipping a mandatory stage: each one is refused", async () => {
  for (const stage of ["canonical-host", "route", "protocol", "routing-loop"] as const) {
    const { problems } = await bootProblems([plugin("bold", [route({ path: "/m", auth: "none", skip: [stage] })])]);
    one(problems, 'plugin "bold"', "GET /m", `stage "${stage}" cannot be skipped`);
  }
});

test("plugin needs an unknown port / a port that is not configured", async () => {
  const unknown = await bootProblems([plugin("needy", [route()], { needs: ["regulatorClient" as PortName] })]);
  one(unknown.problems, 'plugin "needy"', 'unknown port "regulatorClient"');
  const missing = await bootProblems([plugin("needy", [route()], { needs: ["documentStore"] })], {
    ports: { documentStore: undefined as unknown as Ports["documentStore"] },
  });
  one(missing.problems, 'plugin "needy"', 'port "documentStore"', "not configured");
});

test("plugin stages: requiring a stage the config disables, or an unknown stage", async () => {
  const disabled = await bootProblems([plugin("guarded", [route()], { stages: ["admission", "auth"] })], {
    patch: { pipeline: { disable: ["admission"] } },
  });
  assert.is(disabled.problems.length, 1, disabled.problems.join("\n"));
  one(disabled.problems, 'plugin "guarded"', 'stage "admission"', "config disables");
  const unknown = await bootProblems([plugin("guarded", [route()], { stages: ["firewall" as StageName] })]);
  one(unknown.problems, 'plugin "guarded"', 'unknown stage "firewall"');
});

test("the same plugin boots when the stage it needs is enabled", async () => {
  const ports: Ports = { documentStore: await createSqliteDocumentStore({ file: ":memory:" }), coordination: createMemoryCoordination() };
  const gw = createGateway({
    stages: STAGES,
    config: testConfig(),
    ports,
    plugins: [plugin("guarded", [route()], { stages: ["admission"] })],
    log,
    policies: createPolicyRegistry(),
    directory: await directoryOn(),
  });
  assert.ok(gw.pipeline.names.includes("admission"));
  await gw.close();
});

test("Bearer auth on a gateway-service route; x-api-key on a collections route", async () => {
  const { problems } = await bootProblems([
    plugin("mixed", [
      route({ path: "/gw-bearer", auth: "bearer" }),
      route({ path: "/api/v1/coll-key", service: "collections", auth: "apiKey" }),
    ]),
  ]);
  one(problems, 'plugin "mixed"', "GET /gw-bearer", "Bearer auth is for collections routes");
  one(problems, 'plugin "mixed"', "GET /api/v1/coll-key", "x-api-key auth is for gateway routes");
});

test("a route shadowing an any-host path (health) is refused", async () => {
  const { problems } = await bootProblems([
    health,
    plugin("shadow", [route({ path: "/health/ready" }), route({ path: "/api/v1/ok", service: "collections", auth: "bearer" })]),
  ]);
  assert.is(problems.length, 1, problems.join("\n"));
  one(problems, 'plugin "shadow"', "GET /health/ready", "shadows an any-host route");
});

test("a route shadowing the core's /openapi.json is refused", async () => {
  const { problems } = await bootProblems([plugin("docs", [route({ path: "/openapi.json", auth: "none" })])]);
  one(problems, 'plugin "docs"', "GET /openapi.json");
});

test("other declaration errors: path without '/', unauthenticated idempotent mutation, modes off gateway, x-api-key on any host", async () => {
  const { problems } = await bootProblems([
    plugin("sloppy", [
      route({ path: "relative" }),
      route({ method: "POST", path: "/open-mutation", auth: "none", idempotent: true }),
      route({ path: "/api/v1/moded", service: "collections", auth: "bearer", modes: ["stored"] }),
      route({ path: "/everywhere", hosts: "any" }),
    ]),
  ]);
  one(problems, 'plugin "sloppy"', "GET relative", 'must start with "/"');
  one(problems, 'plugin "sloppy"', "POST /open-mutation", "needs authentication");
  one(problems, 'plugin "sloppy"', "GET /api/v1/moded", "modes apply to gateway routes only");
  one(problems, 'plugin "sloppy"', "GET /everywhere", "approved domains only");
});

test("route problems of several plugins are listed together in one BootError", async () => {
  const { problems } = await bootProblems([
    plugin("one", [route({ path: "/dup" }), route({ path: "/x", skip: ["nope" as StageName] })]),
    plugin("two", [route({ path: "/dup" }), route({ path: "/y", auth: "bearer" }), route({ path: "/z", skip: ["protocol"] })]),
  ]);
  assert.is(problems.length, 4, problems.join("\n"));
  one(problems, 'plugin "two"', "GET /dup", "duplicate");
  one(problems, 'plugin "one"', "GET /x", "unknown stage");
  one(problems, 'plugin "two"', "GET /y", "Bearer");
  one(problems, 'plugin "two"', "GET /z", "cannot be skipped");
});

test("plugin-level problems of several plugins are listed together", async () => {
  const { problems } = await bootProblems(
    [
      plugin("a", [route({ path: "/a" })], { needs: ["queue" as PortName] }),
      plugin("b", [route({ path: "/b" })], { stages: ["admission"] }),
      plugin("a", [route({ path: "/c" })]),
    ],
    { patch: { pipeline: { disable: ["admission"] } } },
  );
  assert.is(problems.length, 3, problems.join("\n"));
  one(problems, 'plugin "a"', "unknown port");
  one(problems, 'plugin "b"', "config disables");
  one(problems, 'plugin "a"', "registered twice");
});

test("a plugin whose setup() throws is a boot problem naming it", async () => {
  const { problems } = await bootProblems([
    definePlugin({
      name: "fragile",
      setup: () => {
        throw new Error("missing section");
      },
    }),
  ]);
  one(problems, 'plugin "fragile"', "failed to set up", "missing section");
});

// Known gap, reported: create-gateway.ts stops before building the route table once a plugin-level
// problem (needs/stages/duplicate name) is found, so route problems of the same boot are not listed.
test("plugin-level and route-level problems are listed in the same BootError", async () => {
  const { problems } = await bootProblems([
    plugin("a", [route({ path: "/a" })], { needs: ["queue" as PortName] }),
    plugin("b", [route({ path: "/dup" })]),
    plugin("c", [route({ path: "/dup" })]),
  ]);
  one(problems, 'plugin "a"', "unknown port");
  one(problems, 'plugin "c"', "GET /dup", "duplicate");
});

test("composeGateway (the production composition root) runs the same checks", async () => {
  try {
    const gw = await composeGateway(testConfig(), {
      log,
      plugins: [plugin("alpha", [route({ path: "/p" })]), plugin("beta", [route({ path: "/p" })])],
    });
    await gw.close();
    assert.unreachable("expected a BootError");
  } catch (e) {
    assert.instance(e, BootError);
    one((e as BootError).problems, 'plugin "beta"', "GET /p", "duplicate route");
  }
});

test("mode variants: one method + path declared per mode boots; each mode gets its own declaration", async () => {
  const ports: Ports = { documentStore: await createSqliteDocumentStore({ file: ":memory:" }), coordination: createMemoryCoordination() };
  const pass = route({ method: "POST", path: "/v/:id", modes: ["passthrough"], summary: "pass" });
  const stored = route({ method: "POST", path: "/v/:id", modes: ["stored"], summary: "stored", idempotent: true });
  const gw = createGateway({
    stages: STAGES,
    config: testConfig(),
    ports,
    plugins: [plugin("alpha", [pass]), plugin("beta", [stored])],
    log,
    policies: createPolicyRegistry(),
    directory: await directoryOn(),
  });
  const match = gw.routes.lookup("gateway", "POST", "/v/1");
  assert.is(match.kind, "found");
  const found = (match as { route: import("../../core/route-table.ts").CompiledRoute }).route;
  assert.is(found.decl, pass, "the lookup answers the first-declared variant");
  assert.is(found.modeRoutes?.passthrough?.decl, pass);
  assert.is(found.modeRoutes?.stored?.decl, stored);
  assert.is(gw.routes.routes().filter((r) => r.id === "POST /v/:id").length, 2, "both declarations are listed");
  assert.is(gw.routes.lookup("gateway", "GET", "/thing").kind, "none");
  await gw.close();
});

test("mode variants: a route without modes, or two declarations of one mode, are duplicates", async () => {
  const noModes = await bootProblems([
    plugin("alpha", [route({ method: "POST", path: "/v", modes: ["passthrough"] })]),
    plugin("beta", [route({ method: "POST", path: "/v" })]),
  ]);
  one(noModes.problems, 'plugin "beta"', "POST /v", 'duplicate route (already declared by plugin "alpha")');
  const sameMode = await bootProblems([
    plugin("alpha", [route({ method: "POST", path: "/v", modes: ["passthrough", "stored"] })]),
    plugin("beta", [route({ method: "POST", path: "/v", modes: ["stored"] })]),
  ]);
  one(sameMode.problems, 'plugin "beta"', "POST /v", "for the same mode");
});

test("mode variants: everything the stages before mode read must agree; a variant never skips mode", async () => {
  const { problems } = await bootProblems([
    plugin("alpha", [route({ method: "POST", path: "/v", modes: ["passthrough"], quota: "sign", bodyLimit: "large" })]),
    plugin("beta", [route({ method: "POST", path: "/v", modes: ["stored"], quota: "management", bodyLimit: "default", accepts: ["text/plain"] })]),
    plugin("gamma", [route({ method: "GET", path: "/w", modes: ["passthrough"] })]),
    plugin("delta", [route({ method: "GET", path: "/w", modes: ["stored"], auth: "admin" })]),
  ]);
  one(problems, 'plugin "beta"', "POST /v", "must declare the same quota, bodyLimit, accepts");
  one(problems, 'plugin "delta"', "GET /w", "must declare the same auth");
  const skipping = await bootProblems([
    plugin("alpha", [route({ path: "/s", modes: ["passthrough"], skip: ["mode"] })]),
    plugin("beta", [route({ path: "/s", modes: ["stored"], skip: ["mode"] })]),
  ]);
  one(skipping.problems, 'plugin "beta"', "GET /s", "cannot skip the mode stage");
});

test("modes are refused on any-host routes and must name a mode", async () => {
  const { problems } = await bootProblems([
    plugin("alpha", [route({ path: "/h", hosts: "any", auth: "none", modes: ["stored"] }), route({ path: "/e", modes: [] })]),
  ]);
  one(problems, 'plugin "alpha"', "GET /h", "approved domains");
  one(problems, 'plugin "alpha"', "GET /e", "at least one mode");
});


test("a stage list that is not the vocabulary's order stops the boot", async () => {
  const swapped = [STAGES[1]!, STAGES[0]!, ...STAGES.slice(2)];
  const ports: Ports = { documentStore: await createSqliteDocumentStore({ file: ":memory:" }), coordination: createMemoryCoordination() };
  try {
    createGateway({ stages: swapped, config: testConfig(), ports, plugins: [health], log, policies: createPolicyRegistry(), directory: await directoryOn() });
    assert.unreachable("expected a BootError");
  } catch (e) {
    assert.instance(e, BootError);
    one((e as BootError).problems, "the stage list must be canonical-host, route,", "got route, canonical-host");
  } finally {
    await Promise.allSettled([ports.documentStore.close(), ports.coordination.close()]);
  }
});

test.run();
