/**
 * The Stored invoice processor (spec §3.2, §3.4; DECISIONS.md "Stored mode"; ARCHITECTURE.md §6–§7).
 *
 * Any number of processors, in any number of processes, share the work through the document store:
 * each claims due invoices (`dueAt ≤ now`) with a lease (DocumentStore.claim), works on them with
 * p-queue concurrency (one pass per invoice, pass.ts), and writes every change as a compare-and-set
 * on the invoice's `rev` while it still holds the lease (writes.ts). A processor that dies leaves its
 * lease to expire; the next one picks the invoice up where the record says it is.
 *
 * Backoff: dependency outages back off per invoice (base × 2^(n−1), jittered, capped) and pause the
 * processor's claims the same way while they last; business refusals back off by budget spent.
 * Stop (SIGTERM): no new claims; each running pass finishes its current step, then hands its
 * invoice back (lease released, due at once) or completes it.
 */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import PQueue from "p-queue";
import type { Lease } from "../../../adapters/ports.ts";
import { describeError } from "../../../core/log.ts";
import type { InvoiceDoc } from "../../invoice/stored-invoices.ts";
import { createHeartbeat } from "./heartbeat.ts";
import { runPass } from "./pass.ts";
import type { ProcessorOptions, ProcessorRuntime, StoredProcessor } from "./types.ts";
import { backoff } from "./writes.ts";

const SORT = [{ field: "dueAt", direction: 1 as const }];
/** The longest claim pause of an outage streak (a dependency that is back is noticed within it). */
const MAX_PAUSE_MS = 10_000;

export function createStoredProcessor(o: ProcessorOptions): StoredProcessor {
  const owner = o.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const queue = new PQueue({ concurrency: o.concurrency });
  const s = { running: false, stopping: false, lastTickAt: Date.now(), processed: 0, outageStreak: 0, pauseUntil: 0 };
  const rt: ProcessorRuntime = { o, owner, invoices: o.store.invoices, stopping: () => s.stopping };
  const heartbeat = createHeartbeat(o, owner, { lastTickAt: () => s.lastTickAt, inFlight: () => queue.pending, processed: () => s.processed, stopping: () => s.stopping });
  const sleeper = _createSleeper();
  let loop: Promise<void> | null = null;
  let beats: NodeJS.Timeout | null = null;

  /**
   * While dependency outages last, the processor pauses its claims (backoff of the streak, at most
   * MAX_PAUSE_MS): invoices wait out their own backoff anyway, and a long outage costs no churn.
   */
  function passEnded(outage: boolean): void {
    if (!outage) {
      s.outageStreak = 0;
      s.pauseUntil = 0;
      return;
    }
    s.outageStreak++;
    s.pauseUntil = Date.now() + Math.min(MAX_PAUSE_MS, backoff(o, s.outageStreak));
  }

  async function pass(doc: InvoiceDoc & { lease: Lease }): Promise<void> {
    let outage = true;
    try {
      outage = await runPass(rt, doc);
    } finally {
      s.processed++;
      passEnded(outage);
    }
  }

  async function claimLoop(): Promise<void> {
    while (s.running) {
      s.lastTickAt = Date.now();
      if (queue.pending + queue.size >= o.concurrency) {
        await new Promise((resolve) => queue.once("next", resolve));
        continue;
      }
      const pause = s.pauseUntil - Date.now();
      if (pause > 0) {
        await sleeper.sleep(pause); // a wake during the pause only re-checks it
        continue;
      }
      let doc: (InvoiceDoc & { lease: Lease }) | null;
      try {
        doc = await rt.invoices.claim({ dueAt: { $lte: Date.now() } }, owner, o.leaseMs, SORT);
      } catch (e) {
        o.log.warn("stored_processor_claim_failed", { error: describeError(e) });
        passEnded(true);
        continue;
      }
      if (!doc) {
        await sleeper.sleep(o.pollMs);
        continue;
      }
      const claimed = doc;
      void queue.add(() => pass(claimed));
    }
  }

  return {
    name: "stored-processor",
    owner,
    wake() {
      sleeper.wake();
    },
    async start() {
      if (s.running) return;
      s.running = true;
      s.stopping = false;
      o.log.event("stored_processor_started", { owner, concurrency: o.concurrency });
      await heartbeat.beat();
      beats = setInterval(() => void heartbeat.beat(), o.heartbeatMs);
      beats.unref();
      loop = claimLoop();
    },
    async stop() {
      if (!s.running) return;
      s.running = false;
      s.stopping = true;
      sleeper.wake();
      if (beats) clearInterval(beats);
      beats = null;
      // The loop ends at its next turn (a sleeping loop was woken; a saturated one waits for a pass).
      await loop;
      await queue.onIdle();
      await heartbeat.remove();
      o.log.event("stored_processor_stopped", { owner, processed: s.processed });
    },
  };
}

// --- Internal helpers ---

/** Sleeps that a wake (new work, or stop) cuts short. */
function _createSleeper(): { sleep(ms: number): Promise<void>; wake(): void } {
  let wakeUp: (() => void) | null = null;
  return {
    sleep(ms) {
      return new Promise((resolve) => {
        const timer = setTimeout(done, ms);
        function done() {
          clearTimeout(timer);
          if (wakeUp === done) wakeUp = null;
          resolve();
        }
        wakeUp = done;
      });
    },
    wake() {
      wakeUp?.();
    },
  };
}
