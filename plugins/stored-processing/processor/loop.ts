/**
 * The Stored invoice processor (spec §3.2, §3.4; DECISIONS.md "Stored mode"; ARCHITECTURE.md §6–§7).
 *
 * Any number of processors, in any number of processes, share the work through the document store:
 * each claims due invoices (`dueAt ≤ now`) with a lease each (DocumentStore.claim; on SQLite
 * several per claim round), works on them with p-queue concurrency (one pass per invoice, pass.ts),
 * and writes every change as a compare-and-set on the invoice's `rev` while it still holds the
 * lease (writes.ts). A processor that dies leaves its lease to expire; the next one picks the
 * invoice up where the record says it is.
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
import { createHeartbeat, type Heartbeat } from "./heartbeat.ts";
import { runPass } from "./pass.ts";
import type { ProcessorOptions, ProcessorRuntime, StoredProcessor } from "./types.ts";
import { backoff } from "./writes.ts";

const SORT = [{ field: "dueAt", direction: 1 as const }];
/** The longest claim pause of an outage streak (a dependency that is back is noticed within it). */
const MAX_PAUSE_MS = 10_000;

export function createStoredProcessor(o: ProcessorOptions): StoredProcessor {
  const l = _newLoop(o);
  let loop: Promise<void> | null = null;
  let beats: NodeJS.Timeout | null = null;
  return {
    name: "stored-processor",
    owner: l.rt.owner,
    wake() {
      l.sleeper.wake();
    },
    async start() {
      if (l.running) return;
      l.running = true;
      l.stopping = false;
      o.log.event("stored_processor_started", { owner: l.rt.owner, concurrency: o.concurrency });
      await l.heartbeat.beat();
      beats = setInterval(() => void l.heartbeat.beat(), o.heartbeatMs);
      beats.unref();
      loop = _claimLoop(l);
    },
    async stop() {
      if (!l.running) return;
      l.running = false;
      l.stopping = true;
      l.sleeper.wake();
      if (beats) clearInterval(beats);
      beats = null;
      // The loop ends at its next turn (a sleeping loop was woken; a saturated one waits for a pass).
      await loop;
      await l.queue.onIdle();
      await l.heartbeat.remove();
      o.log.event("stored_processor_stopped", { owner: l.rt.owner, processed: l.processed });
    },
  };
}

// --- Internal helpers ---

/** A processor's state: its queue of passes, its run flags, and the outage streak that pauses its claims. */
interface Loop {
  readonly rt: ProcessorRuntime;
  readonly queue: PQueue;
  readonly heartbeat: Heartbeat;
  readonly sleeper: Sleeper;
  running: boolean;
  stopping: boolean;
  lastTickAt: number;
  processed: number;
  /** Consecutive passes that met a dependency outage, and the claim pause they cause. */
  outageStreak: number;
  pauseUntil: number;
  /** Claims the next round asks for at most (grows while rounds come back full; see _nextRoundSize). */
  roundSize: number;
}

function _newLoop(o: ProcessorOptions): Loop {
  const owner = o.owner ?? `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;
  const queue = new PQueue({ concurrency: o.concurrency });
  const l: Loop = {
    rt: { o, owner, invoices: o.store.invoices, stopping: () => l.stopping },
    queue,
    heartbeat: createHeartbeat(o, owner, { lastTickAt: () => l.lastTickAt, inFlight: () => queue.pending, processed: () => l.processed, stopping: () => l.stopping }),
    sleeper: _createSleeper(),
    running: false,
    stopping: false,
    lastTickAt: Date.now(),
    processed: 0,
    outageStreak: 0,
    pauseUntil: 0,
    roundSize: 1,
  };
  return l;
}

async function _claimLoop(l: Loop): Promise<void> {
  const { o } = l.rt;
  while (l.running) {
    l.lastTickAt = Date.now();
    const free = o.concurrency - (l.queue.pending + l.queue.size);
    if (free <= 0) {
      await new Promise((resolve) => l.queue.once("next", resolve));
      continue;
    }
    const pause = l.pauseUntil - Date.now();
    if (pause > 0) {
      await l.sleeper.sleep(pause); // a wake during the pause only re-checks it
      continue;
    }
    const asked = Math.min(free, o.claimsPerRound ?? 1, l.roundSize);
    const claimed = await _claimRound(l, asked);
    if (claimed === null) continue; // the store failed: the pause above applies
    l.roundSize = _nextRoundSize(l.roundSize, asked, claimed.length, o.concurrency);
    for (const doc of claimed) void l.queue.add(() => _pass(l, doc));
    if (claimed.length === 0) await l.sleeper.sleep(o.pollMs);
  }
}

/**
 * One claim round: up to `n` due invoices, oldest first, each with its own lease. The claims are
 * asked for in one turn, so a store that groups writes takes them together (the SQLite writer in
 * one transaction, one commit for the round); each claim is still the port's atomic claim of one
 * document, so the claims of several processes stay exclusive. Null when the store failed (the
 * claims that did land are worked on; a claim whose answer was lost leaves a lease that expires).
 */
async function _claimRound(l: Loop, n: number): Promise<Array<InvoiceDoc & { lease: Lease }> | null> {
  const { o, owner, invoices } = l.rt;
  const now = Date.now();
  const results = await Promise.allSettled(Array.from({ length: n }, () => invoices.claim({ dueAt: { $lte: now } }, owner, o.leaseMs, SORT)));
  const claimed: Array<InvoiceDoc & { lease: Lease }> = [];
  let failure: unknown = null;
  for (const r of results) {
    if (r.status === "rejected") failure ??= r.reason;
    else if (r.value) claimed.push(r.value);
  }
  if (failure === null) return claimed;
  o.log.warn("stored_processor_claim_failed", { error: describeError(failure) });
  _passEnded(l, true);
  for (const doc of claimed) void l.queue.add(() => _pass(l, doc));
  return null;
}

/**
 * A round that came back full may ask for twice as many next time (at most `concurrency`); one that
 * did not asks for what it got (at least one). A backlog reaches full rounds in a few rounds, while
 * a processor that keeps up with its intake (woken by each one) asks for about one invoice per
 * round rather than for every free slot: a claim that finds nothing still costs the store a write.
 */
function _nextRoundSize(current: number, asked: number, got: number, concurrency: number): number {
  if (got === asked) return Math.min(concurrency, Math.max(current, asked * 2));
  return Math.max(1, got);
}

async function _pass(l: Loop, doc: InvoiceDoc & { lease: Lease }): Promise<void> {
  let outage = true;
  try {
    outage = await runPass(l.rt, doc);
  } finally {
    l.processed++;
    _passEnded(l, outage);
  }
}

/**
 * While dependency outages last, the processor pauses its claims (backoff of the streak, at most
 * MAX_PAUSE_MS): invoices wait out their own backoff anyway, and a long outage costs no churn.
 */
function _passEnded(l: Loop, outage: boolean): void {
  if (!outage) {
    l.outageStreak = 0;
    l.pauseUntil = 0;
    return;
  }
  l.outageStreak++;
  l.pauseUntil = Date.now() + Math.min(MAX_PAUSE_MS, backoff(l.rt.o, l.outageStreak));
}

/** Sleeps that a wake (new work, or stop) cuts short. */
interface Sleeper {
  sleep(ms: number): Promise<void>;
  wake(): void;
}

function _createSleeper(): Sleeper {
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
