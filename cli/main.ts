/**
 * The operator CLI: `npx gatehouse <command>` (bin/gatehouse.js). Every command but `config`,
 * `backup`, `restore` and `import` (local: ./config.ts, ./storage.ts) talks to the Admin API of a running gateway (docs/operations.md "CLI"): base URL and operator key from
 * flags or the environment, tables for people, `--json` for scripts. Exit codes: 0 done, 1 the
 * gateway answered an error (or the config file is invalid), 2 a usage error, 3 the gateway could
 * not be reached.
 */
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { COMMANDS, type Command, type Flags } from "./commands.ts";
import { clearSimulatorFaults } from "./demo.ts";
import { consola, printError, printResult, usage } from "./output.ts";

export const EXIT = { ok: 0, failed: 1, usage: 2, unreachable: 3 } as const;

export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    consola.error((e as Error).message);
    consola.log(usage());
    return EXIT.usage;
  }
  const flags = parsed.values as Flags;
  const [group, action, ...args] = parsed.positionals;
  if (flags.help || !group) {
    consola.log(usage());
    return flags.help ? EXIT.ok : EXIT.usage;
  }

  const local = await _localCommand(group, action, args, flags);
  if (local !== null) return local;

  const command: Command | undefined = COMMANDS.find((c) => c.group === group && c.action === action);
  if (!command) return _usageError(`unknown command "${[group, action].filter(Boolean).join(" ")}"`);
  if (args.length !== command.args.length) return _usageError(`${command.group} ${command.action} ${command.args.join(" ")}`);

  let request;
  try {
    request = command.request(args, flags);
  } catch (e) {
    return _usageError((e as Error).message);
  }
  const timeoutSeconds = Number(flags.timeout ?? 15);
  if (!(timeoutSeconds > 0 && timeoutSeconds <= 600)) return _usageError("--timeout takes seconds, 1 to 600");
  const url = flags.url ?? (process.env.GATEHOUSE_URL || `http://127.0.0.1:${process.env.PORT || 3000}`);
  const adminKey = flags["admin-key"] ?? process.env.GATEHOUSE_ADMIN_KEY;
  if (!adminKey) return _usageError("the operator key is needed: --admin-key KEY or GATEHOUSE_ADMIN_KEY");
  const headers: Record<string, string> = { "x-admin-api-key": adminKey, accept: "application/json" };
  const edgeSecret = flags["edge-secret"] ?? process.env.GATEHOUSE_EDGE_SECRET;
  if (edgeSecret) headers[flags["edge-header"] ?? process.env.GATEHOUSE_EDGE_HEADER ?? "x-gatehouse-edge-secret"] = edgeSecret;
  if (request.method !== "GET") {
    headers["x-idempotency-key"] = flags["idempotency-key"] ?? `cli-${randomUUID()}`;
    headers["content-type"] = "application/json";
  }

  let res: Response;
  try {
    res = await fetch(new URL(request.path, url), {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutSeconds * 1000),
    });
  } catch (e) {
    consola.error(`cannot reach the gateway at ${url}: ${(e as Error).cause instanceof Error ? ((e as Error).cause as Error).message : (e as Error).message}`);
    return EXIT.unreachable;
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    body = { status: res.status, detail: text.slice(0, 500) };
  }
  if (!res.ok) {
    printError(body, flags, headers["x-idempotency-key"] ?? null);
    return EXIT.failed;
  }
  printResult(command, body, flags, headers["x-idempotency-key"] ?? null);
  if (command.group === "demo") await clearSimulatorFaults(flags);
  return EXIT.ok;
}

const OPTIONS = {
  help: { type: "boolean", short: "h" },
  json: { type: "boolean" },
  url: { type: "string" },
  "admin-key": { type: "string" },
  "edge-secret": { type: "string" },
  "edge-header": { type: "string" },
  "idempotency-key": { type: "string" },
  timeout: { type: "string" },
  business: { type: "string" },
  scheme: { type: "string" },
  status: { type: "string" },
  approval: { type: "string" },
  id: { type: "string" },
  ip: { type: "string", multiple: true },
  "expires-at": { type: "string" },
  "old-expires-at": { type: "string" },
  "old-expires-in": { type: "string" },
  mode: { type: "string" },
  "sign-fee": { type: "string" },
  "auto-transmit": { type: "string" },
  amount: { type: "string" },
  reference: { type: "string" },
  decision: { type: "string" },
  target: { type: "string" },
  action: { type: "string" },
  outcome: { type: "string" },
  limit: { type: "string" },
  cursor: { type: "string" },
  config: { type: "string" },
  "sim-url": { type: "string" },
} as const;

/**
 * The commands run in this process on local files (`config`, `backup`, `restore`, `import`); null
 * for an Admin API command. Their modules load only here: the Admin API commands never load the
 * config schema or the adapters.
 */
async function _localCommand(group: string, action: string | undefined, args: string[], flags: Flags): Promise<number | null> {
  if (group === "config") {
    const file = args[0];
    if ((action !== "check" && action !== "sync") || !file || args.length > 1) return _usageError("config check FILE | config sync FILE");
    const { checkConfig, syncConfig } = await import("./config.ts");
    return action === "check" ? checkConfig(file, flags) : syncConfig(file, flags);
  }
  if (group === "backup" || group === "restore" || group === "import") {
    // One positional at most: the file (backup, restore) or the folder (import, optional).
    const files = action === undefined ? [] : [action, ...args];
    if (group === "import" ? files.length > 1 : files.length !== 1) return _usageError(group === "import" ? "import [DIR]" : `${group} ${group === "backup" ? "FILE" : "BACKUP"}`);
    const { runStorageCommand } = await import("./storage.ts");
    return runStorageCommand(group, files, flags);
  }
  return null;
}

function _usageError(message: string): number {
  consola.error(`usage: ${message}`);
  consola.log("run `npx gatehouse --help` for every command");
  return EXIT.usage;
}

// Run as the CLI (bin/gatehouse.js imports this module).
process.exitCode = await main(process.argv.slice(2));
