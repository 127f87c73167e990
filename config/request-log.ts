/**
 * The request log's config section (docs/configuration.md "requestLog"): every API request of a
 * business kept for the merchant dashboard and the operators' search, written in batches by a
 * background flush so the request path only appends to a bounded in-memory buffer.
 */
import * as v from "valibot";

const POSITIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(1));

export const RequestLogSchema = v.strictObject({
  /** Off: nothing is buffered or written (the dashboard's request log then stays empty). */
  enabled: v.optional(v.boolean(), true),
  /** How long a record is kept (the store's TTL removes it afterwards). */
  retentionDays: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(90)), 7),
  /** Records the buffer holds between flushes; a request finding it full is not logged (counted as dropped). */
  bufferRecords: v.optional(v.pipe(v.number(), v.integer(), v.minValue(100), v.maxValue(1_000_000)), 20_000),
  /** Records per store write (one insertMany each); reaching it also starts a flush before the timer. */
  batchRecords: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(5_000)), 500),
  /** The flush timer. */
  flushMs: v.optional(POSITIVE_INT, 1_000),
});

export type RequestLogConfig = v.InferOutput<typeof RequestLogSchema>;
