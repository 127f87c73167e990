/**
 * Scenario "stored": Stored mode on the embedded default (the SQLite file in a temp dir: writer
 * thread, WAL, every acknowledgement after its commit's fsync; in-process coordination), the
 * regulator simulator in its own process (adapters/regulator/simulator/main.ts).
 *
 * 1. Intake: autocannon POSTs `POST /api/v1/invoice/sign` to a Stored domain at the fixed load
 *    settings, each request with its own idempotency key and invoice reference (a new invoice every
 *    time; the gateway builds the IRN). Measured: accepted invoices/s and latency (p99).
 * 2. Processor: a fresh store holding a backlog of BENCH_STORED_BACKLOG (default 10 000) pending
 *    invoices (taken in through the gateway), then ONE processor (the production one, default
 *    settings) drains it from pending to signed against the simulator. Measured: the drain time and
 *    invoices/s. The intake gateway runs without its processor, so phase 1 measures intake only.
 * CPU per item, from /proc (the gateway runs in this process): per intake the main thread's, the
 * writer's (the busiest thread other than main that was already running before the measured load
 * started) and the rest's (mostly the load generator, a worker thread that ends with the load); per drained invoice the
 * process's (every thread), the main thread's and the busiest other thread's (the SQLite writer).
 * BENCH_STORED_BACKLOG=0 measures the intake only; BENCH_STORED_CPU_PROF=<file> writes a CPU profile of
 * the main thread over the measured intake load (no start-up in it; read it with
 * bench/profile-top.ts, profile-share.ts, profile-callers.ts).
 * Documents come from demoInvoice() (test/adapters/regulator/simulator/simulator-helpers.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { composeGateway } from "../../boot/compose.ts";
import type { Gateway } from "../../core/create-gateway.ts";
import { createLogger } from "../../core/log.ts";
import { serveGateway, type RunningServer } from "../../core/server.ts";
import { createProcessorFor } from "../../plugins/stored-processing/plugin.ts";
import { openStoredStore } from "../../plugins/stored-processing/store.ts";
import { STORED, STORED_KEY, testConfig } from "../../test/support/gateway.ts";
import { DEMO, demoInvoice } from "../../test/adapters/regulator/simulator/simulator-helpers.ts";
import { summarizeCannon } from "../report.ts";
import type { BenchScenario, BenchSettings, ScenarioResult } from "../run.ts";
import { problemsOf } from "./load.ts";
import { benchLimits } from "../servers/common.ts";
import { processCpuMs, spawnListening, stopProcess, threadCpuMs, threadCpuSplit, type Listening } from "../processes.ts";
import { startCpuProfile } from "../cpu-profile.ts";

const SETUP_REQUEST = fileURLToPath(new URL("./stored-intake-request.cjs", import.meta.url));
const INTAKE_PATH = "/api/v1/invoice/sign";
const DRAIN_TIMEOUT_MS = 600_000;

/** The intake body: a demo invoice whose IRN the gateway builds from `invoice_reference`. */
export function intakeTemplate(reference: string): string {
  const doc = demoInvoice(reference);
  delete doc.business_id;
  delete doc.irn;
  doc.invoice_reference = reference;
  return JSON.stringify(doc);
}

export const stored: BenchScenario = {
  names: ["stored"],
  async run({ settings, env, progress }) {
    const backlog = _backlogSize(env);
    const sim = await _startSimulator();
    try {
      const intake = await _intake(sim.url, settings, progress, env.BENCH_STORED_CPU_PROF || undefined);
      const drain = backlog > 0 ? await _drain(sim.url, backlog, progress) : null;
      const result: ScenarioResult = {
        ...intake.result,
        extra: {
          intakeMainCpuUsPerIntake: intake.cpuUs.main,
          intakeWriterCpuUsPerIntake: intake.cpuUs.writer,
          intakeLoadGeneratorCpuUsPerIntake: intake.cpuUs.load,
          backlog,
          ...(drain
            ? {
                drainSeconds: Math.round(drain.ms) / 1000,
                processorInvoicesPerSec: Math.round((backlog / drain.ms) * 1000 * 10) / 10,
                processorCpuUsPerInvoice: drain.cpuUs.process,
                processorMainCpuUsPerInvoice: drain.cpuUs.main,
                processorWriterCpuUsPerInvoice: drain.cpuUs.writer,
              }
            : {}),
        },
      };
      return { results: [result], notes: [], problems: problemsOf(result) };
    } finally {
      await stopProcess(sim.child);
    }
  },
};

