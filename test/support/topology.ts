/**
 * The scale-out topology of docs/deployment.md, started on this machine for the topology test and
 * the capacity bench (issue 15): Redis (Debian's redis-server) and the shared document store — the
 * MongoDB-wire server (jongodb; several hosts) or an SQLite file (one host) — the regulator simulator in its own process, N gateway processes (`npm start`'s entry,
 * boot/main.ts) and M worker processes (`npm run worker`'s entry, boot/worker.ts) on one shared
 * config, and nginx in front of the gateways as the trusted edge, running the product's
 * deploy/nginx.conf rendered from that config.
 *
 * Every process is `node --import tsx <entry>`: one OS process each (no npm or tsx wrapper in
 * between), so SIGKILL kills exactly the gateway or worker it names, as a crash or the OOM killer
 * would. Gateways listen on fixed ports chosen up front, so a killed gateway can be started again
 * where nginx expects it. Each process's output is kept in `<dir>/<name>.log`.
 *
 * A missing engine (redis-server, jongodb, nginx) resolves `{ skip }` outside CI and throws with
 * `CI=true` (the helpers of each engine decide).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createWriteStream, readdirSync, readFileSync, writeFileSync, type WriteStream } from "node:fs";
import { join } from "node:path";
import { suite } from "uvu";
import type { DocumentStore } from "../../adapters/ports.ts";
import { loadConfig } from "../../config/load.ts";
import type { Config } from "../../config/schema.ts";
import { hashSecret } from "../../core/directory.ts";
import { killAndWait, trackChild } from "./child-process.ts";
import { DEMO_RAW } from "./gateway.ts";
import { isMongoSkip, startMongoServer, type MongoServerHandle } from "./mongo-server.ts";
import { isNginxSkip, nginxMissing, startNginx, type NginxHandle } from "./nginx.ts";
import { freePort } from "./ports.ts";
import { isRedisSkip, startRedisServer, type RedisServerHandle } from "./redis-server.ts";
import { mongoSharedStore, sqliteSharedStore, type SharedStore, type SharedStoreKind } from "./shared-store.ts";
import { tempDir } from "./temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const SCALE_OUT = JSON.parse(readFileSync(join(ROOT, "config/scale-out.json"), "utf8")) as { edge: { secretHeader: string; clientAddressHeader: string } };

/** The edge headers of config/scale-out.json: the topology's gateways check exactly these. */
export const SCALE_OUT_EDGE = { secretHeader: SCALE_OUT.edge.secretHeader, clientAddressHeader: SCALE_OUT.edge.clientAddressHeader };

export interface TopologyOptions {
  /** Folder and key-prefix name. */
  name: string;
  gateways: number;
  workers: number;
  /** Adjusts the raw config every process runs on (after the topology's own settings). */
  patch?: (raw: Record<string, any>) => void;
  /** Log level of the gateways and workers (default "warn"). */
  logLevel?: string;
  /** The shared document store: the MongoDB-wire server (default) or an SQLite file on this host. */
  store?: SharedStoreKind;
}

export interface ManagedProcess {
  /** "gateway-1", "worker-2", "regulator-simulator". */
  readonly name: string;
  readonly pid: number;
  /** Gateways: `127.0.0.1:<port>` (as nginx's log names its upstream). */
  readonly address: string | null;
  alive(): boolean;
  /** Everything it printed so far. */
  output(): string;
  /** SIGKILL, then its exit. */
  kill(): Promise<void>;
  /** SIGTERM (drain / hand back work), then its exit code. */
  stop(): Promise<number | null>;
}

export interface SimulatorState {
  signed: string[];
  transmitted: string[];
  calls: Record<string, number>;
}

export interface Topology {
  dir: string;
  /** The config the workers run (gateways: the same with the Stored processor off). */
  config: Config;
  edge: NginxHandle;
  /** The secret nginx sends (a test that talks to a gateway directly, as the edge, sends it too). */
  edgeSecret: string;
  /** The entry point: nginx. */
  url: string;
  redis: RedisServerHandle;
  /** The MongoDB-wire server (null on SQLite). */
  mongo: MongoServerHandle | null;
  /** The shared document store (pause: the MongoDB-wire server stopped, or the SQLite file's write lock held). */
  shared: SharedStore;
  simulatorUrl: string;
  gateways: ManagedProcess[];
  workers: ManagedProcess[];
  /** A connection of this process to the shared document store (inspection). */
  store: DocumentStore;
  /** What the regulator simulator saw and did (its control API). */
  simulator(): Promise<SimulatorState>;
  /** Sets a fault on a simulator route (docs/regulator-simulator.md), or clears that route's fault (`null`). */
  simulatorFault(route: string, fault: Record<string, unknown> | null): Promise<void>;
  /** Everything the processes whose name starts with `prefix` printed, killed ones included ("gateway", "worker"). */
  logs(prefix: string): string;
  /** Starts gateway `i` again on its port (after it was killed or stopped). */
  restartGateway(i: number): Promise<ManagedProcess>;
  /** Starts one more worker. */
  addWorker(): Promise<ManagedProcess>;
  /** Stops everything (SIGTERM to gateways and workers, then the engines). */
  close(): Promise<void>;
}

