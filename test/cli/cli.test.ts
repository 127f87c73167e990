/**
 * The operator CLI, run as a process (`node bin/gatehouse.js …`, and once as `npx gatehouse` from the
 * repository) against a gateway listening on a free port, with the regulator simulator: config check,
 * keys, domains, wallet, reviews, frozen invoices; tables for people, --json for scripts, exit codes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RunningServer } from "../../core/server.ts";
import { demoEntity } from "../plugins/onboarding/onboarding-helpers.ts";
import { ADMIN_KEY, PASSTHROUGH, SUB, invoice, startSigningHarness } from "../plugins/signing/signing-helpers.ts";
import { DEMO_RAW } from "../support/gateway.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const h = await startSigningHarness();
let server: RunningServer;
const tmp = mkdtempSync(join(tmpdir(), "gatehouse-cli-"));

test.before(async () => {
  server = await h.tg.listen();
});
test.after(async () => {
  await h.close();
  rmSync(tmp, { recursive: true, force: true });
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout + stderr, as a person sees them. */
  out: string;
  json(): any;
}

/** Runs the CLI as a process; the gateway's URL and the operator key come from the environment. */
function cli(args: string[], env: Record<string, string> = {}, command: string[] = [process.execPath, join(ROOT, "bin/gatehouse.js")]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, [...command.slice(1), ...args], {
      cwd: ROOT,
      env: { ...process.env, GATEHOUSE_URL: server.url, GATEHOUSE_ADMIN_KEY: ADMIN_KEY, NO_COLOR: "1", FORCE_COLOR: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr, out: stdout + stderr, json: () => JSON.parse(stdout) }));
  });
}

test("npx gatehouse runs the CLI from the repository (package.json bin); --help lists every command", async () => {
  const r = await cli(["--help"], {}, ["npx", "--no-install", "gatehouse"]);
  assert.is(r.code, 0, r.out);
  for (const c of ["config check FILE", "keys create", "keys roll KEY_ID", "keys revoke KEY_ID", "keys list", "domains list", "domains mode-change HOST", "domains approve HOST", "wallet show BUSINESS_ID", "wallet credit BUSINESS_ID", "reviews list", "reviews decide SUB_BUSINESS_ID REVIEW_ID", "invoices frozen", "invoices resolve INVOICE_ID", "sign-attempts resolve OPERATION_ID", "transmissions resolve OPERATION_ID", "alerts dead-letters", "alerts replay ALERT_ID"])
    assert.ok(r.stdout.includes(c), c);
});

test("config check: a valid file → exit 0 with a summary; an invalid one → exit 1 listing every problem", async () => {
  const ok = await cli(["config", "check", "config/demo.json"]);
  assert.is(ok.code, 0, ok.out);
  assert.match(ok.out, /config\/demo\.json is valid/);
  assert.match(ok.out, /passthrough\.demo\.localhost \(passthrough\)/);
  const json = await cli(["config", "check", "config/scale-out.json", "--json"]);
  assert.is(json.code, 0);
  assert.is(json.json().valid, true);
  assert.is(json.json().storage, "mongodb");
  const raw = structuredClone(DEMO_RAW) as any;
  raw.businesses[0].gateway.domains[0].mode = "hybrid";
  raw.businesses[1].gateway.apiKeys[0].id = "demo-primary";
  raw.surprise = true;
  const bad = join(tmp, "bad.json");
  writeFileSync(bad, JSON.stringify(raw));
  const r = await cli(["config", "check", bad]);
  assert.is(r.code, 1, r.out);
  assert.match(r.out, /3 problems/);
  assert.match(r.out, /businesses\.0\.gateway\.domains\.0\.mode/);
  assert.match(r.out, /surprise: unknown field/);
  assert.match(r.out, /"demo-primary" is used twice/);
  const missing = await cli(["config", "check", join(tmp, "nope.json")]);
  assert.is(missing.code, 1);
  assert.match(missing.out, /cannot read the config file/);
});

