/**
 * The Stored processor's heartbeat (`stored_processor_heartbeats`, shown in /health/dependencies):
 * a processor stopped while a beat is being written leaves no heartbeat behind, whether the beat's
 * write is slow (answered LATE_MS later: stop() waits for it) or fails at its deadline and lands
 * later (a beat only updates; it creates the heartbeat only when it finds none and the processor is
 * not stopping), else a stopped processor looks alive (seen once in the two-process race test on
 * the MongoDB-wire server under load). A heartbeat that expired while the processor runs comes back.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createProcessorFor } from "../../../plugins/stored-processing/plugin.ts";
import type { HeartbeatDoc } from "../../../plugins/stored-processing/store.ts";
import { LATE_MS } from "../../support/store-faults.ts";
import { startStoredHarness } from "./stored-helpers.ts";

/** How the next heartbeat writes answer: normally, slowly (answered LATE_MS later), or late (failed at once, performed LATE_MS later). */
let beats: "normal" | "slow" | "late" = "normal";
let faultedBeatStarted = false;
const h = await startStoredHarness({
  processor: false,
  storeFault: (collection, method) => {
    if (beats === "normal" || collection !== "stored_processor_heartbeats" || method === "get" || method === "delete") return null;
    faultedBeatStarted = true;
    return beats;
  },
});

for (const fault of ["slow", "late"] as const) {
  test(`a processor stopped while its heartbeat is being written (${fault === "slow" ? "a slow answer" : "failed at its deadline, landing later"}) leaves no heartbeat behind`, async () => {
    const processor = createProcessorFor(h.tg.gateway.kit, { owner: `heartbeat-test-${fault}` });
    const heartbeats = h.store.collection<HeartbeatDoc>("stored_processor_heartbeats");
    try {
      await processor.start();
      assert.ok(await heartbeats.get(processor.owner), "the running processor beats");
      faultedBeatStarted = false;
      beats = fault;
      for (let i = 0; i < 200 && !faultedBeatStarted; i++) await new Promise((r) => setTimeout(r, 10));
      assert.ok(faultedBeatStarted, "a beat is being written");
      await processor.stop();
      // Anything still on its way lands within LATE_MS.
      await new Promise((r) => setTimeout(r, LATE_MS + 200));
      assert.is(await heartbeats.get(processor.owner), null, "no heartbeat of the stopped processor");
    } finally {
      beats = "normal";
      await processor.stop();
    }
  });
}

test("a heartbeat that expired while the processor runs (a long store outage) is created again by the next beat", async () => {
  const processor = createProcessorFor(h.tg.gateway.kit, { owner: "heartbeat-test-expired" });
  const heartbeats = h.store.collection<HeartbeatDoc>("stored_processor_heartbeats");
  try {
    await processor.start();
    assert.ok(await heartbeats.delete(processor.owner), "gone, as after its TTL");
    for (let i = 0; i < 100 && !(await heartbeats.get(processor.owner)); i++) await new Promise((r) => setTimeout(r, 20));
    assert.ok(await heartbeats.get(processor.owner), "the next beat created it again");
  } finally {
    await processor.stop();
  }
});

test.after(() => h.close());
test.run();
