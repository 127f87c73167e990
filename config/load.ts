/**
 * loadConfig: read one JSON file, apply the documented environment overrides, validate with the
 * schema and the cross-field rules, and return a frozen Config. An invalid config throws a
 * ConfigError that lists every problem; boot/main.ts prints it and exits 1.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import * as v from "valibot";
import { ConfigSchema, REGULATOR_CONTRACT_VERSIONS, type Config, type CredentialConfig } from "./schema.ts";
import { invoiceWebhookUrlProblems, webhookUrlProblems } from "./url-rules.ts";

export const DEFAULT_CONFIG_PATH = "config/demo.json";

export class ConfigError extends Error {
  readonly isConfigError = true;
  constructor(
    readonly source: string,
    readonly problems: string[],
  ) {
    super(`invalid config (${source}):\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export interface LoadConfigOptions {
  argv?: readonly string[];
  env?: Record<string, string | undefined>;
  /** Skip the file and use this object (tests). Env overrides still apply. */
  raw?: unknown;
}

/** Environment variables an operator can set; each maps onto one config path. */
export const ENV_OVERRIDES: ReadonlyArray<{ env: string; path: string; type: "string" | "number" | "csv" }> = [
  { env: "PORT", path: "server.port", type: "number" },
  { env: "HOST", path: "server.host", type: "string" },
  { env: "PUBLIC_BASE_URL", path: "server.publicBaseUrl", type: "string" },
  { env: "SHUTDOWN_GRACE_MS", path: "server.shutdownGraceMs", type: "number" },
  { env: "REGULATOR_SIM_PORT", path: "regulator.simulator.port", type: "number" },
  { env: "LOG_LEVEL", path: "log.level", type: "string" },
  { env: "LOG_FORMAT", path: "log.format", type: "string" },
  { env: "DATA_DIR", path: "storage.dir", type: "string" },
  { env: "SQLITE_FILE", path: "storage.file", type: "string" },
  { env: "MONGODB_URI", path: "storage.uri", type: "string" },
  { env: "REDIS_URL", path: "coordination.url", type: "string" },
  { env: "SMTP_PASSWORD", path: "email.password", type: "string" },
  { env: "REGULATOR_API_KEY", path: "regulator.apiKey", type: "string" },
  { env: "REGULATOR_API_SECRET", path: "regulator.apiSecret", type: "string" },
  { env: "REGULATOR_NEXT_API_KEY", path: "regulator.next.apiKey", type: "string" },
  { env: "REGULATOR_NEXT_API_SECRET", path: "regulator.next.apiSecret", type: "string" },
  { env: "ALERT_WEBHOOK_URL", path: "alerts.webhook.url", type: "string" },
  { env: "ALERT_ENVIRONMENT", path: "alerts.environment", type: "string" },
  { env: "ATTESTATION_SEED", path: "attestation.seed", type: "string" },
  { env: "METRICS_PORT", path: "metrics.port", type: "number" },
];

export function configPathFrom(argv: readonly string[], env: Record<string, string | undefined>): string {
  const i = argv.indexOf("--config");
  if (i >= 0 && argv[i + 1]) return argv[i + 1]!;
  const eq = argv.find((a) => a.startsWith("--config="));
  if (eq) return eq.slice("--config=".length);
  return env.GATEHOUSE_CONFIG ?? DEFAULT_CONFIG_PATH;
}

export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const argv = options.argv ?? process.argv.slice(2);
  let source = "inline";
  let raw: unknown = options.raw;
  if (raw === undefined) {
    source = configPathFrom(argv, env);
    raw = _readJson(resolve(source), source);
  }
  const withEnv = _applyEnv(structuredClone(raw), env);
  const parsed = v.safeParse(ConfigSchema, withEnv, { abortEarly: false });
  if (!parsed.success) {
    // Every problem at once: the cross-field rules also run on what did parse.
    throw new ConfigError(source, [
      ...parsed.issues.map((i) => `${v.getDotPath(i) ?? "(root)"}: ${_issueText(i)}`),
      ..._crossCheckPartial(parsed.output),
    ]);
  }
  const problems = crossCheck(parsed.output);
  if (problems.length > 0) throw new ConfigError(source, problems);
  return _deepFreeze(parsed.output);
}

