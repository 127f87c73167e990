/**
 * Shared helpers of the regulator-client tests: a client wired to a real simulator (or any URL) with
 * captured logs and a controllable clock, small node:http servers (header echo, redirect), and
 * assertion helpers for thrown GatewayErrors.
 */
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as assert from "uvu/assert";
import { createPolicyRegistry, type PolicyRegistry } from "../../../adapters/policies.ts";
import { createHttpRegulatorClient } from "../../../adapters/regulator/http-client.ts";
import type { HttpRegulatorClient, HttpRegulatorClientOptions } from "../../../adapters/regulator/http-client.ts";
import type { RegulatorGatewayError } from "../../../adapters/regulator/port.ts";
import { isRegulatorGatewayError } from "../../../adapters/regulator/port.ts";
import { createLogger, type LogFields } from "../../../core/log.ts";
import type { AlertChannel, AlertSignal } from "../../../adapters/ports.ts";
import { CREDENTIALS } from "./simulator/simulator-helpers.ts";

export const CTX = { requestId: "req-test-0001" };

import { manualClock, type ManualClock } from "../../support/manual-clock.ts";
export { manualClock, type ManualClock };

export interface ClientHarness {
  client: HttpRegulatorClient;
  policies: PolicyRegistry;
  clock: ManualClock;
  /** Every redacted log record, in order. */
  logs: LogFields[];
  /** The immediate signals the client raised on its alert channel, in order. */
  raised: AlertSignal[];
  events(name: string): LogFields[];
  close(): Promise<void>;
}

export function makeClient(
  baseUrls: HttpRegulatorClientOptions["baseUrls"],
  overrides: Partial<HttpRegulatorClientOptions> = {},
): ClientHarness {
  const clock = manualClock();
  const logs: LogFields[] = [];
  const raised: AlertSignal[] = [];
  const policies = overrides.policies ?? createPolicyRegistry({ clock });
  const client = createHttpRegulatorClient({
    baseUrls,
    apiKey: CREDENTIALS.apiKey,
    apiSecret: CREDENTIALS.apiSecret,
    policies,
    log: createLogger({ level: "debug", sink: (r) => logs.push(r) }),
    timeoutMs: 2_000,
    alerts: _recordingAlerts(raised),
    ...overrides,
  });
  return {
    client,
    policies,
    clock,
    logs,
    raised,
    events: (name) => logs.filter((r) => r.event === name),
    close: () => client.close(),
  };
}

/** Awaits a promise that must reject with a regulator GatewayError, and returns the error. */
export async function gwFailure(p: Promise<unknown>): Promise<RegulatorGatewayError> {
  try {
    await p;
  } catch (e) {
    assert.ok(isRegulatorGatewayError(e), `expected a regulator GatewayError, got ${String(e)}`);
    return e as RegulatorGatewayError;
  }
  assert.unreachable("expected the call to throw");
  throw new Error("unreachable");
}

export function assertGw(e: RegulatorGatewayError, code: string, status: number, dependencyFailure: boolean): void {
  assert.is(e.code, code);
  assert.is(e.status, status);
  assert.is(e.dependencyFailure, dependencyFailure, `dependencyFailure of ${code}`);
}

export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  remotePort: number | undefined;
}

export interface TestServer {
  url: string;
  requests: RecordedRequest[];
  /** Distinct client sockets seen (keep-alive reuse). */
  sockets(): number;
  close(): Promise<void>;
}

/**
 * A tiny server: records every request (headers, body) and answers with `answer(req)`; by default the
 * regulator's success envelope (201 for sign/transmit paths, 200 otherwise).
 */
export async function startRecordingServer(
  answer: (r: RecordedRequest) => { status: number; headers?: Record<string, string>; body?: string } = _envelopeAnswer,
): Promise<TestServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<string>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const rec: RecordedRequest = {
        method: req.method ?? "",
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        remotePort: req.socket.remotePort,
      };
      sockets.add(`${req.socket.remoteAddress}:${req.socket.remotePort}`);
      requests.push(rec);
      const a = answer(rec);
      const body = a.body ?? "";
      res.writeHead(a.status, { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...(a.headers ?? {}) });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    sockets: () => sockets.size,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

export function bytesToText(b: Uint8Array): string {
  return Buffer.from(b).toString("utf8");
}

// --- Internal helpers ---

function _envelopeAnswer(r: RecordedRequest): { status: number; body: string } {
  const created = r.url.includes("/invoice/sign") || r.url.includes("/invoice/transmit/");
  const code = created ? 201 : 200;
  return { status: code, body: JSON.stringify({ code, data: { ok: true } }) };
}

/** An alert channel that only records what is raised (the engine itself is tested in test/adapters/alerts). */
function _recordingAlerts(raised: AlertSignal[]): AlertChannel {
  const unused = () => Promise.reject(new Error("not used by the regulator client"));
  return {
    observeCall: () => {},
    raise: (s) => void raised.push(s),
    deadLetters: unused,
    replay: unused,
    status: unused,
    observations: () => [],
    flush: async () => {},
    drain: async () => {},
    close: async () => {},
  };
}
