import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync } from "node:fs";
import { STAGES } from "../../pipeline/stages.ts";
import { STAGE_NAMES } from "../../core/stages/names.ts";
import { PASSTHROUGH, DEMO_KEY, startTestGateway } from "../support/gateway.ts";
import { probePlugin } from "../support/probe-plugin.ts";
import { defineStage, type Stage } from "../../core/stages/define.ts";

test("the pipeline order is exactly the architecture's (ARCHITECTURE.md §2, spec §8)", () => {
  assert.equal(
    STAGES.map((s) => s.name),
    ["canonical-host", "route", "protocol", "routing-loop", "admission", "capacity-guard", "auth", "ip-allowlist", "quota", "mode"],
  );
  assert.equal([...STAGE_NAMES], STAGES.map((s) => s.name));
});

test("stage names are unique and each stage lives in its own file named after it", () => {
  const names = STAGES.map((s) => s.name);
  assert.is(new Set(names).size, names.length);
  const files = new Set(readdirSync(new URL("../../pipeline/", import.meta.url)));
  for (const n of names) assert.ok(files.has(`${n}.ts`), `pipeline/${n}.ts`);
});

/** Runs `body` with every stage wrapped so it records its name when it runs. */
async function observingStages(body: (seen: string[]) => Promise<void>): Promise<void> {
  const seen: string[] = [];
  const stages = STAGES as Stage[];
  const original = stages.map((s) => s.create);
  stages.forEach((s, i) => {
    const create = original[i]!;
    (s as { create: Stage["create"] }).create = (deps) => {
      const fn = create(deps);
      return (ctx) => {
        seen.push(s.name);
        return fn(ctx);
      };
    };
  });
  try {
    await body(seen);
  } finally {
    stages.forEach((s, i) => ((s as { create: Stage["create"] }).create = original[i]!));
  }
}

test("a compiled gateway runs the stages in that order on a request (observed, not declared)", () =>
  observingStages(async (seen) => {
    const tg = await startTestGateway({ plugins: [probePlugin] });
    const res = await tg.call("/probe/echo", { host: PASSTHROUGH, headers: { "x-api-key": DEMO_KEY } });
    assert.is(res.status, 200);
    assert.equal(seen, [...STAGE_NAMES]);
    await tg.close();
  }));

test("a failing stage stops the request: later stages never run", () =>
  observingStages(async (seen) => {
    const tg = await startTestGateway({ plugins: [probePlugin] });
    const res = await tg.call("/probe/echo", { host: PASSTHROUGH }); // no key: auth fails
    assert.is(res.status, 401);
    assert.equal(seen, ["canonical-host", "route", "protocol", "routing-loop", "admission", "capacity-guard", "auth"]);
    await tg.close();
  }));

test("defineStage returns the declaration unchanged (a stage is data + a factory)", () => {
  const s = defineStage({ name: "mode", create: () => () => {} });
  assert.is(s.name, "mode");
});

test.run();
