/**
 * The Stored invoice processor: its parts are in processor/ (loop.ts: claims and lifecycle;
 * pass.ts: one pass over an invoice; steps/: validate, sign, money, transmit; transitions.ts and
 * writes.ts: what the steps write). This module is its public face.
 */
export { createStoredProcessor } from "./processor/loop.ts";
export type { ProcessorHooks, ProcessorOptions, StoredProcessor } from "./processor/types.ts";
