/**
 * A real nginx (Debian package) as the trusted edge, for the topology test and the capacity bench.
 *
 * The product file `deploy/nginx.conf` is rendered from the gateway's config by `deploy/nginx.ts`
 * (the same renderer operators run) and included in a small main config that only adds what a
 * test instance needs: a private prefix for the pid, error log and temp paths, and one process
 * (`master_process off`): SIGKILLing it, as the exit hook of test/support/child-process.ts does,
 * leaves no orphaned worker holding the port.
 *
 * - `nginx` not found (`NGINX_BIN`, else PATH, else /usr/sbin): throws when `CI === "true"` (CI
 *   must fail loudly), otherwise resolves `{ skip: reason }`.
 * - `accessLog()` reads the edge's JSON access log (format `gatehouse_edge` of deploy/nginx.conf).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { delimiter, join } from "node:path";
import type { Config } from "../../config/schema.ts";
import { renderNginxConf } from "../../deploy/nginx.ts";
import { killAndWait, trackChild } from "./child-process.ts";
import { tempDir } from "./temp.ts";

export interface NginxHandle {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The rendered deploy/nginx.conf this instance runs. */
  conf: string;
  /** The access log, one parsed object per request so far. */
  accessLog(): EdgeLogLine[];
  stop(): Promise<void>;
}

export interface NginxSkip {
  skip: string;
}

/** One line of the `gatehouse_edge` access log. */
export interface EdgeLogLine {
  time: string;
  /** When the request ended (epoch seconds, millisecond resolution); it started `requestTime` seconds before. */
  msec: number;
  requestTime: number;
  host: string;
  method: string;
  uri: string;
  status: number;
  /** "127.0.0.1:41234", several comma-separated when nginx tried more than one gateway, "" when none. */
  upstream: string;
  upstreamStatus: string;
  requestId: string;
  callerRequestId: string;
}

export async function startNginx(config: Config, options: { upstreams: string[]; edgeSecret: string; port: number }): Promise<NginxHandle | NginxSkip> {
  const missing = nginxMissing();
  if (missing) return { skip: missing };
  const bin = findNginx()!;
  const dir = tempDir("nginx");
  const accessLogPath = join(dir, "access.log");
  const conf = renderNginxConf(config, {
    upstreams: options.upstreams,
    edgeSecret: options.edgeSecret,
    listen: `127.0.0.1:${options.port}`,
    accessLog: accessLogPath,
  });
  writeFileSync(join(dir, "gatehouse.conf"), conf);
  const main = join(dir, "nginx.conf");
  writeFileSync(
    main,
    [
      `pid ${join(dir, "nginx.pid")};`,
      `error_log ${join(dir, "error.log")} warn;`,
      "daemon off;",
      "master_process off;",
      "events { worker_connections 4096; }",
      "http {",
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((p) => `  ${p}_temp_path ${join(dir, p)};`),
      "  access_log off;",
      `  include ${join(dir, "gatehouse.conf")};`,
      "}",
      "",
    ].join("\n"),
  );
  const args = ["-p", dir, "-c", main];
  const check = spawnSync(bin, ["-t", ...args], { encoding: "utf8" });
  if (check.status !== 0) throw new Error(`[nginx] the rendered config is invalid:\n${check.stderr}`);

  const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  trackChild(child);
  await _listening(child, options.port, () => _read(join(dir, "error.log")));
  return {
    url: `http://127.0.0.1:${options.port}`,
    port: options.port,
    conf,
    accessLog: () =>
      _read(accessLogPath)
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as EdgeLogLine),
    stop: () => killAndWait(child),
  };
}

export function isNginxSkip(x: NginxHandle | NginxSkip): x is NginxSkip {
  return "skip" in x;
}

/** Why nginx cannot run here, or null. With `CI=true` a missing nginx throws: CI must fail loudly. */
export function nginxMissing(): string | null {
  if (findNginx()) return null;
  const reason = "nginx not found (NGINX_BIN, PATH or /usr/sbin/nginx; install Debian's: apt-get install nginx)";
  if (process.env.CI === "true") throw new Error(`[nginx] ${reason}; CI=true so this is a failure, not a skip`);
  return reason;
}

/** The nginx binary (`NGINX_BIN`, else PATH, else Debian's /usr/sbin/nginx), or null. */
export function findNginx(): string | null {
  const dirs = (process.env.PATH ?? "").split(delimiter).filter(Boolean);
  const candidates = process.env.NGINX_BIN ? [process.env.NGINX_BIN] : [...dirs.map((d) => join(d, "nginx")), "/usr/sbin/nginx"];
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  return null;
}

// --- Internal helpers ---

const READY_TIMEOUT_MS = 10_000;

function _read(path: string): string {
  return existsSync(path) ? readFileSync(path, "utf8") : "";
}

async function _listening(child: ChildProcess, port: number, errors: () => string): Promise<void> {
  let exited: string | null = null;
  let out = "";
  child.stdout?.on("data", (d) => (out += d));
  child.stderr?.on("data", (d) => (out += d));
  child.once("exit", (code, signal) => (exited = `code ${code}, signal ${signal}`));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!(await _accepts(port))) {
    if (exited !== null || Date.now() > deadline) {
      await killAndWait(child);
      throw new Error(`[nginx] not listening on ${port} (${exited ?? "timeout"}):\n${out}${errors().slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

function _accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}