export type TopologyResult = Topology | { skip: string };

export async function startTopology(options: TopologyOptions): Promise<TopologyResult> {
  // Checked before anything starts (throws under CI=true).
  const noNginx = nginxMissing();
  if (noNginx) return { skip: noNginx };
  const redis = await startRedisServer();
  if (isRedisSkip(redis)) return { skip: redis.skip };
  let mongo: MongoServerHandle | null = null;
  if (options.store !== "sqlite") {
    const started = await startMongoServer();
    if (isMongoSkip(started)) {
      await redis.stop();
      return { skip: started.skip };
    }
    mongo = started;
  }
  if (!redis.owned || (mongo && !mongo.owned)) {
    await redis.stop();
    await mongo?.stop();
    return { skip: "REDIS_URL / MONGODB_URI point at servers this topology cannot kill, restart or pause" };
  }
  const shared = mongo ? mongoSharedStore(mongo) : sqliteSharedStore();

  const dir = tempDir(`topology-${options.name}`);
  const children: ManagedProcess[] = [];
  let nginx: NginxHandle | null = null;
  const started = async (p: Promise<ManagedProcess>) => {
    const m = await p;
    children.push(m);
    return m;
  };
  try {
    const sim = await started(
      _spawn(dir, "regulator-simulator", ["adapters/regulator/simulator/main.ts", "--port", "0", "--fixtures", "config/regulator-fixtures.json"], {}, /^(http:\/\/\S+)$/m, null),
    );
    const simulatorUrl = /^(http:\/\/\S+)$/m.exec(sim.output())![1]!;

    const edgeSecret = randomBytes(24).toString("hex");
    const raw = _topologyConfig(options, { redis, storage: shared.storage, simulatorUrl, edgeSecret, dir });
    const workerPath = join(dir, "worker.json");
    const gatewayPath = join(dir, "gateway.json");
    writeFileSync(workerPath, JSON.stringify(raw));
    // Gateways serve HTTP only; the Stored processor runs in the workers (docs/deployment.md).
    writeFileSync(gatewayPath, JSON.stringify({ ...raw, stored: { ...raw.stored, processor: { ...raw.stored.processor, enabled: false } } }));
    const config = loadConfig({ argv: ["--config", workerPath], env: {} });

    // A gateway's first start listens on a port the kernel picks (one chosen ahead could be taken
    // by any connection's local port before the gateway binds it: EADDRINUSE); a restart takes
    // the same port again, the one nginx's upstream names.
    const ports: number[] = [];
    const startGateway = async (i: number) => {
      const m = await _spawn(dir, `gateway-${i + 1}`, ["boot/main.ts", "--config", gatewayPath], { PORT: String(ports[i] ?? 0) }, /Gatehouse listening on (\S+)/, "");
      ports[i] = Number(new URL(m.address!).port);
      return { ...m, address: `127.0.0.1:${ports[i]}` };
    };
    let workerCount = 0;
    const startWorker = () => _spawn(dir, `worker-${++workerCount}`, ["boot/worker.ts", "--config", workerPath], {}, /Gatehouse worker running/, null);

    // The first gateway seeds the directory alone; the rest start together.
    const gateways = [await started(startGateway(0))];
    gateways.push(...(await Promise.all(Array.from({ length: options.gateways - 1 }, (_, i) => started(startGateway(i + 1))))));
    const workers = await Promise.all(Array.from({ length: options.workers }, () => started(startWorker())));

    const edgePort = await freePort();
    const front = await startNginx(config, { upstreams: ports.map((p) => `127.0.0.1:${p}`), edgeSecret, port: edgePort });
    if (isNginxSkip(front)) throw new Error(front.skip);
    const edge = (nginx = front);
    const store = await shared.open();

    const topology: Topology = {
      dir,
      config,
      edge,
      edgeSecret,
      url: edge.url,
      redis,
      mongo,
      shared,
      simulatorUrl,
      gateways,
      workers,
      store,
      async simulator() {
        const res = await fetch(`${simulatorUrl}/__sim/state`);
        if (!res.ok) throw new Error(`simulator state: HTTP ${res.status}`);
        return (await res.json()) as SimulatorState;
      },
      logs(prefix) {
        return readdirSync(dir)
          .filter((f) => f.startsWith(prefix) && f.endsWith(".log"))
          .map((f) => readFileSync(join(dir, f), "utf8"))
          .join("\n");
      },
      async simulatorFault(route, fault) {
        const res = fault
          ? await fetch(`${simulatorUrl}/__sim/faults`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ route, ...fault }) })
          : await fetch(`${simulatorUrl}/__sim/faults/${route}`, { method: "DELETE" });
        if (!res.ok) throw new Error(`simulator fault ${route}: HTTP ${res.status} ${await res.text()}`);
      },
      async restartGateway(i) {
        if (gateways[i]!.alive()) throw new Error(`gateway-${i + 1} is still running`);
        gateways[i] = await started(startGateway(i));
        return gateways[i]!;
      },
      async addWorker() {
        const w = await started(startWorker());
        workers.push(w);
        return w;
      },
      async close() {
        await Promise.all(children.filter((c) => c !== sim).map((c) => (c.alive() ? c.stop() : null)));
        await edge.stop();
        await store.close().catch(() => undefined);
        await sim.stop();
        await redis.stop();
        await shared.stop();
      },
    };
    return topology;
  } catch (e) {
    await nginx?.stop();
    await Promise.all(children.map((c) => c.kill()));
    await redis.stop();
    await shared.stop();
    throw e;
  }
}

