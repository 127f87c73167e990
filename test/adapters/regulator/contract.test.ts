/**
 * Contract: the same client scenarios against the realistic simulator and against the replay server
 * (the real sandbox's recorded answers, test/fixtures/regulator-recorded) must end the same way — same
 * public code, status, dependency-failure verdict, failure class and immediate signal for failures; the
 * same answer structure (exactly the same body for the recorded invoice-types and currencies) for
 * successes. The simulator is provoked into each recorded situation the way a deployment would meet
 * it: a wrong deployment key, an entity id that is not a UUID, a path its router does not serve.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import type { Fault, SimulatorRoute } from "../../../adapters/regulator/simulator/faults.ts";
import type { RegulatorSimulator } from "../../../adapters/regulator/simulator/server.ts";
import { call, DEMO, startDemoSimulator } from "./simulator/simulator-helpers.ts";
import { makeClient, type ClientHarness } from "./regulator-helpers.ts";
import {
  loadRecordedAnswers,
  recordedAnswer,
  recordedBodyText,
  runCall,
  skeleton,
  startReplayServer,
  type Outcome,
  type RecordedAnswer,
  type ReplayServer,
  type ScenarioCall,
} from "./recorded-helpers.ts";

interface Side {
  outcome: Outcome;
  signals: number;
}

interface ContractScenario {
  name: string;
  /** The recorded answer the replay server gives. */
  recorded: string;
  call: ScenarioCall;
  /** The call against the simulator, when its arguments differ (its own fixture ids). */
  simCall?: ScenarioCall;
  /** How the simulator meets the recorded situation: a client with a wrong key, or a fault. */
  sim?: { wrongKey?: true; fault?: [SimulatorRoute, Fault] };
  /** Successes: compare the whole body ("exact") or its structure ("skeleton", the default). */
  compare?: "exact" | "skeleton";
}

const EXAMPLE_ENTITY = "5a9d1e7f-0b6c-4d3a-8f8e-2c7b6d5e4f66";

const scenarios: ContractScenario[] = [
  // Every recorded "unable to validate api key", for the client call it answered.
  ...loadRecordedAnswers()
    .filter((a) => a.name.endsWith("-api-key"))
    .flatMap((a) => a.scenarios.map((s, i) => ({ name: `${a.name} #${i + 1}`, recorded: a.name, call: s.call, sim: { wrongKey: true as const } }))),
  { name: "GetEntity with an id that is not a UUID", recorded: "get-entity-invalid-uuid", call: { op: "getEntity", entityId: "31569955-0001" } },
  ...(["transmit", "sign"] as const).map((op) => ({
    name: `the router's 404 on ${op}`,
    recorded: "no-route-post-payment",
    call: op === "transmit" ? ({ op, irn: "INV001-94ND90NR-20240611" } as const) : ({ op } as const),
    sim: { fault: [op, { kind: "no_route" }] as [SimulatorRoute, Fault] },
  })),
  {
    name: "the router's 404 on the entity read",
    recorded: "no-route-post-payment",
    call: { op: "getEntity", entityId: DEMO.entityId },
    sim: { fault: ["entity", { kind: "no_route" }] },
  },
  {
    name: "a resource list the regulator does not serve",
    recorded: "no-route-post-payment",
    call: { op: "relay", method: "GET", path: "/api/v1/invoice/resources/states" },
  },
  { name: "taxpayer login", recorded: "authenticate-200-sample", call: { op: "authenticate" } },
  {
    name: "entity with the example-text IRN template",
    recorded: "get-entity-sandbox-business",
    call: { op: "getEntity", entityId: "6cd4ee57-5985-4eb6-8313-7a1b64c5beda" },
    simCall: { op: "getEntity", entityId: EXAMPLE_ENTITY },
  },
  {
    name: "verify TIN",
    recorded: "verify-tin-200-sample",
    call: { op: "relay", method: "POST", path: "/api/v1/utilities/verify-tin/", body: { tin: "20198222-0002" } },
    simCall: { op: "relay", method: "POST", path: "/api/v1/utilities/verify-tin/", body: { tin: DEMO.tin } },
  },
  ...["invoice-types", "currencies"].map((name) => ({
    name: `resources ${name} (complete list)`,
    recorded: `resources-${name}`,
    call: { op: "relay", method: "GET", path: `/api/v1/invoice/resources/${name}` } as ScenarioCall,
    compare: "exact" as const,
  })),
  ...["countries", "vat-exemptions", "services-codes"].map((name) => ({
    name: `resources ${name} (same fields)`,
    recorded: `resources-${name}`,
    call: { op: "relay", method: "GET", path: `/api/v1/invoice/resources/${name}` } as ScenarioCall,
  })),
];

const test = suite("contract: simulator and recorded answers end the same way");
let sim: RegulatorSimulator;
let replay: ReplayServer;

test.before(async () => {
  sim = await startDemoSimulator();
  replay = await startReplayServer();
});
test.after(async () => {
  await sim.close();
  await replay.close();
});

async function runOn(url: string, c: ScenarioCall, wrongKey = false): Promise<Side> {
  const h: ClientHarness = makeClient({ TEST: url }, wrongKey ? { apiKey: "not-the-deployment-key" } : {});
  try {
    const outcome = await runCall(h, c);
    return { outcome, signals: h.events("regulator_credentials_rejected").length };
  } finally {
    await h.close();
  }
}

/** Successes compared by structure (or exactly); failures by every field the spec decides on. */
function comparable(side: Side, compare: "exact" | "skeleton"): unknown {
  const o = side.outcome;
  if (o.kind === "response") return { kind: o.kind, status: o.status, body: compare === "exact" ? JSON.parse(o.body) : skeleton(JSON.parse(o.body)) };
  if (o.kind === "value") return { kind: o.kind, value: skeleton(o.value) };
  return { ...o, signals: side.signals };
}

for (const s of scenarios) {
  test(s.name, async () => {
    const answer: RecordedAnswer = recordedAnswer(s.recorded);
    replay.serve(answer);
    const recorded = await runOn(replay.url, s.call);
    sim.reset();
    if (s.sim?.fault) sim.faults.set(s.sim.fault[0], { ...s.sim.fault[1], times: 1 });
    const simulated = await runOn(sim.url, s.simCall ?? s.call, s.sim?.wrongKey === true);
    const compare = s.compare ?? "skeleton";
    assert.equal(comparable(simulated, compare), comparable(recorded, compare));
  });
}

test("health: GET /api answers the recorded body byte for byte", async () => {
  const answer = recordedAnswer("health");
  const r = await call(sim, "GET", "/api", { noAuth: true });
  assert.is(r.status, answer.response.status);
  assert.is(r.text, recordedBodyText(answer));
  assert.is(r.headers.get("content-length"), answer.response.headers["content-length"]);
  assert.is(r.headers.get("cache-control"), answer.response.headers["cache-control"]);
});

test("a deployment key refusal is the recorded envelope byte for byte but for its UUID", async () => {
  const answer = recordedAnswer("sign-api-key");
  const r = await call(sim, "POST", "/api/v1/invoice/sign", { noAuth: true, body: {} });
  const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/;
  assert.is(r.status, answer.response.status);
  assert.is(r.text.replace(uuid, "<id>"), recordedBodyText(answer).replace(uuid, "<id>"));
});

test.run();
