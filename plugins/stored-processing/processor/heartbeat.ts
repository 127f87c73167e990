/**
 * A processor's heartbeat (/health/dependencies reads every processor's): one document per running
 * processor, its last loop turn, passes in flight and done, with a TTL so a dead processor's beat
 * disappears.
 */
import { hostname } from "node:os";
import { describeError } from "../../../core/log.ts";
import type { ProcessorOptions } from "./types.ts";

/** What the beat reports, read at each beat. */
export interface HeartbeatFacts {
  lastTickAt(): number;
  inFlight(): number;
  processed(): number;
  stopping(): boolean;
}

export interface Heartbeat {
  /** Writes one beat now. */
  beat(): Promise<unknown>;
  /** Waits for the beat in flight, then removes the heartbeat (stop). */
  remove(): Promise<void>;
}

export function createHeartbeat(o: ProcessorOptions, owner: string, facts: HeartbeatFacts): Heartbeat {
  const startedAt = new Date().toISOString();
  /** The heartbeat write in flight: remove() waits for it, so that no beat lands after the heartbeat is removed. */
  let lastBeat: Promise<unknown> = Promise.resolve();
  return {
    beat() {
      lastBeat = _beat(o, owner, startedAt, facts);
      return lastBeat;
    },
    async remove() {
      await lastBeat;
      await o.store.heartbeats.delete(owner).catch(() => false);
    },
  };
}

// --- Internal helpers ---

/**
 * Updates this processor's heartbeat; creates it only when the update finds none (the first beat,
 * or one expired during a long store outage) and the processor is not stopping. A beat whose write
 * lands late (after its deadline, after stop() removed the heartbeat) is an update: it finds
 * nothing and recreates nothing.
 */
function _beat(o: ProcessorOptions, owner: string, startedAt: string, facts: HeartbeatFacts): Promise<unknown> {
  const now = Date.now();
  const update = {
    $set: {
      host: hostname(),
      pid: process.pid,
      startedAt,
      lastTickAt: facts.lastTickAt(),
      inFlight: facts.inFlight(),
      processed: facts.processed(),
      concurrency: o.concurrency,
      expiresAtMs: now + Math.max(60_000, 10 * o.heartbeatMs),
    },
  };
  const heartbeats = o.store.heartbeats;
  return heartbeats
    .updateOne({ _id: owner }, update)
    .then((found): unknown => (found || facts.stopping() ? found : heartbeats.findOneAndUpdate({ _id: owner }, update, { upsert: true })))
    .catch((e) => o.log.warn("stored_processor_heartbeat_failed", { error: describeError(e) }));
}
