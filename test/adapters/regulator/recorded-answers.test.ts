/**
 * The recorded-answer suite: answers of the regulator's real sandbox, transcribed from public documents
 * into test/fixtures/regulator-recorded/*.json (each naming its source), replayed to the regulator client
 * by a local HTTP server. Every answer maps to the spec's code (§3.2, §3.5, §5.7, §7.6, §7.10, §7.11).
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { isRegulatorGatewayError } from "../../../adapters/regulator/port.ts";
import { CTX, makeClient, type ClientHarness } from "./regulator-helpers.ts";
import { loadRecordedAnswers, recordedAnswer, recordedBodyText, runCall, startReplayServer, type ReplayServer } from "./recorded-helpers.ts";

const answers = loadRecordedAnswers();

// ---------------------------------------------------------------------------
// The fixtures themselves
// ---------------------------------------------------------------------------

const fixtures = suite("recorded answers: the fixtures");

fixtures("every answer names its source (repository, commit, document, section, lines, kind)", () => {
  assert.ok(answers.length >= 20, String(answers.length));
  const names = new Set<string>();
  for (const a of answers) {
    assert.not.ok(names.has(a.name), `duplicate name ${a.name}`);
    names.add(a.name);
    assert.is(a.source.repository, "github.com/mukhtar-github/taxpoynt-platform", a.name);
    assert.match(a.source.commit, /^[0-9a-f]{40}$/, a.name);
    assert.match(a.source.path, /^docs\/.+\.md$/, a.name);
    assert.match(a.source.lines, /^\d+-\d+$/, a.name);
    assert.ok(["recorded", "documented-sample", "reconstructed"].includes(a.source.kind), a.name);
  }
});

fixtures("the transcription is faithful: each recorded content-length equals the compact body's length", () => {
  let checked = 0;
  for (const a of answers) {
    const recorded = a.response.headers["content-length"];
    if (recorded === undefined) continue;
    assert.is(String(Buffer.byteLength(recordedBodyText(a))), recorded, a.name);
    checked += 1;
  }
  assert.ok(checked >= 17, `${checked} answers carry a recorded content-length`);
});

fixtures("the real error envelope: a per-request UUID error.id (all distinct), details a string or absent", () => {
  const ids = new Set<string>();
  for (const a of answers) {
    const body = a.response.body as { error?: { id: string; details?: unknown } };
    if (!body.error) continue;
    assert.match(body.error.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, a.name);
    assert.ok(body.error.details === undefined || typeof body.error.details === "string", a.name);
    ids.add(body.error.id);
  }
  assert.ok(ids.size >= 17, String(ids.size));
});

// ---------------------------------------------------------------------------
// Replayed to the client
// ---------------------------------------------------------------------------

const replay = suite("recorded answers: replayed to the regulator client");
let server: ReplayServer;
let h: ClientHarness;

replay.before(async () => {
  server = await startReplayServer();
});
replay.after(async () => {
  await server.close();
});
replay.before.each(() => {
  h = makeClient({ TEST: server.url });
});
replay.after.each(async () => {
  await h.close();
});

for (const answer of answers) {
  for (const [i, { call, expect }] of answer.scenarios.entries()) {
    const label = expect.throws ?? (expect.passThrough ? "passed through" : "its value");
    replay(`${answer.name} (${answer.source.kind}) → ${call.op}${call.op === "relay" ? ` ${call.method} ${call.path}` : ""} #${i + 1}: ${label}`, async () => {
      server.serve(answer);
      const before = server.requests.length;
      const outcome = await runCall(h, call);
      assert.is(server.requests.length, before + 1, "exactly one call reached the regulator");
      if (expect.throws !== undefined) {
        assert.is(outcome.kind, "throws", JSON.stringify(outcome));
        if (outcome.kind !== "throws") return;
        assert.is(outcome.code, expect.throws);
        assert.is(outcome.status, expect.status);
        assert.is(outcome.dependencyFailure, expect.dependencyFailure);
        if (expect.failureClass !== undefined) assert.is(outcome.failureClass, expect.failureClass);
        const counted = h.policies.get("regulator:TEST")!.snapshot().totalFailures;
        assert.is(counted, expect.dependencyFailure ? 1 : 0, "counted for the circuit exactly when it is a dependency failure");
      }
      if (expect.immediateSignal !== undefined) {
        const signals = h.events("regulator_credentials_rejected");
        assert.is(signals.length, expect.immediateSignal ? 1 : 0);
        if (expect.immediateSignal) {
          assert.is(signals[0]!.alert, "immediate");
          assert.is(signals[0]!.level, "error");
          assert.is(signals[0]!.upstreamStatus, answer.response.status);
        }
      }
      if (expect.notPerformed) {
        const [event] = h.events("gateway_dependency_call");
        assert.is(event!.result, "not_performed", "a sign/transmit that threw was certainly not performed (never ambiguous)");
      }
      if (expect.value !== undefined) assert.equal(outcome, { kind: "value", value: expect.value });
      if (expect.passThrough) assert.equal(outcome, { kind: "response", status: answer.response.status, body: recordedBodyText(answer) });
    });
  }
}

replay("the regulator's per-request error.id never reaches an error the gateway answers", async () => {
  const a = recordedAnswer("sign-api-key");
  server.serve(a);
  const err = await h.client.sign("TEST", {}, CTX).catch((e: unknown) => e);
  assert.ok(isRegulatorGatewayError(err));
  const text = JSON.stringify({ message: (err as Error).message, info: (err as { info: unknown }).info });
  assert.not.ok(text.includes("862bed30"), text);
  assert.not.ok(text.includes("unable to validate api key"), text);
});

fixtures.run();
replay.run();
