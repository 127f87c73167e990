/**
 * The request log's writer: off the request path by construction. A request's completion only
 * appends a small record to an in-memory buffer (bounded: a full buffer drops the record and counts
 * it, it never slows the request); a worker flushes the buffer every `flushMs`, or as soon as a
 * batch is full: the records become groups (./group.ts), written as one `insertMany` per
 * `batchRecords` records. A store that cannot take a batch (down, circuit open, timing out) loses
 * that batch: counted, and one log line per outage, never a retry that would hold memory or block.
 * Stopping the worker flushes what is buffered.
 *
 * Which requests are kept (docs/dashboard.md "Request log"): those of an API route (API-key or bearer
 * authentication) and those no route matched, whenever the request has a business — the key's
 * owner once authenticated, else the owner of the approved domain it was sent to. A request with no
 * business (an unknown host, a collections host without a valid key), operator routes and
 * unauthenticated pages (health, checkout, console, dashboard) are not kept.
 */
import type { DocumentStore } from "../../adapters/ports.ts";
import type { RequestLogConfig } from "../../config/request-log.ts";
import type { RequestContext } from "../context.ts";
import { describeError, type Logger } from "../log.ts";
import type { CounterSeries, GatewayMetrics } from "../metrics.ts";
import type { Worker } from "../plugin.ts";
import type { PendingRequest } from "./entry.ts";
import { groupRequests, openRequestLogGroups } from "./group.ts";

/** What the request flow calls once per request (on every exit path, after the response is built). */
export interface RequestLogSink {
  record(ctx: RequestContext, status: number, durationMs: number, endedAt: number): void;
}

export interface RequestLogWriter extends RequestLogSink {
  readonly worker: Worker;
  /** Writes what is buffered now (tests, shutdown); resolves when the store answered. */
  flush(): Promise<void>;
  /** Records waiting in the buffer. */
  buffered(): number;
}

export interface RequestLogWriterOptions {
  store: DocumentStore;
  config: RequestLogConfig;
  metrics: GatewayMetrics;
  log: Logger;
}

export function createRequestLogWriter(o: RequestLogWriterOptions): RequestLogWriter {
  const dropped = o.metrics.counter("gatehouse_request_log_dropped_total", "Request-log records not written: buffer_full (the buffer was full when the request ended), store_unavailable (the store refused their batch).", ["reason"]);
  const st: _State = {
    o,
    buffer: [],
    scheduled: false,
    flushing: null,
    timer: null,
    failing: false,
    lostInOutage: 0,
    full: dropped.series("buffer_full"),
    unavailable: dropped.series("store_unavailable"),
    written: o.metrics.counter("gatehouse_request_log_written_total", "Request-log records written to the store.", []).series(),
  };
  const capacity = o.config.bufferRecords;
  const batch = o.config.batchRecords;
  return {
    record(ctx, status, durationMs, endedAt) {
      const businessId = ctx.businessId;
      if (businessId === null) return;
      const route = ctx.route;
      if (route !== null && (route.decl.auth === "admin" || route.decl.auth === "none")) return;
      const buffer = st.buffer;
      if (buffer.length >= capacity) {
        st.full.inc();
        return;
      }
      buffer.push({
        requestId: ctx.requestId,
        businessId,
        at: endedAt,
        method: ctx.method,
        route: route === null ? null : route.decl.path,
        path: ctx.path,
        search: ctx.search,
        status,
        code: ctx.errorCode,
        durationMs,
        host: ctx.host,
        credentialId: ctx.principal === null ? null : ctx.principal.credentialId,
      });
      if (buffer.length === batch && !st.scheduled) {
        st.scheduled = true;
        setImmediate(() => void _flush(st));
      }
    },
    worker: {
      name: "request-log",
      start() {
        st.timer ??= setInterval(() => void _flush(st), o.config.flushMs);
        st.timer.unref();
      },
      async stop() {
        if (st.timer) clearInterval(st.timer);
        st.timer = null;
        await _flush(st);
      },
    },
    flush: () => _flush(st),
    buffered: () => st.buffer.length,
  };
}

// --- Internal helpers ---

interface _State {
  o: RequestLogWriterOptions;
  buffer: PendingRequest[];
  /** A flush is queued for the next turn (the buffer reached a batch). */
  scheduled: boolean;
  flushing: Promise<void> | null;
  timer: ReturnType<typeof setInterval> | null;
  /** The last batch failed (one log line per outage). */
  failing: boolean;
  lostInOutage: number;
  full: CounterSeries;
  unavailable: CounterSeries;
  written: CounterSeries;
}

/** One flush at a time; a flush asked for while one runs waits for it, then writes what came since. */
async function _flush(st: _State): Promise<void> {
  st.scheduled = false;
  while (st.flushing) await st.flushing;
  if (st.buffer.length === 0) return;
  st.flushing = _writeAll(st).finally(() => (st.flushing = null));
  await st.flushing;
}

async function _writeAll(st: _State): Promise<void> {
  const taken = st.buffer;
  st.buffer = [];
  const { config } = st.o;
  const groups = groupRequests(taken, config.retentionDays * 86_400_000, config.batchRecords);
  const collection = openRequestLogGroups(st.o.store);
  // Groups go to the store a batch of records at a time (one insertMany each).
  for (let i = 0; i < groups.length; ) {
    const part: typeof groups = [];
    let records = 0;
    while (i < groups.length && (part.length === 0 || records + groups[i]!.n <= config.batchRecords)) {
      records += groups[i]!.n;
      part.push(groups[i++]!);
    }
    try {
      await collection.insertMany(part);
      st.written.inc(records);
      if (st.failing) st.o.log.event("request_log_write_recovered", { lost: st.lostInOutage });
      st.failing = false;
      st.lostInOutage = 0;
    } catch (e) {
      st.unavailable.inc(records);
      st.lostInOutage += records;
      if (!st.failing) st.o.log.warn("request_log_write_failed", { records, error: describeError(e) });
      st.failing = true;
    }
  }
}
