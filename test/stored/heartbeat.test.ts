/**
 * The Stored processor's heartbeat (`stored_processor_heartbeats`, shown in /health/dependencies):
 * a processor stopped while a beat is being written leaves no heartbeat behind. The beat's write is
 * made slow (answered LATE_MS later, test/support/store-faults.ts); stop() must wait for it before
 * it removes the heartbeat, or the beat lands after the removal and a stopped processor looks alive
 * (seen once in the two-process race test on the MongoDB-wire server under load).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createProcessorFor } from "../../plugins/stored-processing/plugin.ts";
import type { HeartbeatDoc } from "../../plugins/stored-processing/store.ts";
import { LATE_MS } from "../support/store-faults.ts";
import { startStoredHarness } from "./stored-helpers.ts";

let slow = false;
let slowBeatStarted = false;
const h = await startStoredHarness({
  processor: false,
  storeFault: (collection, method) => {
    if (!slow || collection !== "stored_processor_heartbeats" || method !== "findOneAndUpdate") return null;
    slowBeatStarted = true;
    return "slow";
  },
});

test("a processor stopped while its heartbeat is being written leaves no heartbeat behind", async () => {
  const processor = createProcessorFor(h.tg.gateway.kit, { owner: "heartbeat-test-owner" });
  const beats = h.store.collection<HeartbeatDoc>("stored_processor_heartbeats");
  try {
    await processor.start();
    assert.ok(await beats.get(processor.owner), "the running processor beats");
    slow = true;
    for (let i = 0; i < 200 && !slowBeatStarted; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok(slowBeatStarted, "a beat is being written");
    await processor.stop();
    // Anything still on its way would land within LATE_MS.
    await new Promise((r) => setTimeout(r, LATE_MS + 200));
    assert.is(await beats.get(processor.owner), null, "no heartbeat of the stopped processor");
  } finally {
    slow = false;
    await processor.stop();
  }
});

test.after(() => h.close());
test.run();
