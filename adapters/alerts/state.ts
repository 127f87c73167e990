/**
 * The alert engine's state, shared by its parts (request path, thresholds, immediate signals,
 * delivery, dead letters, worker): the resolved options, the in-process counters per dependency and
 * operation, the immediate-signal cooldowns, the delivery queue and the worker's timers.
 */
import PQueue from "p-queue";
import type { Logger } from "../../core/log.ts";
import type { Alert, AlertChannelStatus, CoordinationStore, DeadLetter, Doc, Collection } from "../ports.ts";
import { ALERT_THRESHOLDS, DEAD_LETTERS_COLLECTION, type AlertEngineOptions, type AlertThresholds } from "./types.ts";
import { createWebhookChannel, type WebhookChannel } from "./webhook.ts";

/** Minute buckets of the window. */
export const BUCKET_MS = 60_000;
/** Entries of the immediate-signal cooldown map kept at most (beyond it, signals go out undeduplicated). */
export const MAX_IMMEDIATE_KEYS = 10_000;
export const STREAK_TTL_MS = 60 * 60_000;
export const GEN_TTL_MS = 7 * 24 * 60 * 60_000;
/** Added to a shared streak counter to bring it back to (about) zero before adding the trailing run. */
export const RESET = -(2 ** 40);
/** How often the worker refreshes the request path's clock. */
export const COARSE_CLOCK_MS = 250;

export interface AlertEngineState {
  readonly o: AlertEngineOptions;
  readonly coordination: CoordinationStore;
  readonly log: Logger;
  readonly clock: () => number;
  /** The request path's clock: refreshed by the worker while it runs, else read each time. */
  readonly callClock: () => number;
  readonly t: AlertThresholds;
  readonly prefix: string;
  readonly runbookBase: string;
  readonly flushMs: number;
  /** Minute buckets in the window. */
  readonly buckets: number;
  readonly webhook: WebhookChannel | null;
  readonly letters: Collection<LetterDoc>;
  readonly queue: PQueue;
  /** dependency → operation → tracker. */
  readonly trackers: Map<string, Map<string, Tracker>>;
  readonly immediate: Map<string, ImmediateEntry>;
  readonly counts: { sent: number; suppressed: number; deliveryFailures: number };
  lastDelivery: AlertChannelStatus["webhook"]["lastDelivery"];
  timer: NodeJS.Timeout | null;
  flushing: Promise<void> | null;
  coarse: number | null;
  coarseTimer: NodeJS.Timeout | null;
}

export function createAlertState(o: AlertEngineOptions): AlertEngineState {
  const t: AlertThresholds = { ...ALERT_THRESHOLDS, ...o.thresholds };
  const s: AlertEngineState = {
    o,
    coordination: o.coordination,
    log: o.log,
    clock: o.clock ?? Date.now,
    callClock: o.clock ?? (() => s.coarse ?? Date.now()),
    t,
    prefix: o.keyPrefix ?? "alerts:",
    runbookBase: o.runbookBase ?? "docs/operations.md",
    flushMs: o.flushMs ?? 1_000,
    buckets: Math.max(1, Math.ceil(t.windowMs / BUCKET_MS)),
    webhook: o.webhook ? createWebhookChannel(o.webhook) : null,
    letters: o.store.collection<LetterDoc>(DEAD_LETTERS_COLLECTION, { indexes: [{ fields: ["deadAtMs"] }, { fields: ["status", "deadAtMs"] }] }),
    queue: new PQueue({ concurrency: 2 }),
    trackers: new Map(),
    immediate: new Map(),
    counts: { sent: 0, suppressed: 0, deliveryFailures: 0 },
    lastDelivery: null,
    timer: null,
    flushing: null,
    coarse: null,
    coarseTimer: null,
  };
  return s;
}

export interface Bucket {
  minute: number;
  calls: number;
  failures: number;
}

/** One dependency + operation: this process's counters (since the last flush, and running). */
export interface Tracker {
  dependency: string;
  operation: string;
  base: string | undefined;
  ring: Bucket[];
  // since the last flush
  pCalls: number;
  pFailures: number;
  pSuccesses: number;
  pTrailingFailures: number;
  pTrailingSuccesses: number;
  pSawSuccess: boolean;
  pSawFailure: boolean;
  // this process's running view
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  firstFailureAt: number | null;
  lastFailureAt: number | null;
  lastSuccessAt: number | null;
  lastFailureClass: string | null;
  requestIds: string[];
  gen: number;
  incident: boolean;
  cooldownUntil: number;
}

/** A tracker's calls since the last flush. */
export interface Batch {
  calls: number;
  failures: number;
  successes: number;
  trailingFailures: number;
  trailingSuccesses: number;
  sawSuccess: boolean;
  sawFailure: boolean;
}

/** What a key is evaluated on: the shared totals, or this process's own when the store cannot answer. */
export interface View {
  consecutiveFailures: number;
  consecutiveSuccesses: number;
  windowCalls: number;
  windowFailures: number;
}

/** One immediate signal key's cooldown and the occurrences counted into its next notification. */
export interface ImmediateEntry {
  firstAt: number;
  lastAt: number;
  count: number;
  cooldownUntil: number;
  requestIds: string[];
}

export interface LetterDoc extends Doc {
  alert: Alert;
  status: "dead" | "replayed";
  attempts: number;
  lastFailure: DeadLetter["lastFailure"];
  deadAt: string;
  deadAtMs: number;
  replayedAt: string | null;
}
