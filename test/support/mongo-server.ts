/**
 * A MongoDB-wire server for adapter tests (ARCHITECTURE.md §5 "MongoDB, honestly").
 *
 * - `MONGODB_URI` set: that server is used as is (`owned: false`, `stop()` is a no-op, `pause()` /
 *   `resume()` throw: an outage cannot be simulated on a server we do not own). Every
 *   `dbName()` call returns a fresh database name unique to this run, so runs never share data.
 * - Otherwise the jongodb binary of the npm package `@jongodb/memory-server-bin-linux-x64-gnu` is
 *   spawned on a free port as a single-node replica set (`rs0`), the topology production uses; it
 *   prints `JONGODB_URI=mongodb://127.0.0.1:PORT/test?replicaSet=rs0`. The returned URI adds
 *   `serverMonitoringMode=poll`: jongodb's replica-set profile breaks the driver's streaming
 *   (`moreToCome`) server monitoring under load ("Server ended moreToCome unexpectedly" clears the
 *   pool and fails ~25–80 % of 1 000 parallel inserts), polling is reliable. `pause()` / `resume()`
 *   SIGSTOP / SIGCONT it (a hung store). `stop()` kills it; so does
 *   the exit of this process (the child is unref'd: it never keeps the test process alive).
 * - `JONGODB_BIN` overrides the binary's path.
 * - No binary (not installed, or not linux-x64-gnu): throws when `CI === "true"` (CI must fail
 *   loudly), otherwise resolves `{ skip: reason }` so the caller can report a visible skip.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { killAndWait, trackChild } from "./child-process.ts";

export interface MongoServerHandle {
  uri: string;
  /** True when the server was spawned by this helper. */
  owned: boolean;
  /** A database name unique to this call (use one per test or per suite). */
  dbName(): string;
  stop(): Promise<void>;
  /** SIGSTOPs the spawned server: connections stay open but nothing answers (a hung store). Throws for MONGODB_URI. */
  pause(): Promise<void>;
  /** SIGCONTs a paused server. */
  resume(): Promise<void>;
}

export interface MongoServerSkip {
  skip: string;
}

const JONGODB_BIN = fileURLToPath(
  new URL("../../node_modules/@jongodb/memory-server-bin-linux-x64-gnu/bin/jongodb", import.meta.url),
);

export async function startMongoServer(): Promise<MongoServerHandle | MongoServerSkip> {
  const external = process.env.MONGODB_URI;
  if (external) {
    const unsupported = async (): Promise<void> => {
      throw new Error("[mongo-server] pause()/resume() are not supported with an external MONGODB_URI");
    };
    return { uri: external, owned: false, dbName: _uniqueDbName, stop: async () => {}, pause: unsupported, resume: unsupported };
  }

  const bin = process.env.JONGODB_BIN || JONGODB_BIN;
  try {
    accessSync(bin, constants.X_OK);
  } catch {
    const reason = `jongodb binary not found at ${bin} (npm install @jongodb/memory-server-bin-linux-x64-gnu, linux-x64-gnu only) and MONGODB_URI is not set`;
    if (process.env.CI === "true") throw new Error(`[mongo-server] ${reason}; CI=true so this is a failure, not a skip`);
    return { skip: reason };
  }

  const { child, uri } = await _spawnJongodb(bin);
  return {
    uri,
    owned: true,
    dbName: _uniqueDbName,
    stop: () => killAndWait(child),
    pause: async () => {
      child.kill("SIGSTOP");
    },
    resume: async () => {
      child.kill("SIGCONT");
    },
  };
}

export function isMongoSkip(x: MongoServerHandle | MongoServerSkip): x is MongoServerSkip {
  return "skip" in x;
}

// --- Internal helpers ---

const READY_TIMEOUT_MS = 10_000;
const _RUN_ID = `${process.pid}_${randomBytes(3).toString("hex")}`;
let _dbCounter = 0;

function _uniqueDbName(): string {
  return `gatehouse_test_${_RUN_ID}_${++_dbCounter}`;
}

async function _spawnJongodb(bin: string): Promise<{ child: ChildProcess; uri: string }> {
  const args = ["--port=0", "--topology-profile=singleNodeReplicaSet", "--replica-set-name=rs0"];
  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child);

  let output = "";
  let timer: NodeJS.Timeout | undefined;
  try {
    const uri = await new Promise<string>((resolve, reject) => {
      const onData = (d: Buffer): void => {
        output += d.toString();
        const m = /JONGODB_URI=(\S+)/.exec(output);
        if (m) resolve(m[1]!);
      };
      child.stdout?.on("data", onData);
      child.stderr?.on("data", onData);
      child.once("error", reject);
      child.once("exit", (code, signal) =>
        reject(new Error(`[mongo-server] jongodb exited before ready (code ${code}, signal ${signal}):\n${output.slice(-2000)}`)),
      );
      timer = setTimeout(
        () => reject(new Error(`[mongo-server] jongodb printed no JONGODB_URI after ${READY_TIMEOUT_MS} ms:\n${output.slice(-2000)}`)),
        READY_TIMEOUT_MS,
      );
    });
    // Keep draining the pipes (jongodb logs client disconnects) so the child never blocks on them.
    child.stdout?.removeAllListeners("data").resume();
    child.stderr?.removeAllListeners("data").resume();
    child.unref();
    (child.stdout as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    (child.stderr as (NodeJS.ReadableStream & { unref?: () => void }) | null)?.unref?.();
    return { child, uri: _withParam(uri, "serverMonitoringMode", "poll") };
  } catch (e) {
    await killAndWait(child);
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

function _withParam(uri: string, key: string, value: string): string {
  return `${uri}${uri.includes("?") ? "&" : "?"}${key}=${value}`;
}