// --- Internal helpers ---

interface Running {
  gateway: Gateway;
  server: RunningServer;
  dir: string;
  close(): Promise<void>;
}

/** The demo gateway on the SQLite file in a temp dir, its processor off, limits above what a bench sends. */
async function _gateway(simUrl: string): Promise<Running> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-stored-"));
  const config = testConfig({
    storage: { driver: "sqlite", file: join(dir, "gatehouse.sqlite") },
    log: { level: "silent", format: "json" },
    limits: benchLimits(),
    stored: { processor: { enabled: false } },
  });
  const log = createLogger({ level: "silent", sink: () => {} });
  const gateway = await composeGateway(config, { log, regulatorBaseUrls: { TEST: simUrl, LIVE: simUrl } });
  const server = await serveGateway(gateway, { host: "127.0.0.1", port: 0, graceMs: 2_000, log });
  const onboard = await gateway.fetch(
    new Request(`http://${STORED}/sub-businesses`, {
      method: "POST",
      headers: { host: STORED, "x-api-key": STORED_KEY, "x-idempotency-key": "bench-onboard-0001", "content-type": "application/json" },
      body: JSON.stringify({ regulatorCredentials: { email: DEMO.email, password: DEMO.password } }),
    }),
  );
  if (onboard.status !== 201) throw new Error(`bench stored: onboarding answered ${onboard.status}: ${await onboard.text()}`);
  return {
    gateway,
    server,
    dir,
    async close() {
      await server.drain("bench");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const HEADERS = { host: STORED, "x-api-key": STORED_KEY, "x-sub-business-id": DEMO.businessId, "content-type": "application/json" };

async function _intake(simUrl: string, settings: BenchSettings, progress: (line: string) => void, profileFile?: string): Promise<{ result: ScenarioResult; cpuUs: { main: number; writer: number; load: number } }> {
  const g = await _gateway(simUrl);
  try {
    const setupRequest = settings.workers > 0 ? SETUP_REQUEST : (createRequire(import.meta.url)(SETUP_REQUEST) as (r: unknown) => unknown);
    const cannon = (seconds: number) =>
      autocannon({
        url: g.server.url,
        connections: settings.connections,
        pipelining: settings.pipelining,
        duration: seconds,
        ...(settings.workers > 0 ? { workers: settings.workers } : {}),
        requests: [{ method: "POST", path: INTAKE_PATH, headers: HEADERS, body: intakeTemplate("BENCHREF"), setupRequest } as autocannon.Request],
      });
    if (settings.warmup > 0) {
      progress(`stored: intake warm-up ${settings.warmup} s`);
      await cannon(settings.warmup);
    }
    progress(`stored: intake, measuring ${settings.duration} s (-c ${settings.connections} -p ${settings.pipelining})`);
    const meta = { name: "stored/gateway", scenario: "stored", server: "gateway", role: "subject" as const, description: "Stored intake (202), a new invoice per request" };
    const profile = await startCpuProfile(profileFile);
    const before = threadCpuMs(process.pid);
    const processBefore = processCpuMs(process.pid);
    const measured = await cannon(settings.duration);
    await profile?.stop();
    const cpu = _intakeCpuMs(before, threadCpuMs(process.pid), processCpuMs(process.pid) - processBefore);
    const per = (ms: number) => Math.round((ms * 1000) / Math.max(1, measured.requests.total));
    return { result: summarizeCannon(meta, INTAKE_PATH, measured), cpuUs: { main: per(cpu.main), writer: per(cpu.writer), load: per(cpu.load) } };
  } finally {
    await g.close();
  }
}

async function _drain(simUrl: string, backlog: number, progress: (line: string) => void): Promise<{ ms: number; cpuUs: { process: number; main: number; writer: number } }> {
  const g = await _gateway(simUrl);
  try {
    progress(`stored: taking in a backlog of ${backlog} invoices`);
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < backlog; i = next++) {
        const res = await g.gateway.fetch(
          new Request(`http://${STORED}${INTAKE_PATH}`, {
            method: "POST",
            headers: { ...HEADERS, "x-idempotency-key": `bench-backlog-${i}` },
            body: intakeTemplate(`BL${i}`),
          }),
        );
        if (res.status !== 202) throw new Error(`bench stored: backlog intake answered ${res.status}: ${await res.text()}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, lane));

    const kit = g.gateway.kit;
    const p = kit.config.stored.processor;
    const store = openStoredStore(kit.ports.documentStore);
    const processor = createProcessorFor(kit);
    progress(`stored: one processor (concurrency ${p.concurrency}) draining ${backlog} invoices to signed`);
    const started = performance.now();
    const before = threadCpuMs(process.pid);
    await processor.start();
    try {
      for (;;) {
        const signed = await store.invoices.count({ status: "signed" });
        if (signed >= backlog) break;
        const stuck = await store.invoices.count({ status: { $in: ["rejected", "frozen"] } });
        if (stuck > 0) throw new Error(`bench stored: ${stuck} invoices ended rejected or frozen`);
        if (performance.now() - started > DRAIN_TIMEOUT_MS) throw new Error(`bench stored: the backlog did not drain (${signed} of ${backlog} signed)`);
        await new Promise((r) => setTimeout(r, 100));
      }
      const ms = performance.now() - started;
      return { ms, cpuUs: _cpuPerItem(threadCpuSplit(process.pid, before, threadCpuMs(process.pid)), backlog) };
    } finally {
      await processor.stop();
    }
  } finally {
    await g.close();
  }
}

/**
 * CPU ms of the main thread, the writer and the rest during the intake load: the writer is the
 * busiest other thread that already ran before the load; the rest (the process's CPU minus that of
 * the threads that ran before the load) is mostly the load generator, autocannon's worker thread,
 * its start-up included (~0.3 s of CPU, which a 1-s --quick run spreads over few requests).
 */
function _intakeCpuMs(before: Map<number, { name: string; ms: number }>, after: Map<number, { name: string; ms: number }>, processMs: number): { main: number; writer: number; load: number } {
  let writer = 0;
  let old = 0;
  for (const [tid, t] of after) {
    const was = before.get(tid);
    if (!was) continue;
    old += t.ms - was.ms;
    if (tid !== process.pid) writer = Math.max(writer, t.ms - was.ms);
  }
  return { main: (after.get(process.pid)?.ms ?? 0) - (before.get(process.pid)?.ms ?? 0), writer, load: Math.max(0, processMs - old) };
}

/** µs of CPU per item: every thread, the main thread, the busiest other thread. */
function _cpuPerItem(split: Map<string, number>, items: number): { process: number; main: number; writer: number } {
  const per = (ms: number) => Math.round((ms * 1000) / items);
  let all = 0;
  let other = 0;
  for (const [name, ms] of split) {
    all += ms;
    if (name !== "main") other = Math.max(other, ms);
  }
  return { process: per(all), main: per(split.get("main") ?? 0), writer: per(other) };
}

function _backlogSize(env: Record<string, string | undefined>): number {
  const raw = env.BENCH_STORED_BACKLOG;
  const n = raw === undefined || raw === "" ? 10_000 : Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`bench: BENCH_STORED_BACKLOG must be a whole number, 0 for intake only (got "${raw}")`);
  return n;
}

/** The simulator in its own process (CLI), on a free port. */
function _startSimulator(): Promise<Listening> {
  return spawnListening("regulator simulator", ["adapters/regulator/simulator/main.ts", "--port", "0", "--no-control-api"], /(http:\/\/\S+)/, {
    env: { REGULATOR_API_KEY: "sim_api_key_demo", REGULATOR_API_SECRET: "sim_api_secret_demo" },
  });
}
