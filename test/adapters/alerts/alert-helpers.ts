/**
 * Alert tests: an engine on the real in-process coordination store and the embedded document store,
 * driven by a manual clock, with its log records captured; and a real local HTTP receiver that
 * answers with the statuses it is told (or holds the request past the deadline) and records every
 * body it received.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMemoryCoordination } from "../../../adapters/coordination/memory.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import { createAlertEngine, type AlertEngine, type AlertEngineOptions } from "../../../adapters/alerts/engine.ts";
import type { Alert, CoordinationStore, DocumentStore } from "../../../adapters/ports.ts";
import { createLogger, type LogFields } from "../../../core/log.ts";
import { manualClock, type ManualClock } from "../../support/manual-clock.ts";

export interface EngineHarness {
  engine: AlertEngine;
  clock: ManualClock;
  coordination: CoordinationStore;
  store: DocumentStore;
  logs: LogFields[];
  /** The alerts the log channel carried (every alert goes there). */
  alerts(): Alert[];
  close(): Promise<void>;
}

export async function engineHarness(
  overrides: Omit<Partial<AlertEngineOptions>, "clock"> & { clock?: ManualClock; coordination?: CoordinationStore; store?: DocumentStore } = {},
): Promise<EngineHarness> {
  const clock = overrides.clock ?? manualClock();
  const coordination = overrides.coordination ?? createMemoryCoordination({ clock: clock.now });
  const store = overrides.store ?? (await createSqliteDocumentStore({ file: ":memory:" }));
  const logs: LogFields[] = [];
  const engine = createAlertEngine({
    environment: "test",
    log: createLogger({ level: "debug", sink: (r) => logs.push(r) }),
    ...overrides,
    coordination,
    store,
    clock: clock.now,
  });
  return {
    engine,
    clock,
    coordination,
    store,
    logs,
    alerts: () => logs.filter((l) => l.event === "gateway_alert") as unknown as Alert[],
    async close() {
      await engine.close();
    },
  };
}

export interface Receiver {
  url: string;
  /** Bodies received, in order (every attempt). */
  bodies: Array<{ text: string; alert: Alert }>;
  /** The X-Service-Gateway-Hop header of each request received, in order (undefined: none). */
  hops: Array<string | undefined>;
  /** The statuses to answer next, in order; "hold" never answers; `{ delayMs, status }` answers late; then 200. */
  plan: Array<number | "hold" | { delayMs: number; status: number }>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const held: ServerResponse[] = [];
  const r: Receiver = {
    url: "",
    bodies: [],
    hops: [],
    plan: [],
    close: async () => {
      for (const res of held) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      r.bodies.push(JSON.parse(Buffer.concat(chunks).toString("utf8")));
      r.hops.push(req.headers["x-service-gateway-hop"] as string | undefined);
      const next = r.plan.shift() ?? 200;
      if (next === "hold") {
        held.push(res);
        return;
      }
      if (typeof next === "object") {
        held.push(res);
        const timer = setTimeout(() => {
          if (!res.destroyed) res.writeHead(next.status, { "content-type": "text/plain" }).end("late");
        }, next.delayMs);
        res.once("close", () => clearTimeout(timer));
        return;
      }
      res.writeHead(next, { "content-type": "text/plain" }).end(next === 200 ? "ok" : "no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T000/B000/secret-token-in-path`;
  return r;
}

/** `n` failures of one dependency operation. */
export function fail(engine: AlertEngine, n: number, dependency = "regulator:LIVE", operation = "sign", requestId?: string): void {
  for (let i = 0; i < n; i++) engine.observeCall(dependency, operation, true, { failureClass: "timeout", ...(requestId ? { requestId } : {}) });
}

export function succeed(engine: AlertEngine, n: number, dependency = "regulator:LIVE", operation = "sign"): void {
  for (let i = 0; i < n; i++) engine.observeCall(dependency, operation, false);
}
