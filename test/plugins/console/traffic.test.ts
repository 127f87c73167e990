/**
 * The overview's in-memory history (plugins/console/traffic.ts): signs per minute from the wallet's
 * debit and reversal counters, the Stored backlog read once a minute (a failed read leaves a gap),
 * and the charts drawn from them with a text summary.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createGatewayMetrics } from "../../../core/metrics.ts";
import { barChart } from "../../../core/ui/index.ts";
import { HISTORY_MINUTES, createTrafficHistory } from "../../../plugins/console/traffic.ts";

test("signs and reversals per minute; the backlog once a minute, a failed read a gap", async () => {
  const metrics = createGatewayMetrics({ defaultMetrics: false });
  let t = Date.parse("2026-11-28T22:00:10.000Z");
  let reads = 0;
  let down = false;
  const history = createTrafficHistory(metrics, () => t, 1_000, async () => {
    reads++;
    if (down) throw new Error("store down");
    return { waiting: 40 + reads, frozen: 2 };
  });
  // A worker tick (start samples at once; stop first so only one timer runs).
  const tick = async () => {
    await history.worker.stop();
    await history.worker.start();
  };
  await tick();
  try {
    const debit = metrics.walletMovements.series("debit");
    debit.inc(3);
    metrics.walletMovements.series("reversal").inc(1);
    t += 60_000;
    await history.sample();
    await tick(); // more ticks in the same minute: the backlog is read once per minute
    await tick();
    down = true;
    t += 60_000;
    debit.inc(5);
    await tick();
    const m = history.minutes();
    assert.is(m.length, HISTORY_MINUTES);
    const [a, b, c] = m.slice(-3);
    assert.equal([a!.signs, a!.reversals, a!.backlog, a!.frozen], [0, 0, 41, 2]);
    assert.equal([b!.signs, b!.reversals, b!.backlog], [3, 1, 42]);
    assert.equal([c!.signs, c!.backlog], [5, null], "the store did not answer: no reading, no zero");
    assert.is(reads, 3);
  } finally {
    await history.worker.stop();
  }
});

test("barChart: a level series carries its own summary instead of a total", () => {
  const svg = barChart({ title: "Stored backlog", values: [3, 5, 4], summary: "Stored backlog: 4 with work due now (peak 5)." }).toString();
  assert.match(svg, /aria-label="Stored backlog: 4 with work due now \(peak 5\)\."/);
  assert.not.match(svg, /in total/);
});

test.run();
