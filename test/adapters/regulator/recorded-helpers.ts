/**
 * The recorded-answer suite's parts: the fixtures (test/fixtures/regulator-recorded/*.json, answers of
 * the real sandbox transcribed from public documents, each naming its source), a replay server that
 * answers every request with one chosen answer, and a runner that makes one client call and reduces
 * its result to a comparable outcome (shared by recorded-answers.test.ts and contract.test.ts).
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { isRegulatorGatewayError } from "../../../adapters/regulator/port.ts";
import type { HttpRegulatorClient } from "../../../adapters/regulator/http-client.ts";
import type { RelayMethod } from "../../../adapters/regulator/port.ts";
import { DEMO, demoInvoice } from "./simulator/simulator-helpers.ts";
import { CTX, type ClientHarness } from "./regulator-helpers.ts";

export const RECORDED_DIR = fileURLToPath(new URL("../../fixtures/regulator-recorded/", import.meta.url));

export interface RecordedSource {
  repository: string;
  commit: string;
  path: string;
  section: string;
  lines: string;
  /** "recorded" (a live sandbox answer), "documented-sample" (the Swagger page's sample), "reconstructed". */
  kind: "recorded" | "documented-sample" | "reconstructed";
}

export type ScenarioCall =
  | { op: "authenticate" }
  | { op: "getEntity"; entityId: string }
  | { op: "validateInvoice" }
  | { op: "sign" }
  | { op: "transmit"; irn: string }
  | { op: "relay"; method: RelayMethod; path: string; query?: Record<string, string>; body?: Record<string, unknown> };

export interface ScenarioExpect {
  throws?: string;
  status?: number;
  dependencyFailure?: boolean;
  failureClass?: string;
  /** The `regulator_credentials_rejected` immediate signal is raised. */
  immediateSignal?: boolean;
  /** sign / transmit threw: certainly not performed (never ambiguous). */
  notPerformed?: boolean;
  /** The exact value the call returns. */
  value?: unknown;
  /** The regulator's 2xx answer comes back byte for byte. */
  passThrough?: boolean;
}

export interface RecordedAnswer {
  name: string;
  source: RecordedSource;
  request: { method: string; path: string };
  response: { status: number; headers: Record<string, string>; body: unknown };
  note?: string;
  scenarios: Array<{ call: ScenarioCall; expect: ScenarioExpect }>;
}

/** Every recorded answer, from every fixture file. */
export function loadRecordedAnswers(): RecordedAnswer[] {
  const out: RecordedAnswer[] = [];
  for (const file of readdirSync(RECORDED_DIR).filter((f) => f.endsWith(".json")).sort()) {
    const data = JSON.parse(readFileSync(RECORDED_DIR + file, "utf8")) as { answers: RecordedAnswer[] };
    out.push(...data.answers);
  }
  return out;
}

export function recordedAnswer(name: string): RecordedAnswer {
  const found = loadRecordedAnswers().find((a) => a.name === name);
  if (!found) throw new Error(`no recorded answer named ${name}`);
  return found;
}

/** The recorded body as the wire carries it (compact JSON, as the recorded content-lengths show). */
export function recordedBodyText(a: RecordedAnswer): string {
  return JSON.stringify(a.response.body);
}

export interface ReplayServer {
  url: string;
  /** Answer every following request with this recording. */
  serve(answer: RecordedAnswer): void;
  /** Method and path of every request received. */
  requests: Array<{ method: string; url: string }>;
  close(): Promise<void>;
}

export async function startReplayServer(): Promise<ReplayServer> {
  let current: RecordedAnswer | undefined;
  const requests: Array<{ method: string; url: string }> = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      requests.push({ method: req.method ?? "", url: req.url ?? "" });
      if (!current) {
        res.writeHead(599).end();
        return;
      }
      const body = recordedBodyText(current);
      const headers: Record<string, string> = { ...current.response.headers, "content-length": String(Buffer.byteLength(body)) };
      res.writeHead(current.response.status, headers);
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve(answer) {
      current = answer;
    },
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** What a client call ended with, reduced to what the spec decides on. */
export type Outcome =
  | { kind: "throws"; code: string; status: number; dependencyFailure: boolean; failureClass: string | null; regulatorFailure: string }
  | { kind: "value"; value: unknown }
  | { kind: "mutation"; outcome: string; reason?: string }
  | { kind: "response"; status: number; body: string };

let invoiceCounter = 0;

/** Makes the call with the harness's client and returns its outcome (never throws for a GatewayError). */
export async function runCall(h: ClientHarness, call: ScenarioCall): Promise<Outcome> {
  const client: HttpRegulatorClient = h.client;
  try {
    switch (call.op) {
      case "authenticate":
        return { kind: "value", value: await client.authenticate("TEST", { email: DEMO.email, password: DEMO.password }, CTX) };
      case "getEntity":
        return { kind: "value", value: await client.getEntity("TEST", call.entityId, CTX) };
      case "validateInvoice": {
        const o = await client.validateInvoice("TEST", demoInvoice(`REC${++invoiceCounter}`), CTX);
        return { kind: "mutation", outcome: o.kind, ...(o.kind === "rejected" ? { reason: o.reason } : {}) };
      }
      case "sign": {
        const o = await client.sign("TEST", demoInvoice(`REC${++invoiceCounter}`), CTX);
        return { kind: "mutation", outcome: o.kind, ...(o.kind === "rejected" ? { reason: o.reason } : o.kind === "ambiguous" ? { reason: o.reason } : {}) };
      }
      case "transmit": {
        const o = await client.transmit("TEST", call.irn, CTX);
        return { kind: "mutation", outcome: o.kind, ...(o.kind === "rejected" ? { reason: o.reason } : o.kind === "ambiguous" ? { reason: o.reason } : {}) };
      }
      case "relay": {
        const r = await client.relay(
          "TEST",
          { method: call.method, path: call.path, ...(call.query ? { query: call.query } : {}), ...(call.body ? { body: call.body } : {}) },
          CTX,
        );
        return { kind: "response", status: r.status, body: Buffer.from(r.body).toString("utf8") };
      }
    }
  } catch (e) {
    if (!isRegulatorGatewayError(e)) throw e;
    return {
      kind: "throws",
      code: e.code,
      status: e.status,
      dependencyFailure: e.dependencyFailure,
      failureClass: e.failureClass ?? null,
      regulatorFailure: e.regulatorFailure,
    };
  }
}

/**
 * The structure of a JSON value: keys in order and value types, arrays reduced to their first item.
 * Two answers with the same skeleton have the same fields, whatever their values.
 */
export function skeleton(v: unknown): unknown {
  if (Array.isArray(v)) return v.length === 0 ? [] : [skeleton(v[0])];
  if (v !== null && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, skeleton(x)]));
  return v === null ? "null" : typeof v;
}