test("config sync: makes a store match the file (created once; again: nothing to do)", async () => {
  const raw = structuredClone(DEMO_RAW) as any;
  raw.storage = { driver: "fs", dir: join(tmp, "data") };
  raw.regulator.simulator = { enabled: false };
  const file = join(tmp, "sync.json");
  writeFileSync(file, JSON.stringify(raw));
  const first = await cli(["config", "sync", file, "--json"]);
  assert.is(first.code, 0, first.out);
  assert.is(first.json().synced, true);
  assert.ok(first.json().created >= 10, first.stdout);
  const again = await cli(["config", "sync", file]);
  assert.is(again.code, 0, again.out);
  assert.match(again.out, /0 created, 0 updated, 0 removed/);
});

test("keys: create shows the value once; list shows it by id and hint; roll and revoke take effect on the gateway", async () => {
  const created = await cli(["keys", "create", "--scheme", "gateway", "--business", "demo", "--id", "cli-key", "--idempotency-key", "cli-create-0001"]);
  assert.is(created.code, 0, created.out);
  const plain = /shown once, store it now\): (gw_test_\S+)/.exec(created.out)?.[1];
  assert.ok(plain, created.out);
  assert.match(created.out, /cli-create-0001/, "the idempotency key is printed for a safe retry");
  const replay = await cli(["keys", "create", "--scheme", "gateway", "--business", "demo", "--id", "cli-key", "--idempotency-key", "cli-create-0001"]);
  assert.is(replay.code, 0);
  assert.not.ok(replay.out.includes(plain!), "a replay never shows the value");
  assert.match(replay.out, /shown only in the first answer/);
  const subs = (key: string) => h.tg.call("/sub-businesses", { host: PASSTHROUGH, headers: { "x-api-key": key } });
  assert.is((await subs(plain!)).status, 200);

  const list = await cli(["keys", "list", "--business", "demo"]);
  assert.is(list.code, 0);
  assert.match(list.out, /^id\s+scheme\s+businessId\s+status\s+hint/m);
  assert.match(list.out, /cli-key\s+gateway\s+demo\s+active\s+gw_test_…/);
  assert.not.ok(list.out.includes(plain!));
  const listed = await cli(["keys", "list", "--scheme", "gateway", "--json"]);
  assert.ok(listed.json().data.some((k: { id: string }) => k.id === "cli-key"));

  const rolled = await cli(["keys", "roll", "cli-key", "--old-expires-in", "now"]);
  assert.is(rolled.code, 0, rolled.out);
  const next = /shown once, store it now\): (gw_test_\S+)/.exec(rolled.out)?.[1];
  assert.ok(next && next !== plain);
  assert.is((await subs(plain!)).status, 401, "rolled with no grace: the old key is refused");
  assert.is((await subs(next!)).status, 200);
  const newId = /^id\s+(\S+)/m.exec(rolled.out)?.[1];
  const revoked = await cli(["keys", "revoke", newId!, "--json"]);
  assert.is(revoked.code, 0, revoked.out);
  assert.is(revoked.json().key.status, "revoked");
  assert.is((await subs(next!)).status, 401);
});

