/** The alert engine's public types: thresholds, options, and the engine (an AlertChannel with a worker). */
import type { Logger } from "../../core/log.ts";
import type { Alert, AlertChannel, CoordinationStore, DocumentStore } from "../ports.ts";
import type { WebhookChannelOptions } from "./webhook.ts";

export interface AlertThresholds {
  consecutiveFailures: number;
  windowMs: number;
  minimumCalls: number;
  /** The window fires above this ratio (0.2: more than 20 %). */
  failureRatio: number;
  cooldownMs: number;
  recoverySuccesses: number;
}

export const ALERT_THRESHOLDS: AlertThresholds = {
  consecutiveFailures: 5,
  windowMs: 5 * 60_000,
  minimumCalls: 20,
  failureRatio: 0.2,
  cooldownMs: 15 * 60_000,
  recoverySuccesses: 5,
};

export const DEAD_LETTERS_COLLECTION = "alert_dead_letters";

export interface AlertEngineOptions {
  /** Shown in every alert ("production", "staging", "demo"). */
  environment: string;
  coordination: CoordinationStore;
  store: DocumentStore;
  log: Logger;
  /** Epoch milliseconds. Default Date.now. */
  clock?: () => number;
  webhook?: WebhookChannelOptions | null;
  thresholds?: Partial<AlertThresholds>;
  /** How often the worker flushes and evaluates. Default 1000 ms. */
  flushMs?: number;
  /** Base of runbook links. Default "docs/operations.md". */
  runbookBase?: string;
  /** Prefix of the shared keys. Default "alerts:". */
  keyPrefix?: string;
  /** Called for every alert sent and every dead letter (metrics). */
  onAlert?: (alert: Alert) => void;
  onDeadLetter?: (alert: Alert) => void;
}

/** The engine's background worker: flushes every `flushMs` while started. */
export interface AlertWorker {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

export interface AlertEngine extends AlertChannel {
  /** Flushes every `flushMs` while started. */
  readonly worker: AlertWorker;
}
