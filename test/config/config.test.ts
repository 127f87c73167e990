/**
 * config/load.ts: the demo config's exact values, every problem of an invalid config at once
 * (with dotted paths, never a secret value), the cross-field rules, environment overrides, how
 * the file is chosen, unreadable files and bad JSON, the scale-out example, and `npm start` with
 * an invalid config (exit 1, every problem on stderr, no stack trace).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, DEFAULT_CONFIG_PATH, configPathFrom, loadConfig } from "../../config/load.ts";
import { hashSecret } from "../../core/directory.ts";
import { spawnTs } from "../support/child-process.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DEMO_PATH = join(ROOT, "config/demo.json");
const SCALE_OUT_PATH = join(ROOT, "config/scale-out.json");
const DEMO = JSON.parse(readFileSync(DEMO_PATH, "utf8")) as Record<string, any>;
const TMP = mkdtempSync(join(tmpdir(), "gatehouse-config-"));

function demo(): Record<string, any> {
  return structuredClone(DEMO);
}

function problemsOf(fn: () => unknown): { error: ConfigError; problems: string[] } {
  try {
    fn();
  } catch (e) {
    assert.instance(e, ConfigError);
    const error = e as ConfigError;
    assert.ok(error.problems.length > 0);
    for (const p of error.problems) assert.ok(error.message.includes(p), "the message lists every problem");
    return { error, problems: error.problems };
  }
  assert.unreachable("expected a ConfigError");
  throw new Error("unreachable");
}

function writeTmp(name: string, content: string): string {
  const path = join(TMP, name);
  writeFileSync(path, content);
  return path;
}

test.after(() => rmSync(TMP, { recursive: true, force: true }));

// ---------------------------------------------------------------------------
// The demo config
// ---------------------------------------------------------------------------

test("the demo config loads with exactly the demo values", () => {
  const c = loadConfig({ argv: ["--config", DEMO_PATH], env: {} });
  assert.is(c.demo, true);
  assert.is(c.server.port, 3000);
  assert.is(c.server.host, "127.0.0.1");
  assert.equal(c.edge, { mode: "direct" });
  assert.is(c.regulator.simulator.enabled, true);
  assert.is(c.regulator.simulator.port, 3100);
  assert.equal(c.collections.hosts, ["localhost", "127.0.0.1", "collections.demo.localhost"]);

  assert.equal(c.businesses.map((b) => [b.id, b.state]), [["demo", "TEST"], ["demo-stored", "TEST"], ["other", "TEST"]]);
  const [d, s, o] = c.businesses;
  assert.equal(d!.gateway!.domains.map((x) => [x.host, x.mode]), [["passthrough.demo.localhost", "passthrough"]]);
  assert.equal(s!.gateway!.domains.map((x) => [x.host, x.mode]), [["stored.demo.localhost", "stored"]]);
  assert.equal(s!.gateway!.apiKeys.map((k) => [k.id, k.key]), [["demo-stored-primary", "gw_demo_key_stored"]]);
  assert.is(s!.gateway!.wallet.openingBalance, "1000000.00");
  assert.equal(d!.gateway!.apiKeys.map((k) => [k.id, k.key, k.demoOnly, k.ipWhitelisted]), [
    ["demo-primary", "gw_demo_key_0001", true, []],
    ["demo-allowlisted", "gw_demo_key_allowlisted", true, ["10.9.9.9"]],
  ]);
  assert.equal(d!.collections!.apiKeys.map((k) => k.key), ["sk_test_demo_0001"]);
  assert.is(d!.gateway!.wallet.openingBalance, "1000000.00");
  assert.equal(o!.gateway!.domains.map((x) => [x.host, x.mode]), [["other.demo.localhost", "passthrough"]]);
  assert.equal(o!.gateway!.apiKeys.map((k) => [k.id, k.key]), [["other-primary", "gw_other_key_0001"]]);
  assert.equal(o!.collections!.apiKeys.map((k) => k.key), ["sk_test_other_0001"]);
  assert.is(o!.gateway!.wallet.openingBalance, "0.00");
  assert.equal(c.operators.apiKeys.map((k) => [k.id, k.key]), [["demo-operator", "admin_demo_key_0001"]]);
  for (const dom of [...d!.gateway!.domains, ...o!.gateway!.domains]) assert.is(dom.signFee, "50.00");
});

test("the demo config's defaults: limits of DECISIONS.md, quotas of spec §8", () => {
  const c = loadConfig({ argv: ["--config", DEMO_PATH], env: {} });
  assert.is(c.limits.bodyBytes, 64 * 1024);
  assert.is(c.limits.largeBodyBytes, 1024 * 1024);
  assert.is(c.server.maxUriLength, 8192);
  assert.equal(c.limits.quotas.sign, { limit: 120, windowSeconds: 60 });
  assert.equal(c.limits.quotas.management, { limit: 30, windowSeconds: 60 });
  assert.equal(c.limits.quotas.default, { limit: 300, windowSeconds: 60 });
});

test("a loaded config is deeply frozen", () => {
  const c = loadConfig({ raw: demo(), env: {} });
  assert.ok(Object.isFrozen(c));
  assert.ok(Object.isFrozen(c.businesses[0]!.gateway!.apiKeys[0]));
  assert.throws(() => {
    (c.server as { port: number }).port = 1;
  });
});

// ---------------------------------------------------------------------------
// Invalid configs: every problem at once
// ---------------------------------------------------------------------------

test("an invalid config lists EVERY problem at once, each with its dotted path", () => {
  const raw = demo();
  raw.server.port = -1;
  raw.server.extra = true;
  raw.businesses[0].state = "PROD";
  raw.businesses[0].gateway.domains[0].mode = "hybrid";
  raw.businesses[1].gateway.domains[0].host = "Bad Host";
  raw.businesses[1].gateway.wallet.openingBalance = "12";
  raw.limits = { quotas: { sign: { limit: 0, windowSeconds: 60 } } };
  raw.log = { level: "loud" };
  delete raw.businesses[1].name;
  raw.storage = { driver: "mongodb" };
  // Cross-field problems in the same file are reported together with the schema's.
  raw.collections.hosts.push("passthrough.demo.localhost");
  const { problems } = problemsOf(() => loadConfig({ raw, env: {} }));
  const paths = problems.map((p) => p.split(":")[0]);
  for (const path of [
    "server.port",
    "server.extra",
    "businesses.0.state",
    "businesses.0.gateway.domains.0.mode",
    "businesses.1.gateway.domains.0.host",
    "businesses.1.gateway.wallet.openingBalance",
    "businesses.1.name",
    "limits.quotas.sign.limit",
    "log.level",
    "storage.uri",
    "collections.hosts",
  ])
    assert.ok(paths.includes(path), `missing ${path} in:\n${problems.join("\n")}`);
  assert.ok(problems.length >= 11);
  assert.ok(problems.some((p) => p.startsWith("server.extra") && p.includes("unknown field")));
  assert.ok(problems.some((p) => p.startsWith("businesses.1.name") && p.includes("required")));
});

test("a plain-text key without demoOnly is refused; so is any plain-text key without demo: true", () => {
  const raw = demo();
  delete raw.businesses[0].gateway.apiKeys[0].demoOnly;
  const a = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.ok(a.problems.some((p) => p.startsWith("businesses.0.gateway.apiKeys.0:") && p.includes("demoOnly")), a.problems.join("\n"));

  const notDemo = demo();
  notDemo.demo = false;
  const b = problemsOf(() => loadConfig({ raw: notDemo, env: {} }));
  // Every plain-text credential is listed (4 gateway, 2 collections, 1 operator).
  assert.is(b.problems.filter((p) => p.includes('"demo": true')).length, 7, b.problems.join("\n"));
  assert.ok(b.problems.some((p) => p.startsWith("operators.apiKeys.0:")));
  assert.ok(b.problems.some((p) => p.startsWith("businesses.2.collections.apiKeys.0:")));
});

test("credentials: key or keyHash (not both, not neither), ids unique, keyHash well formed", () => {
  const raw = demo();
  raw.businesses[0].gateway.apiKeys[0].keyHash = hashSecret("x-other-key");
  delete raw.businesses[0].gateway.apiKeys[1].key;
  raw.businesses[1].gateway.apiKeys[0].id = "demo-primary";
  const { problems } = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.ok(problems.some((p) => p.startsWith("businesses.0.gateway.apiKeys.0:") && p.includes("not both")));
  assert.ok(problems.some((p) => p.startsWith("businesses.0.gateway.apiKeys.1:") && p.includes("needs keyHash")));
  assert.ok(problems.some((p) => p.startsWith("businesses.1.gateway.apiKeys.0:") && p.includes('"demo-primary" is used twice')));
  const badHash = demo();
  badHash.operators.apiKeys[0] = { id: "op", keyHash: "md5:abc" };
  const h = problemsOf(() => loadConfig({ raw: badHash, env: {} }));
  assert.ok(h.problems.some((p) => p.startsWith("operators.apiKeys.0.keyHash:") && p.includes("sha256")));
});

test("a duplicate gateway host is refused (across and within businesses)", () => {
  const raw = demo();
  raw.businesses[2].gateway.domains[0].host = "stored.demo.localhost";
  const a = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.equal(a.problems, ['businesses.2.gateway.domains.0.host: "stored.demo.localhost" already belongs to business "demo-stored"']);
  const same = demo();
  same.businesses[0].gateway.domains.push({ host: "passthrough.demo.localhost", mode: "stored", signFee: "50.00" });
  const b = problemsOf(() => loadConfig({ raw: same, env: {} }));
  assert.ok(b.problems.some((p) => p.startsWith("businesses.0.gateway.domains.1.host:")));
});

test("one approved domain per top-level business: a business with a second gateway domain is refused, naming the field", () => {
  const raw = demo();
  raw.businesses[0].gateway.domains.push({ host: "second.demo.localhost", mode: "stored", signFee: "50.00" });
  const { problems } = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.equal(problems.length, 1, problems.join("\n"));
  assert.ok(problems[0]!.startsWith('businesses.0.gateway.domains: business "demo" declares 2 domains'), problems[0]);
  assert.ok(problems[0]!.includes("its own business"), problems[0]);
});

test("a duplicate business id is refused", () => {
  const raw = demo();
  raw.businesses[1].id = "demo";
  const { problems } = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.ok(problems.some((p) => p.startsWith("businesses.1.id:") && p.includes("twice")));
});

test("a collections host that is also a gateway domain is refused", () => {
  const raw = demo();
  raw.collections.hosts = ["localhost", "other.demo.localhost"];
  const { problems } = problemsOf(() => loadConfig({ raw, env: {} }));
  assert.equal(problems, ['collections.hosts: "other.demo.localhost" is also a gateway domain of business "other"']);
});

test("trusted edge: needs secretHash; a plain secret only on demo configs", () => {
  const raw = demo();
  raw.edge = { mode: "trusted" };
  assert.ok(problemsOf(() => loadConfig({ raw, env: {} })).problems.some((p) => p.startsWith("edge:") && p.includes("secretHash")));
  const plain = demo();
  plain.demo = false;
  plain.businesses = [];
  plain.operators = { apiKeys: [] };
  plain.edge = { mode: "trusted", secret: "a-long-enough-edge-secret" };
  assert.ok(problemsOf(() => loadConfig({ raw: plain, env: {} })).problems.some((p) => p.startsWith("edge.secret:")));
  const ok = demo();
  ok.edge = { mode: "trusted", secretHash: hashSecret("edge") };
  const c = loadConfig({ raw: ok, env: {} });
  assert.equal(c.edge, { mode: "trusted", secretHeader: "x-gatehouse-edge-secret", secretHash: hashSecret("edge"), clientAddressHeader: "x-gatehouse-client-ip" });
});

test("no error message ever contains a secret value from the config", () => {
  const raw = demo();
  raw.businesses[0].gateway.apiKeys[0].key = "SEKRIT7"; // too short
  raw.businesses[0].gateway.apiKeys[1].keyHash = "sha256:SECRET-HASH-VALUE";
  raw.businesses[0].collections.webhook = { url: "not a url SECRET-HOOK-TOKEN", secret: "WHSEC-SHORT" };
  raw.edge = { mode: "trusted", secret: "EDGE-SHORT" };
  raw.regulator.apiKey = 12345678;
  raw.regulator.baseUrls = { LIVE: "ftp//SECRET-URL-PASSWORD" };
  raw.server.publicBaseUrl = "SECRET-PUBLIC-URL";
  const env = { MONGODB_URI: "postgres://user:DBPASSWORD-SECRET@db/x", STORAGE_DRIVER: "mongodb", REDIS_URL: "http://:REDISPASS-SECRET@r", COORDINATION_DRIVER: "redis" };
  const { error, problems } = problemsOf(() => loadConfig({ raw, env }));
  const text = error.message + "\n" + problems.join("\n");
  for (const secret of ["SEKRIT7", "SECRET-HASH-VALUE", "SECRET-HOOK-TOKEN", "WHSEC-SHORT", "EDGE-SHORT", "12345678", "SECRET-URL-PASSWORD", "SECRET-PUBLIC-URL", "DBPASSWORD-SECRET", "REDISPASS-SECRET"])
    assert.not.ok(text.includes(secret), `"${secret}" in:\n${text}`);
  assert.not.ok(/received/i.test(text), text);
  for (const path of [
    "businesses.0.gateway.apiKeys.0.key",
    "businesses.0.gateway.apiKeys.1.keyHash",
    "businesses.0.collections.webhook.url",
    "businesses.0.collections.webhook.secret",
    "edge.secret",
    "regulator.apiKey",
    "regulator.baseUrls.LIVE",
    "server.publicBaseUrl",
    "storage.uri",
    "coordination.url",
  ])
    assert.ok(problems.some((p) => p.startsWith(path + ":")), `missing ${path} in:\n${text}`);
});

test("an invoice webhook URL must be https: plain http:// only to a loopback address while the business is TEST; the problem names the field", async () => {
  const withHook = (url: string, state = "TEST") => {
    const raw = demo();
    raw.businesses[0].state = state;
    raw.businesses[0].gateway.webhook = { url, secret: "whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQ=" };
    return raw;
  };
  const FIELD = "businesses.0.gateway.webhook.url";
  for (const ok of [withHook("https://hooks.example.ng/gatehouse"), withHook("http://127.0.0.1:4000/hooks"), withHook("https://hooks.example.ng/x", "LIVE")])
    loadConfig({ argv: ["--config", writeTmp("hook-ok.json", JSON.stringify(ok))], env: {} });
  for (const [url, state] of [["http://hooks.example.ng/gatehouse", "TEST"], ["http://localhost:4000/hooks", "LIVE"], ["ftp://hooks.example.ng/x", "TEST"]] as const) {
    const path = writeTmp("hook-bad.json", JSON.stringify(withHook(url, state)));
    const { problems } = problemsOf(() => loadConfig({ argv: ["--config", path], env: {} }));
    assert.ok(problems.some((p) => p.startsWith(`${FIELD}: must be https://`)), `${url} (${state}): ${problems.join("; ")}`);
    assert.not.ok(problems.join("\n").includes("hooks.example.ng"), "the URL is not echoed");
  }
  // `config check`, as an operator runs it: exit 1, the field named.
  const path = writeTmp("hook-check.json", JSON.stringify(withHook("http://hooks.example.ng/gatehouse")));
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawnTs("bin/gatehouse.js", ["config", "check", path], { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("close", (code) => resolve({ code, out }));
  });
  assert.is(run.code, 1, run.out);
  assert.ok(run.out.includes(FIELD), run.out);
  assert.match(run.out, /must be https:\/\//);
});

test("attestation: keyId and deadline defaults; the seed from ATTESTATION_SEED must be 32 bytes base64 (never echoed)", () => {
  const seed = Buffer.alloc(32, 3).toString("base64");
  const c = loadConfig({ argv: ["--config", DEMO_PATH], env: { ATTESTATION_SEED: seed } });
  assert.equal([c.attestation.keyId, c.attestation.seed === seed, c.attestation.timeoutMs], ["gatehouse-attestation-1", true, 2000]);
  const { problems } = problemsOf(() => loadConfig({ argv: ["--config", DEMO_PATH], env: { ATTESTATION_SEED: "SEEDSECRET" } }));
  assert.equal(problems, ["attestation.seed: must be 32 bytes, base64"]);
});

// ---------------------------------------------------------------------------
// Environment overrides and file selection
// ---------------------------------------------------------------------------

test("env overrides: PORT, HOST, REGULATOR_SIM_PORT, LOG_LEVEL, LOG_FORMAT", () => {
  const c = loadConfig({
    raw: demo(),
    env: { PORT: "4000", HOST: "0.0.0.0", REGULATOR_SIM_PORT: "4100", LOG_LEVEL: "warn", LOG_FORMAT: "pretty", SHUTDOWN_GRACE_MS: "500" },
  });
  assert.is(c.server.port, 4000);
  assert.is(c.server.host, "0.0.0.0");
  assert.is(c.regulator.simulator.port, 4100);
  assert.is(c.log.level, "warn");
  assert.is(c.log.format, "pretty");
  assert.is(c.server.shutdownGraceMs, 500);
  // Empty values are ignored.
  assert.is(loadConfig({ raw: demo(), env: { PORT: "" } }).server.port, 3000);
  // A bad value is a config problem at the overridden path.
  assert.ok(problemsOf(() => loadConfig({ raw: demo(), env: { PORT: "http" } })).problems.some((p) => p.startsWith("server.port:")));
  assert.ok(problemsOf(() => loadConfig({ raw: demo(), env: { LOG_LEVEL: "loud" } })).problems.some((p) => p.startsWith("log.level:")));
});

test("env overrides: STORAGE_DRIVER=mongodb + MONGODB_URI, COORDINATION_DRIVER=redis + REDIS_URL", () => {
  const c = loadConfig({
    raw: demo(),
    env: { STORAGE_DRIVER: "mongodb", MONGODB_URI: "mongodb://m:27017/?replicaSet=rs0", COORDINATION_DRIVER: "redis", REDIS_URL: "redis://r:6379" },
  });
  assert.equal(c.storage, { driver: "mongodb", uri: "mongodb://m:27017/?replicaSet=rs0", dbName: "gatehouse" });
  assert.equal(c.coordination, { driver: "redis", url: "redis://r:6379", keyPrefix: "gh:", commandTimeoutMs: 500 });
  // Switching back to embedded drivers drops the other drivers' fields.
  const back = loadConfig({ raw: demo(), env: { STORAGE_DRIVER: "memory", COORDINATION_DRIVER: "memory", MONGODB_URI: "mongodb://m" } });
  assert.equal(back.storage, { driver: "memory" });
  assert.equal(back.coordination, { driver: "memory" });
  // A driver without its address is a problem naming the missing field.
  assert.ok(problemsOf(() => loadConfig({ raw: demo(), env: { STORAGE_DRIVER: "mongodb" } })).problems.some((p) => p.startsWith("storage.uri:")));
  assert.ok(problemsOf(() => loadConfig({ raw: demo(), env: { COORDINATION_DRIVER: "redis" } })).problems.some((p) => p.startsWith("coordination.url:")));
  // DATA_DIR applies to the fs driver.
  assert.equal(loadConfig({ raw: demo(), env: { DATA_DIR: "/var/lib/gatehouse" } }).storage, { driver: "fs", dir: "/var/lib/gatehouse" });
});

test("--config path, --config=path and GATEHOUSE_CONFIG select the file (argv first)", () => {
  const alt = demo();
  alt.server.port = 3999;
  const altPath = writeTmp("alt.json", JSON.stringify(alt));
  assert.is(loadConfig({ argv: ["--config", altPath], env: {} }).server.port, 3999);
  assert.is(loadConfig({ argv: [`--config=${altPath}`], env: {} }).server.port, 3999);
  assert.is(loadConfig({ argv: [], env: { GATEHOUSE_CONFIG: altPath } }).server.port, 3999);
  assert.is(loadConfig({ argv: ["--config", DEMO_PATH], env: { GATEHOUSE_CONFIG: altPath } }).server.port, 3000);
  assert.is(configPathFrom([], {}), DEFAULT_CONFIG_PATH);
  assert.is(DEFAULT_CONFIG_PATH, "config/demo.json");
  assert.is(configPathFrom(["serve", "--config", "x.json"], {}), "x.json");
  // Env overrides apply on top of the selected file.
  assert.is(loadConfig({ argv: ["--config", altPath], env: { PORT: "1234" } }).server.port, 1234);
  const err = problemsOf(() => loadConfig({ argv: ["--config", join(TMP, "missing.json")], env: {} }));
  assert.ok(err.error.source.endsWith("missing.json"));
  assert.ok(err.error.message.includes("missing.json"), "the message names the file");
});

test("an unreadable file or bad JSON gives a ConfigError with a clear message", () => {
  const missing = problemsOf(() => loadConfig({ argv: ["--config", join(TMP, "nope.json")], env: {} }));
  assert.equal(missing.problems, ["cannot read the config file: ENOENT"]);
  const dir = join(TMP, "a-directory.json");
  mkdirSync(dir, { recursive: true });
  const isDir = problemsOf(() => loadConfig({ argv: ["--config", dir], env: {} }));
  assert.equal(isDir.problems, ["cannot read the config file: EISDIR"]);

  const bad = writeTmp("bad.json", '{\n  "demo": true,\n  "server": { "port": 3000 }\n  "businesses": []\n}\n');
  const b = problemsOf(() => loadConfig({ argv: ["--config", bad], env: {} }));
  assert.is(b.problems.length, 1);
  assert.match(b.problems[0]!, /^not valid JSON: .+ at line 4, column 3$/);

  const empty = writeTmp("empty.json", "");
  assert.match(problemsOf(() => loadConfig({ argv: ["--config", empty], env: {} })).problems[0]!, /^not valid JSON/);
  const notObject = writeTmp("array.json", "[1, 2]");
  assert.ok(problemsOf(() => loadConfig({ argv: ["--config", notObject], env: {} })).problems.length >= 1);
});

test("a JSON syntax error never quotes the file (which may hold keys)", () => {
  // V8 quotes about ten characters around some errors: keep the secret inside that window.
  const cases = ['{"k": QSX9}', '{"key": "QSX9" x}', "QSX9", '{"k": "QSX9\n"}', '{"k": tru, "s": "QSX9"}'];
  cases.forEach((text, i) => {
    const path = writeTmp(`syntax-${i}.json`, text);
    const { error } = problemsOf(() => loadConfig({ argv: ["--config", path], env: {} }));
    assert.match(error.problems[0]!, /^not valid JSON/);
    assert.not.ok(error.message.includes("QSX9"), error.message);
  });
});

// ---------------------------------------------------------------------------
// The scale-out example
// ---------------------------------------------------------------------------

test("config/scale-out.json loads and validates: MongoDB replica set, Redis, trusted edge, hashes only", () => {
  const c = loadConfig({ argv: ["--config", SCALE_OUT_PATH], env: {} });
  assert.is(c.demo, false);
  assert.equal(c.storage, { driver: "mongodb", uri: "mongodb://mongo-1:27017,mongo-2:27017,mongo-3:27017/?replicaSet=rs0", dbName: "gatehouse" });
  assert.is(c.coordination.driver, "redis");
  assert.is(c.coordination.driver === "redis" && c.coordination.url, "redis://redis:6379");
  assert.is(c.edge.mode, "trusted");
  assert.match(c.edge.mode === "trusted" ? c.edge.secretHash ?? "" : "", /^sha256:[0-9a-f]{64}$/);
  assert.not.ok(c.edge.mode === "trusted" && c.edge.secret !== undefined, "no plain edge secret");
  assert.is(c.regulator.simulator.enabled, false);
  assert.match(c.regulator.baseUrls.TEST ?? "", /^https:\/\//);
  assert.match(c.regulator.baseUrls.LIVE ?? "", /^https:\/\//);
  assert.is.not(c.regulator.baseUrls.TEST, c.regulator.baseUrls.LIVE);
  assert.is(c.log.format, "json");
  assert.ok(c.businesses.length >= 1);
  const creds = [
    ...c.businesses.flatMap((b) => [...(b.gateway?.apiKeys ?? []), ...(b.collections?.apiKeys ?? [])]),
    ...c.operators.apiKeys,
  ];
  assert.ok(creds.length >= 3);
  const demoHashes = new Set(
    ["gw_demo_key_0001", "gw_demo_key_allowlisted", "gw_other_key_0001", "sk_test_demo_0001", "sk_test_other_0001", "admin_demo_key_0001"].map(hashSecret),
  );
  for (const k of creds) {
    assert.is(k.key, undefined, `${k.id} has a plain key`);
    assert.is(k.demoOnly, false);
    assert.match(k.keyHash ?? "", /^sha256:[0-9a-f]{64}$/);
    assert.not.ok(demoHashes.has(k.keyHash!), `${k.id} reuses a demo key`);
  }
  assert.is(new Set(creds.map((k) => k.keyHash)).size, creds.length, "every key distinct");
  // Env overrides apply as in production.
  const viaEnv = loadConfig({ argv: ["--config", SCALE_OUT_PATH], env: { MONGODB_URI: "mongodb://other:27017", REDIS_URL: "redis://other:6379" } });
  assert.is(viaEnv.storage.driver === "mongodb" && viaEnv.storage.uri, "mongodb://other:27017");
});

test("config/scale-out.json has no plain `key`, `secret` or `demoOnly` field anywhere", () => {
  const raw = JSON.parse(readFileSync(SCALE_OUT_PATH, "utf8")) as unknown;
  const found: string[] = [];
  const walk = (value: unknown, path: string) => {
    if (Array.isArray(value)) value.forEach((x, i) => walk(x, `${path}.${i}`));
    else if (value && typeof value === "object")
      for (const [k, v] of Object.entries(value)) {
        if (["key", "secret", "demoOnly", "apiKey", "apiSecret"].includes(k)) found.push(`${path}.${k}`);
        walk(v, `${path}.${k}`);
      }
  };
  walk(raw, "");
  assert.equal(found, []);
  assert.is((raw as { demo: boolean }).demo, false);
});

// ---------------------------------------------------------------------------
// npm start with an invalid config
// ---------------------------------------------------------------------------

test("boot/main.ts with an invalid config exits 1 and prints every problem to stderr, no stack trace", async () => {
  const raw = demo();
  raw.server.port = "eighty";
  raw.businesses[0].state = "PROD";
  raw.businesses[0].gateway.apiKeys[0].key = "SEKRIT7";
  raw.mystery = 1;
  raw.collections.hosts.push("stored.demo.localhost");
  const path = writeTmp("invalid-for-main.json", JSON.stringify(raw, null, 2));
  const { code, stdout, stderr } = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawnTs("boot/main.ts", ["--config", path], { ...process.env, NO_COLOR: "1", PORT: "", GATEHOUSE_CONFIG: "" });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 8_000);
    child.on("close", (c) => {
      clearTimeout(timer);
      resolve({ code: c, stdout: out, stderr: err });
    });
  });
  assert.is(code, 1, stderr);
  assert.ok(stderr.includes("invalid config"), stderr);
  for (const p of ["server.port", "businesses.0.state", "businesses.0.gateway.apiKeys.0.key", "mystery", "collections.hosts"])
    assert.ok(stderr.includes(p), `stderr lacks ${p}:\n${stderr}`);
  assert.not.ok(stderr.includes("SEKRIT7"));
  assert.not.match(stderr, /^\s+at /m, "no stack trace");
  assert.not.ok(stderr.includes("ConfigError:"), "no raw error dump");
  assert.not.ok(stdout.includes("listening"), "nothing started");
});

test.run();