test("errors: exit 1 with the code, the detail and each violation; --json answers the problem; usage errors exit 2; an unreachable gateway exits 3", async () => {
  const r = await cli(["keys", "create", "--scheme", "gateway", "--business", "nobody"]);
  assert.is(r.code, 1);
  assert.match(r.out, /404 GW_OPERATION_NOT_FOUND: No business with that id\./);
  const v = await cli(["domains", "set", PASSTHROUGH, "--sign-fee", "1.005"]);
  assert.is(v.code, 1);
  assert.match(v.out, /GW_REQUEST_VALIDATION_FAILED/);
  assert.match(v.out, /body \/signFee: FORMAT|body \/signFee: \w+ at most two decimals/);
  const j = await cli(["domains", "show", "unknown.example.ng", "--json"]);
  assert.is(j.code, 1);
  assert.is(j.json().code, "GW_DOMAIN_NOT_PROVISIONED");
  const auth = await cli(["domains", "list"], { GATEHOUSE_ADMIN_KEY: "admin_wrong_key_9999" });
  assert.is(auth.code, 1);
  assert.match(auth.out, /GW_ADMIN_AUTHENTICATION_FAILED/);
  assert.is((await cli(["keys", "explode"])).code, 2);
  assert.is((await cli(["keys", "roll", "cli-key"])).code, 2, "roll needs a deadline");
  assert.is((await cli(["domains", "list"], { GATEHOUSE_ADMIN_KEY: "" })).code, 2, "no operator key");
  const down = await cli(["domains", "list", "--url", "http://127.0.0.1:1"]);
  assert.is(down.code, 3);
  assert.match(down.out, /cannot reach the gateway/);
});

test("domains: list, set the fee, mode change with drain, approve (modeVersion + 1)", async () => {
  const list = await cli(["domains", "list"]);
  assert.is(list.code, 0);
  assert.match(list.out, /passthrough\.demo\.localhost\s+demo\s+passthrough\s+1\s+approved/);
  assert.is((await cli(["domains", "set", PASSTHROUGH, "--sign-fee", "60.00", "--auto-transmit", "false"])).code, 0);
  const changing = await cli(["domains", "mode-change", PASSTHROUGH, "--mode", "stored"]);
  assert.is(changing.code, 0, changing.out);
  assert.match(changing.out, /approval\s+draining/);
  assert.match(changing.out, /pendingMode\s+stored/);
  const signed = await h.sign(invoice("CLI1"), { key: "cli-sign-0001" });
  assert.is(signed.status, 503);
  assert.is((await signed.json()).code, "GW_TENANT_MODE_UNAVAILABLE");
  const approved = await cli(["domains", "approve", PASSTHROUGH, "--json"]);
  assert.is(approved.code, 0);
  assert.equal([approved.json().mode, approved.json().modeVersion, approved.json().approval], ["stored", 2, "approved"]);
  // Back to Pass-through for what follows.
  assert.is((await cli(["domains", "mode-change", PASSTHROUGH, "--mode", "passthrough"])).code, 0);
  assert.is((await cli(["domains", "approve", PASSTHROUGH])).code, 0);
});

test("wallet: show the balance and entries; credit is idempotent on --reference", async () => {
  const credit = await cli(["wallet", "credit", "demo", "--amount", "2500.50", "--reference", "cli-topup-1"]);
  assert.is(credit.code, 0, credit.out);
  assert.match(credit.out, /reference\s+cli-topup-1/);
  assert.match(credit.out, /created\s+true/);
  const again = await cli(["wallet", "credit", "demo", "--amount", "2500.50", "--reference", "cli-topup-1", "--json"]);
  assert.is(again.json().credit.created, false);
  const show = await cli(["wallet", "show", "demo"]);
  assert.is(show.code, 0);
  assert.match(show.out, /demo: balance NGN [\d.]+/);
  assert.match(show.out, /credit\s+2500\.5\s+cli-topup-1/);
});

test("reviews: list the pending review, then decide it", async () => {
  const creds = { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } };
  const reverify = (k: string) => h.call("POST", `/sub-businesses/${SUB}/identity-reverification`, { body: creds, headers: { "x-idempotency-key": k } });
  assert.is((await reverify("cli-reverify-0001")).status, 200);
  h.sim.faults.set("entity", demoEntity({ name: "Demo Trading Nigeria Ltd" }));
  const drift = await (await reverify("cli-reverify-0002")).json();
  assert.is(drift.status, "review_created");
  const list = await cli(["reviews", "list"]);
  assert.is(list.code, 0, list.out);
  assert.ok(list.out.includes(drift.reviewId.slice(0, 8)));
  assert.match(list.out, /pending\s+additive\s+businessName/);
  const decided = await cli(["reviews", "decide", SUB, drift.reviewId, "--decision", "approve"]);
  assert.is(decided.code, 0, decided.out);
  assert.match(decided.out, /status\s+approved/);
  assert.match((await cli(["reviews", "list"])).out, /\(none\)/);
});

