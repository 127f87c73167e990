/**
 * Renders `deploy/nginx.conf` (the edge's nginx config) from a gateway config file, so the edge's
 * limits are the gateway's and its header names are the ones the gateway checks
 * (docs/deployment.md). The test topology and the capacity bench render it the same way.
 *
 *   GATEHOUSE_EDGE_SECRET='…' npx tsx deploy/nginx.ts --config config/scale-out.json \
 *     --upstream 10.0.1.11:3000 --upstream 10.0.1.12:3000 [--listen 80] [--server-name '_'] \
 *     [--access-log /var/log/nginx/gatehouse.access.log] > /etc/nginx/conf.d/gatehouse.conf
 *
 * The secret comes from the environment (never an argument: it would show in `ps`), and must match
 * the config's `edge.secretHash`. A config whose edge is not "trusted" is refused: such a gateway
 * would ignore every header the edge sets.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import { hashSecret } from "../core/directory.ts";
import { KEEP_ALIVE_TIMEOUT_MS } from "../core/server.ts";

export const NGINX_TEMPLATE_PATH = new URL("./nginx.conf", import.meta.url);

export interface NginxEdgeOptions {
  /** `host:port` of each gateway process. */
  upstreams: readonly string[];
  /** The shared secret whose sha256 is the config's `edge.secretHash`. */
  edgeSecret: string;
  /** nginx `listen` value. Default "80". */
  listen?: string;
  /** nginx `server_name` value. Default "_" (any host: the gateway decides what it serves). */
  serverName?: string;
  /** Access log path. Default /var/log/nginx/gatehouse.access.log. */
  accessLog?: string;
  /** Per gateway: failures before nginx skips it, and for how long. Default 1 and 5 s. */
  maxFails?: number;
  failTimeoutSeconds?: number;
}

/** The values of the template's `${GATEHOUSE_*}` placeholders, derived from the gateway config. */
export function nginxValues(config: Config, options: NginxEdgeOptions): Record<string, string> {
  const edge = config.edge;
  if (edge.mode !== "trusted")
    throw new Error('edge.mode is "direct": the gateway would ignore the edge headers; use "trusted" (docs/deployment.md)');
  const expected = edge.secretHash ?? hashSecret(edge.secret!);
  if (hashSecret(options.edgeSecret) !== expected) throw new Error("the edge secret does not match the config's edge.secretHash");
  if (options.upstreams.length === 0) throw new Error("at least one upstream gateway (host:port) is needed");
  for (const u of options.upstreams) if (!/^[A-Za-z0-9.\-:[\]]+:\d{1,5}$/.test(u)) throw new Error(`upstream "${u}" is not host:port`);
  if (/["\\$;\r\n]/.test(options.edgeSecret)) throw new Error('the edge secret must not contain ", \\, $, ; or line breaks');
  const server = config.server;
  const maxFails = options.maxFails ?? 1;
  const failTimeout = options.failTimeoutSeconds ?? 5;
  // A header buffer must hold the longest request line (method + target + version) and the longest
  // header line the gateway accepts; nginx then refuses nothing the gateway would answer itself.
  const bufferBytes = Math.max(server.maxHeaderBytes, server.maxUriLength + 64);
  return {
    GATEHOUSE_UPSTREAM_SERVERS: options.upstreams.map((u) => `server ${u} max_fails=${maxFails} fail_timeout=${failTimeout}s;`).join(" "),
    GATEHOUSE_UPSTREAM_KEEPALIVE_TIMEOUT: `${KEEP_ALIVE_TIMEOUT_MS - 1_000}ms`,
    GATEHOUSE_LISTEN: options.listen ?? "80",
    GATEHOUSE_SERVER_NAME: options.serverName ?? "_",
    GATEHOUSE_ACCESS_LOG: options.accessLog ?? "/var/log/nginx/gatehouse.access.log",
    GATEHOUSE_CLIENT_MAX_BODY_SIZE: String(config.limits.largeBodyBytes),
    GATEHOUSE_LARGE_HEADER_BUFFERS: `4 ${Math.ceil(bufferBytes / 1024)}k`,
    GATEHOUSE_CLIENT_HEADER_TIMEOUT: `${server.headerReadTimeoutMs}ms`,
    GATEHOUSE_CLIENT_BODY_TIMEOUT: `${server.bodyReadTimeoutMs}ms`,
    GATEHOUSE_PROXY_READ_TIMEOUT: `${Math.max(60_000, 2 * config.regulator.timeoutMs + 30_000)}ms`,
    GATEHOUSE_EDGE_SECRET_HEADER: edge.secretHeader,
    GATEHOUSE_EDGE_SECRET: options.edgeSecret,
    GATEHOUSE_CLIENT_ADDRESS_HEADER: edge.clientAddressHeader,
  };
}

/** `deploy/nginx.conf` with every placeholder filled; an unknown or unfilled placeholder throws. */
export function renderNginxConf(config: Config, options: NginxEdgeOptions, template = readFileSync(NGINX_TEMPLATE_PATH, "utf8")): string {
  const values = nginxValues(config, options);
  const used = new Set<string>();
  const out = template.replace(/\$\{(GATEHOUSE_[A-Z_]+)\}/g, (_, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`deploy/nginx.conf names an unknown placeholder \${${name}}`);
    used.add(name);
    return value;
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length > 0) throw new Error(`deploy/nginx.conf lacks placeholders: ${unused.join(", ")}`);
  return out;
}

// --- CLI ---

function _main(): void {
  const { values } = parseArgs({
    options: {
      config: { type: "string" },
      upstream: { type: "string", multiple: true },
      listen: { type: "string" },
      "server-name": { type: "string" },
      "access-log": { type: "string" },
    },
    strict: true,
  });
  const secret = process.env.GATEHOUSE_EDGE_SECRET;
  if (!secret) throw new Error("set GATEHOUSE_EDGE_SECRET (the edge's shared secret) in the environment");
  const config = loadConfig({ argv: values.config ? ["--config", values.config] : [] });
  process.stdout.write(
    renderNginxConf(config, {
      upstreams: values.upstream ?? [],
      edgeSecret: secret,
      ...(values.listen ? { listen: values.listen } : {}),
      ...(values["server-name"] ? { serverName: values["server-name"] } : {}),
      ...(values["access-log"] ? { accessLog: values["access-log"] } : {}),
    }),
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    _main();
  } catch (e) {
    process.stderr.write(`deploy/nginx.ts: ${(e as Error).message}\n`);
    process.exit(1);
  }
}
