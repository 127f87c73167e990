/** The example plugin of docs/plugins.md, mounted next to the real plugins, end to end. */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hello } from "../../../docs/examples/hello/plugin.ts";
import { plugins } from "../../../plugins/index.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { withStoreFaults } from "../../support/store-faults.ts";
import { DEMO_KEY, OTHER, OTHER_KEY, PASSTHROUGH, startTestGateway } from "../../support/gateway.ts";

const tg = await startTestGateway({ plugins: [...plugins, hello] });
const headers = (key: string) => ({ "x-api-key": DEMO_KEY, "x-idempotency-key": key });

test("adding the plugin mounts its routes without touching the core (route table + OpenAPI)", async () => {
  const ids = tg.gateway.routes.routes().map((r) => r.id);
  assert.ok(ids.includes("POST /hello/greetings"));
  assert.ok(ids.includes("GET /hello/greetings/:name"));
  const doc = (await (await tg.call("/openapi.json", { host: "localhost" })).json()) as { paths: Record<string, unknown> };
  assert.ok(doc.paths["/hello/greetings"]);
  assert.ok(doc.paths["/hello/greetings/{name}"]);
});

test("create → 201, replay with the same key → 200 same body, read → 200", async () => {
  const first = await tg.call("/hello/greetings", { method: "POST", headers: headers("greet-0001"), body: { name: "Ada" } });
  assert.is(first.status, 201);
  const body = await first.json();
  assert.is(body.message, "Hello, Ada!");
  const replay = await tg.call("/hello/greetings", { method: "POST", headers: headers("greet-0001"), body: { name: "Ada" } });
  assert.is(replay.status, 200);
  assert.equal(await replay.json(), body);
  const read = await tg.call("/hello/greetings/Ada", { headers: { "x-api-key": DEMO_KEY } });
  assert.is(read.status, 200);
});

test("the core's contract applies to the plugin: key rules, validation, tenant scoping", async () => {
  const noKey = await tg.call("/hello/greetings", { method: "POST", headers: { "x-api-key": DEMO_KEY }, body: { name: "Bo" } });
  assert.is((await noKey.json()).code, "GW_IDEMPOTENCY_KEY_REQUIRED");
  const bad = await tg.call("/hello/greetings", { method: "POST", headers: headers("greet-0002"), body: { name: "", x: 1 } });
  const problem = await bad.json();
  assert.is(problem.code, "GW_REQUEST_VALIDATION_FAILED");
  assert.equal(problem.errors.map((e: { pointer: string }) => e.pointer).sort(), ["/name", "/x"]);
  const conflict = await tg.call("/hello/greetings", { method: "POST", headers: headers("greet-0001"), body: { name: "Ada", message: "Hi" } });
  assert.is((await conflict.json()).code, "GW_IDEMPOTENCY_CONTENT_CONFLICT");
  const otherBusiness = await tg.call("/hello/greetings/Ada", { host: OTHER, headers: { "x-api-key": OTHER_KEY } });
  assert.is(otherBusiness.status, 404, "another business must not see demo's greeting");
  const wrongHost = await tg.call("/hello/greetings/Ada", { host: PASSTHROUGH, headers: { "x-api-key": OTHER_KEY } });
  assert.is((await wrongHost.json()).code, "GW_AUTH_TENANT_FORBIDDEN");
});

test.after(() => tg.close());
test("a store that cannot answer gives the route's declared 503, not a 500", async () => {
  const raw = await createSqliteDocumentStore({ file: ":memory:" });
  let down = false;
  const faulty = await startTestGateway({
    plugins: [...plugins, hello],
    ports: { documentStore: withStoreFaults(raw, (collection) => (down && collection === "hello_greetings" ? "before" : null)) },
  });
  down = true;
  const res = await faulty.call("/hello/greetings", { method: "POST", headers: headers("greet-down-1"), body: { name: "Bo" } });
  assert.is(res.status, 503);
  const problem = await res.json();
  assert.is(problem.code, "GW_MANAGEMENT_SERVICE_UNAVAILABLE");
  assert.is(problem.detail, "The greeting store is unavailable; retry with the same key.");
  await faulty.close();
});

test.run();
