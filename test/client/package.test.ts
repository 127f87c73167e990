/**
 * client/ is a package a merchant can use without the gateway's server code: its run-time imports
 * are its own files, node: built-ins and undici (declared in client/package.json); server code is
 * named only by `import type` (erased). Proven twice: statically over every file, and by copying
 * client/ alone into an empty folder (undici beside it, nothing else) and using it there against a
 * running gateway.
 */
import { execFile } from "node:child_process";
import { cpSync, readFileSync, readdirSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { tempDir } from "../support/temp.ts";
import { Agent } from "undici";
import { createInvoiceGatewayClient } from "../../client/index.ts";
import { DEMO_KEY, gatewayTracker, PASSTHROUGH } from "../support/gateway.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const CLIENT = join(ROOT, "client");
const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("every run-time import of client/ is its own file, a node: built-in or a declared dependency", () => {
  const declared = Object.keys((JSON.parse(readFileSync(join(CLIENT, "package.json"), "utf8")) as { dependencies: Record<string, string> }).dependencies);
  const seen = new Set<string>();
  for (const file of readdirSync(CLIENT).filter((f) => f.endsWith(".ts"))) {
    const text = readFileSync(join(CLIENT, file), "utf8");
    for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)";/gms)) {
      const [, , typeOnly, spec] = m;
      if (typeOnly) continue;
      seen.add(spec!);
      const own = spec!.startsWith("./") && !spec!.includes("/", 2);
      assert.ok(own || spec!.startsWith("node:") || declared.includes(spec!), `${file} imports ${spec} at run time`);
    }
  }
  assert.ok(seen.has("undici") && seen.has("./retry.ts"), "the scan saw the imports");
});

test("a copy of client/ alone, with only undici installed, calls a running gateway", async () => {
  const tg = await start();
  const server = await tg.listen();
  const dir = tempDir("client-alone");
  cpSync(CLIENT, join(dir, "client"), { recursive: true });
  writeFileSync(join(dir, "package.json"), JSON.stringify({ type: "module", private: true }));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(join(ROOT, "node_modules", "undici"), join(dir, "node_modules", "undici"));
  writeFileSync(
    join(dir, "use.ts"),
    `import { createInvoiceGatewayClient, isProblemError, verifyWebhook } from "./client/index.ts";
const gw = createInvoiceGatewayClient({ baseUrl: process.argv[2], host: "${PASSTHROUGH}", apiKey: "gw_demo_key_0001" });
const list = await gw.subBusinesses.list();
const err = await gw.subBusinesses.get("nope-0001").catch((e) => e);
console.log(JSON.stringify({ status: list.status, problem: isProblemError(err) ? err.code : null, webhook: verifyWebhook("s", {}, "") }));
`,
  );
  const { stdout } = await promisify(execFile)(join(ROOT, "node_modules", ".bin", "tsx"), [join(dir, "use.ts"), server.url], { cwd: dir });
  assert.equal(JSON.parse(stdout.trim()), { status: 200, problem: "GW_SUB_BUSINESS_NOT_FOUND", webhook: false });
});

test("construction for topologies: a custom undici dispatcher carries every send, with the Host override and extra headers", async () => {
  const tg = await start();
  const server = await tg.listen();
  const seen: Array<Record<string, string>> = [];
  const dispatcher = new Agent().compose((dispatch) => (opts, handler) => {
    seen.push({ ...(opts.headers as Record<string, string>) });
    return dispatch(opts, handler);
  });
  const gw = createInvoiceGatewayClient({ baseUrl: server.url, host: PASSTHROUGH, apiKey: DEMO_KEY, dispatcher, headers: { "user-agent": "topology-test" } });
  const list = await gw.subBusinesses.list();
  assert.is(list.status, 200);
  assert.is(seen.length, 1);
  assert.is(seen[0]!.host, PASSTHROUGH);
  assert.is(seen[0]!["user-agent"], "topology-test");
  assert.is(seen[0]!["x-api-key"], DEMO_KEY);
  await dispatcher.close();
});

test.run();