/** Rules the schema cannot express: unique hosts and keys, secrets only where allowed. */
export function crossCheck(config: Config): string[] {
  const problems: string[] = [];
  const hosts = new Map<string, string>();
  const keyIds = new Set<string>();
  const checkCredential = (where: string, c: CredentialConfig) => {
    if (!c.key && !c.keyHash) problems.push(`${where}: needs keyHash (or key on a demoOnly credential)`);
    if (c.key && c.keyHash) problems.push(`${where}: give key or keyHash, not both`);
    if (c.key && !c.demoOnly) problems.push(`${where}: a plain-text key is allowed only with "demoOnly": true; store keyHash instead`);
    if (c.key && !config.demo) problems.push(`${where}: plain-text keys are refused unless the config sets "demo": true`);
    if (keyIds.has(c.id)) problems.push(`${where}: credential id "${c.id}" is used twice`);
    keyIds.add(c.id);
  };
  const businessIds = new Set<string>();
  config.businesses.forEach((b, i) => {
    if (businessIds.has(b.id)) problems.push(`businesses.${i}.id: business "${b.id}" is declared twice`);
    businessIds.add(b.id);
    b.gateway?.apiKeys.forEach((c, j) => checkCredential(`businesses.${i}.gateway.apiKeys.${j}`, c));
    b.collections?.apiKeys.forEach((c, j) => checkCredential(`businesses.${i}.collections.apiKeys.${j}`, c));
    const hook = b.gateway?.webhook;
    if (hook) for (const p of invoiceWebhookUrlProblems(hook.url, b.state)) problems.push(`businesses.${i}.gateway.webhook.url: ${p}`);
    // One approved domain per top-level business (spec §1): a second domain needs its own business.
    if ((b.gateway?.domains.length ?? 0) > 1)
      problems.push(`businesses.${i}.gateway.domains: business "${b.id}" declares ${b.gateway!.domains.length} domains; a top-level business has one approved domain (spec §1), so give each further domain its own business`);
    b.gateway?.domains.forEach((d, j) => {
      const owner = hosts.get(d.host);
      if (owner) problems.push(`businesses.${i}.gateway.domains.${j}.host: "${d.host}" already belongs to ${owner}`);
      hosts.set(d.host, `business "${b.id}"`);
    });
  });
  config.operators.apiKeys.forEach((c, j) => checkCredential(`operators.apiKeys.${j}`, c));
  config.console.viewers.forEach((c, j) => checkCredential(`console.viewers.${j}`, c));
  for (const h of config.collections.hosts) {
    const owner = hosts.get(h);
    if (owner) problems.push(`collections.hosts: "${h}" is also a gateway domain of ${owner}`);
  }
  if (config.edge.mode === "trusted") {
    if (!config.edge.secret && !config.edge.secretHash) problems.push("edge: trusted mode needs secretHash");
    if (config.edge.secret && !config.demo) problems.push('edge.secret: plain-text secrets need "demo": true; use secretHash');
  }
  if (config.alerts.webhook) for (const p of webhookUrlProblems(config.alerts.webhook.url)) problems.push(`alerts.webhook.url: ${p}`);
  for (const state of ["TEST", "LIVE"] as const) {
    const version = config.regulator.contractVersions[state];
    if (!(REGULATOR_CONTRACT_VERSIONS as readonly string[]).includes(version))
      problems.push(
        `regulator.contractVersions.${state}: "${version.slice(0, 16)}" is not a regulator contract version this release supports (${REGULATOR_CONTRACT_VERSIONS.join(", ")}); the integration cannot start`,
      );
  }
  if (config.regulator.next && config.regulator.next.apiKey === config.regulator.apiKey && config.regulator.next.apiSecret === config.regulator.apiSecret)
    problems.push("regulator.next: the next credentials are the current ones; stage different values or remove next");
  if (config.limits.bodyBytes > config.limits.largeBodyBytes)
    problems.push("limits.bodyBytes: must not exceed limits.largeBodyBytes");
  return problems;
}

// --- Internal helpers ---

/** crossCheck on a config that failed the schema (defaults applied, failed values as given). */
function _crossCheckPartial(output: unknown): string[] {
  try {
    return crossCheck(output as Config);
  } catch {
    return []; // too malformed for the cross-field rules; the schema problems say why
  }
}