export function isTopologySkip(t: TopologyResult): t is { skip: string } {
  return "skip" in t;
}

/** Makes a missing engine visible outside CI: prints `SKIPPED <what>: <reason>` and reports one skipped test. */
export function reportTopologySkip(what: string, reason: string): void {
  process.stdout.write(`SKIPPED ${what}: ${reason}\n`);
  const s = suite(what);
  s.skip(`${what} (${reason})`, () => {});
  s.run();
}

// --- Internal helpers ---

const START_TIMEOUT_MS = 60_000;

/**
 * The shared config: the demo businesses and keys (test-only plain-text keys), the scale-out
 * profile's edge (its header names, a fresh secret stored as a hash), the shared store + Redis.
 */
function _topologyConfig(
  options: TopologyOptions,
  env: { redis: RedisServerHandle; storage: Record<string, unknown>; simulatorUrl: string; edgeSecret: string; dir: string },
): Record<string, any> {
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  // drainDelayMs above nginx's upstream keep-alive (4 s), as config/scale-out.json has it.
  raw.server = { host: "127.0.0.1", port: 0, shutdownGraceMs: 5_000, drainDelayMs: 5_000 };
  raw.edge = {
    mode: "trusted",
    secretHeader: SCALE_OUT.edge.secretHeader,
    clientAddressHeader: SCALE_OUT.edge.clientAddressHeader,
    secretHash: hashSecret(env.edgeSecret),
  };
  raw.storage = env.storage;
  raw.coordination = { driver: "redis", url: env.redis.url, keyPrefix: `${options.name}:` };
  raw.regulator = { ...raw.regulator, simulator: { enabled: false }, baseUrls: { TEST: env.simulatorUrl, LIVE: env.simulatorUrl } };
  raw.email = { driver: "folder", dir: join(env.dir, "mail") };
  raw.log = { level: options.logLevel ?? "warn", format: "json" };
  raw.stored = { processor: {} };
  options.patch?.(raw);
  return raw;
}

function _spawn(dir: string, name: string, args: string[], env: Record<string, string>, ready: RegExp, address: string | null): Promise<ManagedProcess> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    // A clean environment: no MONGODB_URI, REDIS_URL, PORT or LOG_LEVEL of the test run overrides the config.
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", TMPDIR: process.env.TMPDIR ?? "/tmp", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  trackChild(child);
  const log: WriteStream = createWriteStream(join(dir, `${name}.log`), { flags: "a" });
  let out = "";
  const append = (d: Buffer) => {
    log.write(d);
    // Keep the beginning (readiness line, startup errors) and the latest output.
    out = out.length < 200_000 ? out + d.toString() : out.slice(0, 20_000) + "\n…\n" + (out.slice(-100_000) + d.toString()).slice(-100_000);
  };
  child.stdout!.on("data", append);
  child.stderr!.on("data", append);
  let exit: { code: number | null } | null = null;
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      exit = { code };
      log.end();
      resolve(code);
    }),
  );
  const handle: ManagedProcess = {
    name,
    pid: child.pid!,
    address,
    alive: () => exit === null,
    output: () => out,
    async kill() {
      await killAndWait(child);
    },
    async stop() {
      if (exit !== null) return exit.code;
      child.kill("SIGTERM");
      return exited;
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => void handle.kill().then(() => reject(new Error(`${name} did not start in ${START_TIMEOUT_MS} ms:\n${out}`))), START_TIMEOUT_MS);
    const check = () => {
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        child.stdout!.off("data", check);
        // `address` "": the one the ready line printed (a gateway on a port the kernel picked).
        resolve(address === "" ? { ...handle, address: match[1]! } : handle);
      }
    };
    child.stdout!.on("data", check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}) before it was ready:\n${out}`));
    });
  });
}
