/**
 * How JSON log lines are written (core/log.ts): `jsonLine` is byte for byte the JSON of the redacted
 * record (it only skips building the copy), and the line writer batches lines into one write per
 * event-loop turn without losing or reordering one, flushing on demand and at process exit.
 */
import { spawnSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { compileShape, createLineWriter, createLogger, jsonLine, redact, shapedLine, type LogFields } from "../../../core/log.ts";

const ROOT = new URL("../../../", import.meta.url).pathname;

/** What the line was defined as before it was written directly: the redacted record, stringified. */
function reference(level: string, name: string, fields: LogFields | undefined): string {
  return JSON.stringify({ level, event: name, ...(fields ? redact(fields) : {}) });
}

/** jsonLine without its time (the reference is built a moment later). */
function withoutTime(line: string): string {
  const record = JSON.parse(line) as Record<string, unknown>;
  assert.match(String(record.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.ok(line.endsWith("}\n"), "one line");
  assert.is(line.indexOf("\n"), line.length - 1, "no newline inside");
  return line.replace(/^\{"time":"[^"]*",/, "{").slice(0, -1);
}

test("jsonLine is the JSON of the redacted record, for every kind of field", () => {
  const headers = new Headers({ "x-api-key": "gw_demo_key_0001", accept: "application/json" });
  const cases: Array<LogFields | undefined> = [
    undefined,
    {},
    {
      requestId: "1b4e28ba-2fa1-11d2-883f-0016d3cca427",
      callerRequestId: null,
      method: "GET",
      route: "GET /api/v1/invoice/resources/:name",
      host: "passthrough.demo.localhost",
      status: 200,
      code: null,
      durationMs: 1.234,
      responseSize: 584,
    },
    { quote: 'say "hi"\\ok', control: "a\u0000b\u001fc\nd\te", unicode: "naïve — ünïcödé ₦", emoji: "🙂", lone: "x\ud800y", sep: "\u2028\u2029" },
    { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, neg: -0, big: 1e21, tiny: 5e-7, yes: true, no: false },
    { gone: undefined, fn: () => 1, sym: Symbol("s"), kept: "k" },
    { apiKey: "gw_demo_key_0001", password: undefined, "x-idempotency-key": "IDEM-1", body: { a: 1 }, credentialId: "demo-primary" },
    { url: "https://api.example/x?token=QSECRET", text: "password=hunter2 at mongodb://u:p@h/db", key2: "gw_demo_key_0001 leaked" },
    { said: "Bearer sometokenvalue", also: "then BASIC dXNlcjpwYXNz here", plain: "GET /bench/ping", host: "passthrough.demo.localhost" },
    { nested: { deeper: { password: "p1", list: [{ token: "t1" }, "ok", 3, null] } }, headers, error: new Error("boom password=x") },
    { when: new Date(0), list: [1, "two", { three: 3 }], deep: { a: { b: { c: { d: { e: { f: 1 } } } } } } },
    { time: "caller's own", level: "x", event: "y", other: 1 },
  ];
  for (const fields of cases) {
    for (const level of ["info", "warn", "error", "debug"]) {
      const line = jsonLine(level, "gateway_request_completed", fields);
      const parsed = JSON.parse(line) as Record<string, unknown>;
      if (fields && "time" in fields) {
        // A field named like the record's own replaces it, as the spread always did.
        assert.is(parsed.time, fields.time);
        assert.equal(JSON.parse(line), JSON.parse(JSON.stringify({ time: fields.time, level, event: "gateway_request_completed", ...redact(fields) })));
        continue;
      }
      assert.is(withoutTime(line), reference(level, "gateway_request_completed", fields), JSON.stringify(fields ?? null));
    }
  }
  const secret = jsonLine("info", "e", { apiKey: "gw_demo_key_0001", note: "key gw_demo_key_0001 rejected" });
  assert.not.ok(secret.includes("gw_demo_key_0001"), "redacted");
});

test("a compiled event (Logger.shape) writes the line jsonLine writes for its record, repeating values included", () => {
  const fields = ["requestId", "route", "host", "status", "apiKey", "note", "nested", "gone", "durationMs"];
  const shape = compileShape("gateway_request_completed", fields, ["route", "host", "note"]);
  const rows: unknown[][] = [
    ["1b4e28ba-2fa1-11d2-883f-0016d3cca427", "GET /api/v1/invoice/resources/:name", "passthrough.demo.localhost", 200, "gw_demo_key_0001", "plain", { token: "t1", ok: 1 }, undefined, 1.234],
    ["id-2", "GET /api/v1/invoice/resources/:name", "passthrough.demo.localhost", 404, undefined, "key gw_demo_key_0001 rejected", null, "back", Number.NaN],
    ["id-3", null, 'say "hi"\\ok', -0, null, "password=hunter2", [1, "two"], 3, 0.5],
    // the same repeating values again: remembered, and still the same bytes
    ["id-4", "GET /api/v1/invoice/resources/:name", "passthrough.demo.localhost", 200, "x", "key gw_demo_key_0001 rejected", undefined, undefined, 7],
  ];
  for (const values of rows) {
    const record: LogFields = {};
    fields.forEach((f, i) => {
      if (values[i] !== undefined) record[f] = values[i];
    });
    for (const level of ["info", "warn"]) {
      const line = shapedLine(shape, level, values);
      assert.is(withoutTime(line), reference(level, "gateway_request_completed", record), JSON.stringify(values));
      assert.not.ok(line.includes("gw_demo_key_0001"), "redacted");
    }
  }
  assert.throws(() => compileShape("e", ["level"]), /cannot have a field named "level"/);
  // Through a sink: the record of the values, undefined ones left out, redacted.
  const records: LogFields[] = [];
  const log = createLogger({ level: "info", sink: (r) => records.push(r) });
  const e = log.shape("probe", ["a", "b", "apiKey"], ["a"]);
  e.event(["x", undefined, "gw_demo_key_0001"]);
  e.warn(["y", 2, undefined]);
  log.shape("quiet", ["a"]).event(["z"]);
  assert.equal(records.map(({ time: _, ...r }) => r), [
    { level: "info", event: "probe", a: "x", apiKey: "[redacted]" },
    { level: "warn", event: "probe", a: "y", b: 2 },
    { level: "info", event: "quiet", a: "z" },
  ]);
  const warnOnly: LogFields[] = [];
  createLogger({ level: "warn", sink: (r) => warnOnly.push(r) }).shape("p", ["a"]).event(["x"]);
  assert.is(warnOnly.length, 0, "a disabled level writes nothing");
});

test("the line writer: one write per event-loop turn, every line, in order; flush writes at once", async () => {
  const writes: string[] = [];
  const writer = createLineWriter({ write: (chunk: string) => writes.push(chunk) });
  for (let i = 0; i < 5; i++) writer.write(`line ${i}\n`);
  assert.equal(writes, [], "nothing written within the turn");
  await new Promise((r) => setImmediate(r));
  assert.equal(writes, ["line 0\nline 1\nline 2\nline 3\nline 4\n"], "one write with every line, in order");
  writer.write("a\n");
  writer.flush();
  assert.equal(writes.at(-1), "a\n", "flush writes what is queued at once");
  await new Promise((r) => setImmediate(r));
  assert.is(writes.length, 2, "nothing left to write");
  // Past 64 KiB queued, the batch is written without waiting for the turn to end.
  const big = "x".repeat(1023) + "\n";
  for (let i = 0; i < 70; i++) writer.write(big);
  assert.ok(writes.length >= 3, "a large batch goes out at once");
  writer.flush();
  assert.is(writes.slice(2).join(""), big.repeat(70));
});

test("lines logged just before the process exits are written (exit flush)", () => {
  const script = [
    'import { createLogger } from "./core/log.ts";',
    'const log = createLogger({ level: "info", format: "json" });',
    'for (let i = 0; i < 1000; i++) log.event("exit_flush_probe", { i });',
    "process.exit(0);",
  ].join("\n");
  const run = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
  assert.is(run.status, 0, run.stderr);
  const lines = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as { event: string; i: number });
  assert.is(lines.length, 1000);
  assert.equal(lines.map((l) => l.i), Array.from({ length: 1000 }, (_, i) => i), "every line, in order");
});

test.run();
