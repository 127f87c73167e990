/**
 * The SQLite engine's goal lines (bench/engine-goals.ts) judged from rows: the durability line
 * compares CPU per sign of the file against SQLite in memory, each leg divided by its own
 * simulator's CPU per sign, and is left out when either leg is missing.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { evaluateEngineGoals } from "../../bench/engine-goals.ts";
import type { ScenarioResult } from "../../bench/run.ts";

function signRow(store: "sqlite" | "memory", signsPerSec: number, gatewayCpuUs: number, simulatorCpuUs: number): ScenarioResult {
  return {
    name: `sign-${store}/gateway`,
    scenario: `sign-${store}`,
    server: "gateway",
    role: "subject",
    description: "billed signs",
    path: "/api/v1/invoice/sign",
    requestsPerSec: signsPerSec,
    latency: { mean: 60, p50: 60, p90: 80, p99: 100, max: 120 },
    requests: 1000,
    status2xx: 1000,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    seconds: 1,
    cpuUsPerRequest: gatewayCpuUs,
    extra: { simulatorCpuUs },
  };
}

const durabilityOf = (rows: ScenarioResult[]) => evaluateEngineGoals(rows).find((g) => g.name.startsWith("durability"));

test("durability: the file's CPU per sign within 1.1× the in-memory store's, each leg over its simulator's", () => {
  // 990 / 110 = 9.0 against 1 000 / 100 = 10.0: 0.90×, met, although the raw figures are 0.99×.
  const met = durabilityOf([signRow("sqlite", 900, 990, 110), signRow("memory", 950, 1_000, 100)]);
  assert.ok(met);
  assert.is(met!.met, true);
  assert.match(met!.measured, /^0\.90×/);
  // 1 300 / 100 = 13.0 against 1 000 / 100: 1.30×, not met.
  const missed = durabilityOf([signRow("sqlite", 700, 1_300, 100), signRow("memory", 950, 1_000, 100)]);
  assert.is(missed!.met, false);
  assert.match(missed!.measured, /^1\.30×/);
});

test("durability: left out when the in-memory leg did not run or a leg has no CPU figure", () => {
  assert.is(durabilityOf([signRow("sqlite", 900, 990, 110)]), undefined);
  const noCpu = { ...signRow("memory", 950, 1_000, 100), cpuUsPerRequest: undefined };
  assert.is(durabilityOf([signRow("sqlite", 900, 990, 110), noCpu]), undefined);
  // A leg whose simulator reported no CPU has no yardstick: no line (never a ratio of 0 called met).
  assert.is(durabilityOf([signRow("sqlite", 900, 990, 110), signRow("memory", 950, 1_000, 0)]), undefined);
  assert.is(durabilityOf([signRow("sqlite", 900, 990, 0), signRow("memory", 950, 1_000, 100)]), undefined);
  // The absolute sign goal is still judged on its own line.
  assert.is(evaluateEngineGoals([signRow("sqlite", 900, 990, 110)])[0]!.met, false);
});

test.run();
