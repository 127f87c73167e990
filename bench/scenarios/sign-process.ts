/**
 * The processes of a billed sign run (bench/scenarios/sign.ts, sign-history.ts), as after `npm
 * start`: the regulator simulator in its own process, the gateway compiled by `npm run build` and
 * run as `npm run start:dist` runs it (plain node with the load servers' flags; under the tsx
 * loader with BENCH_TSX=1 or a CPU profile), listening for the inspector on a free loopback port so
 * the bench can ask for a full collection; for `mongodb-redis` a private redis-server and the
 * MongoDB-wire server (jongodb, or MONGODB_URI / REDIS_URL).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildDist } from "../../scripts/build.ts";
import { isMongoSkip, startMongoServer } from "../../test/support/mongo-server.ts";
import { isRedisSkip, startRedisServer } from "../../test/support/redis-server.ts";
import { BUILD_DIR, serverNodeFlags } from "../build.ts";
import { ROOT, spawnListening, stopProcess, type Listening } from "../processes.ts";
import { signGatewayConfig } from "./sign-gateway.ts";

/** `memory`: SQLite in memory; `sqlite`: the embedded default, an SQLite file (fsync per commit); `mongodb-redis`: the scale-out stores. */
export type SignStore = "memory" | "sqlite" | "mongodb-redis";

export const SIGN_STORES: readonly SignStore[] = ["memory", "sqlite", "mongodb-redis"];

export interface SignGatewayOptions {
  store: SignStore;
  /** A scratch folder (config, database, mail), removed by the caller. */
  dir: string;
  /** Run the gateway with `--cpu-prof` into this folder. */
  cpuProfDir?: string;
  /** More node flags for the gateway process. */
  nodeArgs?: string[];
}

export interface SignGateway {
  gateway: Listening;
  simulator: Listening;
  /** Stops every process it started (the gateway first). */
  close(): Promise<void>;
}

export async function startSignGateway(options: SignGatewayOptions): Promise<SignGateway> {
  const cleanups: Array<() => Promise<void>> = [];
  const close = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => {});
  };
  try {
    const storage: Record<string, unknown> =
      options.store === "memory" ? { driver: "memory" } : options.store === "sqlite" ? { driver: "sqlite", file: join(options.dir, "data", "gatehouse.sqlite") } : {};
    let coordination: Record<string, unknown> = { driver: "memory" };
    if (options.store === "mongodb-redis") {
      const redis = await startRedisServer();
      if (isRedisSkip(redis)) throw new Error(`bench: sign-mongodb-redis needs Redis: ${redis.skip}`);
      cleanups.push(() => redis.stop());
      const mongo = await startMongoServer();
      if (isMongoSkip(mongo)) throw new Error(`bench: sign-mongodb-redis needs a MongoDB-wire server: ${mongo.skip}`);
      cleanups.push(() => mongo.stop());
      Object.assign(storage, { driver: "mongodb", uri: mongo.uri, dbName: mongo.dbName() });
      coordination = { driver: "redis", url: redis.url, keyPrefix: `signbench${process.pid}:` };
    }

    const simulator = await spawnListening("regulator simulator", [join(ROOT, "adapters/regulator/simulator/main.ts"), "--port", "0"], /^(http:\/\/\S+)$/m);
    cleanups.push(() => stopProcess(simulator.child));

    const configPath = join(options.dir, "config.json");
    const config = signGatewayConfig(storage, coordination, simulator.url, options.dir);
    // jongodb answers an insert in hundreds of ms once a collection holds a few thousand documents
    // (docs/bench.md): a longer store deadline measures it instead of failing on the 2 s default.
    if (options.store === "mongodb-redis" && !process.env.MONGODB_URI) config.dependencies = { storeTimeoutMs: 30_000 };
    writeFileSync(configPath, JSON.stringify(config));
    const nodeArgs = ["--inspect=127.0.0.1:0", ...(options.nodeArgs ?? [])];
    if (options.cpuProfDir) {
      mkdirSync(options.cpuProfDir, { recursive: true });
      nodeArgs.push("--cpu-prof", `--cpu-prof-dir=${options.cpuProfDir}`);
    }
    const tsx = !!options.cpuProfDir || process.env.BENCH_TSX === "1";
    const entry = tsx ? join(ROOT, "boot/main.ts") : (await buildDist(join(BUILD_DIR, "gatehouse"))).main;
    const gateway = await spawnListening("gateway", [entry, "--config", configPath], /listening on (http:\/\/\S+)/, {
      tsx,
      nodeArgs: tsx ? nodeArgs : [...serverNodeFlags(), ...nodeArgs],
    });
    cleanups.push(() => stopProcess(gateway.child));
    return { gateway, simulator, close };
  } catch (e) {
    await close();
    throw e;
  }
}