function _readJson(path: string, source: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError(source, [`cannot read the config file: ${(e as NodeJS.ErrnoException).code ?? "error"}`]);
  }
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new ConfigError(source, [`not valid JSON: ${_jsonErrorText(text, (e as Error).message)}`]);
  }
}

/**
 * JSON.parse's message without the excerpt of the file V8 quotes in some messages
 * (`Unexpected token 'x', "{"key": "sk_li"... is not valid JSON`): the file may hold secrets.
 * The position becomes a line and column.
 */
function _jsonErrorText(text: string, message: string): string {
  const reason = message.split(/, "| in JSON at position /)[0]!.trim() || "syntax error";
  const pos = / at position (\d+)/.exec(message);
  if (!pos) return reason;
  const before = text.slice(0, Number(pos[1]));
  const line = before.split("\n").length;
  const column = before.length - before.lastIndexOf("\n");
  return `${reason} at line ${line}, column ${column}`;
}

function _applyEnv(raw: unknown, env: Record<string, string | undefined>): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  for (const o of ENV_OVERRIDES) {
    const value = env[o.env];
    if (value === undefined || value === "") continue;
    const parsed = o.type === "number" && /^\d+$/.test(value) ? Number(value) : value;
    _setPath(raw as Record<string, unknown>, o.path.split("."), parsed);
  }
  // Driver switches: STORAGE_DRIVER / COORDINATION_DRIVER replace the whole section's driver.
  const r = raw as Record<string, Record<string, unknown> | undefined>;
  if (env.STORAGE_DRIVER) r.storage = { ..._pickFor(env.STORAGE_DRIVER, r.storage), driver: env.STORAGE_DRIVER };
  if (env.COORDINATION_DRIVER)
    r.coordination = { ..._pickFor(env.COORDINATION_DRIVER, r.coordination), driver: env.COORDINATION_DRIVER };
  // DATA_DIR names the embedded database's folder (`<dir>/gatehouse.sqlite`), the "fs" form of the
  // section; SQLITE_FILE, when set too, names the file itself and wins.
  if (r.storage && "dir" in r.storage && (r.storage.driver === undefined || r.storage.driver === "sqlite") && !env.SQLITE_FILE)
    r.storage = { driver: "fs", dir: r.storage.dir };
  if (r.storage?.driver !== "mongodb" && r.storage && "uri" in r.storage) delete r.storage.uri;
  if (r.storage?.driver !== "sqlite" && r.storage && "file" in r.storage) delete r.storage.file;
  if (r.storage?.driver !== "fs" && r.storage && "dir" in r.storage) delete r.storage.dir;
  if (r.coordination?.driver !== "redis" && r.coordination && "url" in r.coordination) delete r.coordination.url;
  return raw;
}

function _pickFor(driver: string, section: Record<string, unknown> | undefined): Record<string, unknown> {
  if (!section || section.driver === driver) return { ...section };
  const keep: Record<string, string[]> = { sqlite: ["file"], fs: ["dir"], mongodb: ["uri", "dbName"], redis: ["url", "keyPrefix", "commandTimeoutMs"] };
  return Object.fromEntries(Object.entries(section).filter(([k]) => keep[driver]?.includes(k)));
}

function _setPath(obj: Record<string, unknown>, path: string[], value: unknown): void {
  let cur = obj;
  for (const key of path.slice(0, -1)) {
    if (typeof cur[key] !== "object" || cur[key] === null) cur[key] = {};
    cur = cur[key] as Record<string, unknown>;
  }
  cur[path[path.length - 1]!] = value;
}

function _issueText(issue: v.BaseIssue<unknown>): string {
  // The received value is left out on purpose: config values may be secrets.
  if (issue.kind === "schema" && issue.received === "undefined") return `required (expected ${issue.expected})`;
  if (issue.type === "strict_object" || issue.expected === "never") return "unknown field";
  // valibot's defaults end in "but received …", or "Received …" when there is no expectation (url).
  return issue.message.replace(/:?\s*(?:but )?received\b.*$/is, "");
}

function _deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const value of Object.values(o)) _deepFreeze(value);
  }
  return o;
}
