import { writeFileSync } from "node:fs";
import { tempDir } from "../../../support/temp.ts";
import { join } from "node:path";
import { suite } from "uvu";
import * as assert from "uvu/assert";
import {
  isSimulatorFixturesError,
  loadFixtures,
  parseFixtures,
  SimulatorFixturesError,
} from "../../../../adapters/regulator/simulator/fixtures.ts";
import { startRegulatorSimulator } from "../../../../adapters/regulator/simulator/server.ts";
import { CREDENTIALS, DEMO_FIXTURES_PATH, TEST_FIXTURES_PATH } from "./simulator-helpers.ts";

const test = suite("simulator fixtures");

function _problems(fn: () => unknown): string[] {
  try {
    fn();
  } catch (e) {
    assert.ok(isSimulatorFixturesError(e), `expected a SimulatorFixturesError, got ${String(e)}`);
    return (e as SimulatorFixturesError).problems;
  }
  assert.unreachable("expected the fixtures to be rejected");
  return [];
}

test("the demo fixtures hold the six demo taxpayers exactly (README.md), in the real entity shape", () => {
  const f = loadFixtures(DEMO_FIXTURES_PATH);
  const byEmail = new Map(f.taxpayers.map((t) => [t.email, t]));
  const entity = (email: string) => f.entities.find((e) => e.id === byEmail.get(email)!.entity_id)!;

  assert.is(byEmail.get("taxpayer@demo.ng")!.password, "demo-password-1");
  const solo = entity("taxpayer@demo.ng");
  assert.is(solo.is_active, true);
  assert.is(solo.businesses.length, 1);
  assert.is(solo.businesses[0]!.tin, "12345678-0001");
  assert.is(solo.businesses[0]!.irn_template, "{{invoice_id}}-94ND90NR-{{YYYYMMDD}}");
  assert.is(solo.businesses[0]!.is_active, true);

  assert.is(byEmail.get("multi@demo.ng")!.password, "demo-password-2");
  const multi = entity("multi@demo.ng");
  assert.equal(
    multi.businesses.map((b) => [b.tin, b.irn_template, b.is_active]),
    [
      ["22222222-0001", "{{invoice_id}}-5A7B9C1D-{{YYYYMMDD}}", true],
      ["22222222-0002", "{{invoice_id}}-6B8C0D2E-{{YYYYMMDD}}", true],
    ],
  );

  assert.is(byEmail.get("inactive@demo.ng")!.password, "demo-password-3");
  assert.is(entity("inactive@demo.ng").is_active, false);

  assert.is(byEmail.get("notemplate@demo.ng")!.password, "demo-password-4");
  const noTemplate = entity("notemplate@demo.ng");
  assert.is(noTemplate.is_active, true);
  assert.is(noTemplate.businesses[0]!.is_active, true);
  assert.is(noTemplate.businesses[0]!.irn_template ?? null, null);

  assert.is(byEmail.get("example-template@demo.ng")!.password, "demo-password-6");
  const example = entity("example-template@demo.ng");
  assert.is(example.businesses[0]!.tin, "66666666-0001");
  assert.is(example.businesses[0]!.irn_template, "{{invoice_id(e.g:INV00XXX)}}-3F7A2C1E-{{YYYYMMDD(e.g:20250629)}}");

  assert.is(f.taxpayers.length, 6);
  // Every demo business can transmit: its webhook URL is set up at the (simulated) regulator.
  for (const e of f.entities) for (const b of e.businesses) assert.type(b.webhook_url, "string", b.id);

  assert.is(byEmail.get("unlinked@demo.ng")!.password, "demo-password-5");
  assert.is(byEmail.get("unlinked@demo.ng")!.app_linked, false);
  for (const t of f.taxpayers) {
    if (t.email !== "unlinked@demo.ng") assert.is.not(t.app_linked, false, t.email);
  }
  for (const e of f.entities) {
    assert.match(e.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    for (const b of e.businesses) assert.match(b.id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  }
});

test("the test fixtures load (missing template, several businesses, inactive, long and malformed metadata)", () => {
  const f = loadFixtures(TEST_FIXTURES_PATH);
  assert.ok(f.entities.some((e) => e.businesses.some((b) => !("irn_template" in b))));
  assert.ok(f.entities.some((e) => e.businesses.length >= 3 && e.businesses.some((b) => !b.is_active)));
  assert.ok(f.entities.some((e) => e.reference.length > 255));
  assert.ok(f.entities.some((e) => e.businesses.some((b) => b.overrides !== undefined)));
  assert.ok(f.taxpayers.some((t) => t.allow_missing_entity === true));
});

test("invalid fixtures list every problem with a JSON pointer", () => {
  const problems = _problems(() =>
    parseFixtures({
      version: 2,
      taxpayers: [{ email: "not-an-email", password: "", entity_id: "e1" }],
      entities: [
        {
          id: "e1",
          reference: "R",
          is_active: "yes",
          businesses: [{ id: "b1", name: "B", tin: "T", is_active: true, webhook_url: "not a url", service_id: "ABCD1234" }],
        },
      ],
    }),
  );
  const text = problems.join("\n");
  assert.ok(problems.length >= 6, text);
  assert.match(text, "/version: must be 1");
  assert.match(text, "/taxpayers/0/email: must be an email address");
  assert.match(text, "/taxpayers/0/password: must not be empty");
  assert.match(text, "/entities/0/is_active: must be true or false");
  assert.match(text, "/entities/0/businesses/0/webhook_url: must be a URL");
  // The real entity has no service_id (it lives in irn_template): the key is unknown.
  assert.match(text, "/entities/0/businesses/0/service_id");
});

test("cross-checks: duplicates and unknown entity ids", () => {
  const business = (id: string) => ({ id, name: "B", tin: "T-1", is_active: true });
  const problems = _problems(() =>
    parseFixtures({
      version: 1,
      taxpayers: [
        { email: "a@x.ng", password: "p", entity_id: "e1" },
        { email: "A@x.ng", password: "p", entity_id: "e1" },
        { email: "b@x.ng", password: "p", entity_id: "nope" },
        { email: "c@x.ng", password: "p", entity_id: "ghost", allow_missing_entity: true },
      ],
      entities: [
        { id: "e1", reference: "R1", is_active: true, businesses: [business("b1")] },
        { id: "e1", reference: "R2", is_active: true, businesses: [business("b1")] },
      ],
    }),
  );
  const text = problems.join("\n");
  assert.is(problems.length, 4, text);
  assert.match(text, '/entities/1/id: duplicate entity id "e1"');
  assert.match(text, '/entities/1/businesses/0/id: duplicate business id "b1"');
  assert.match(text, '/taxpayers/1/email: duplicate email "A@x.ng"');
  assert.match(text, '/taxpayers/2/entity_id: no entity has id "nope"');
});

test("a missing file and invalid JSON give clear errors naming the file", () => {
  const dir = tempDir("sim-fixtures");
  const missing = join(dir, "missing.json");
  try {
    loadFixtures(missing);
    assert.unreachable();
  } catch (e) {
    assert.ok(isSimulatorFixturesError(e));
    assert.match((e as Error).message, missing);
    assert.match((e as Error).message, "cannot read the file");
  }
  const bad = join(dir, "bad.json");
  writeFileSync(bad, "{ not json");
  try {
    loadFixtures(bad);
    assert.unreachable();
  } catch (e) {
    assert.ok(isSimulatorFixturesError(e));
    assert.match((e as Error).message, "not valid JSON");
  }
});

test("startRegulatorSimulator validates programmatic fixtures", async () => {
  try {
    await startRegulatorSimulator({
      fixtures: { version: 1, taxpayers: [{ email: "a@x.ng", password: "p", entity_id: "none" }], entities: [] },
      credentials: CREDENTIALS,
    });
    assert.unreachable();
  } catch (e) {
    assert.ok(isSimulatorFixturesError(e));
    assert.match((e as Error).message, "/taxpayers/0/entity_id");
  }
});

test.run();