test("invoices frozen: the frozen Pass-through sign attempts, as a table and as JSON", async () => {
  h.sim.faults.set("sign", { kind: "malformed", afterProcessing: true, times: 1 } as never);
  assert.is((await h.sign(invoice("CLIFZ1"), { key: "cli-frozen-0001" })).status, 502);
  const table = await cli(["invoices", "frozen"]);
  assert.is(table.code, 0, table.out);
  assert.match(table.out, /passthrough-sign/);
  assert.ok(table.out.includes(invoice("CLIFZ1").irn));
  const json = await cli(["invoices", "frozen", "--business", "demo", "--json"]);
  const op = json.json().data[0];
  assert.equal([op.irn, op.money, op.code], [invoice("CLIFZ1").irn, "held", "GW_SIGN_OUTCOME_UNCONFIRMED"]);
});

test("sign-attempts resolve and transmissions resolve: the frozen operation is settled with a recorded decision and leaves the list", async () => {
  h.sim.faults.set("sign", { kind: "malformed", afterProcessing: true, times: 1 } as never);
  assert.is((await h.sign(invoice("CLIFZ2"), { key: "cli-frozen-0002" })).status, 502);
  const frozen = (await cli(["invoices", "frozen", "--json"])).json().data as Array<{ operationId: string; irn: string; kind: string }>;
  const op = frozen.find((o) => o.irn === invoice("CLIFZ2").irn)!;
  const r = await cli(["sign-attempts", "resolve", op.operationId, "--outcome", "signed"]);
  assert.is(r.code, 0, r.out);
  assert.match(r.out, /money\s+confirmed/);
  assert.match(r.out, /resolution\s+signed by operator:demo-operator/);
  assert.is((await cli(["sign-attempts", "resolve", op.operationId])).code, 2, "--outcome is required");

  assert.is((await h.sign(invoice("CLITX1"), { key: "cli-sign-tx-0001" })).status, 201);
  h.sim.faults.set("transmit", { kind: "malformed", afterProcessing: true, times: 1 } as never);
  assert.is((await h.transmit(invoice("CLITX1").irn)).status, 502);
  const unknown = (await cli(["invoices", "frozen", "--json"])).json().data.find((o: { irn: string; kind: string }) => o.irn === invoice("CLITX1").irn && o.kind === "passthrough-transmit");
  assert.ok(unknown, "the unknown transmission is listed");
  const t = await cli(["transmissions", "resolve", unknown.operationId, "--outcome", "transmitted"]);
  assert.is(t.code, 0, t.out);
  assert.match(t.out, /claimState\s+succeeded/);
  const after = (await cli(["invoices", "frozen", "--json"])).json().data as Array<{ operationId: string }>;
  assert.not.ok(after.some((o) => o.operationId === op.operationId || o.operationId === unknown.operationId));
});

test("alerts dead-letters: an empty stream is a table with (none); replay of an unknown alert is 404 (exit 1)", async () => {
  const r = await cli(["alerts", "dead-letters"]);
  assert.is(r.code, 0, r.out);
  assert.match(r.out, /\(none\)/);
  const replay = await cli(["alerts", "replay", "8a0e4c1e-7a57-4c39-9a4f-2f1b8d3c6e09"]);
  assert.is(replay.code, 1, replay.out);
  assert.match(replay.out, /GW_OPERATION_NOT_FOUND/);
});

test("audit list: the changes this run made, by this operator", async () => {
  const r = await cli(["audit", "list", "--target", "cli-key"]);
  assert.is(r.code, 0, r.out);
  assert.match(r.out, /operator:demo-operator\s+key\.roll\s+key cli-key/);
  assert.match(r.out, /operator:demo-operator\s+key\.create\s+key cli-key/);
});

test.run();
