/**
 * What the CLI prints: tables and records for people (consola), the Admin API's JSON as it came for
 * scripts (`--json`), and problems with their code, detail, violations and how to retry.
 */
import { createConsola } from "consola";
import { COMMANDS, type Command, type Flags } from "./commands.ts";

/**
 * The CLI's consola: the fancy reporter everywhere (also under CI, where consola's basic reporter
 * would put `[log]` before every table), no timestamps.
 */
export const consola = createConsola({ fancy: true, formatOptions: { date: false } });

export function usage(): string {
  const lines = [
    "gatehouse: the operator CLI of the Gatehouse gateway (docs/operations.md)",
    "",
    "usage: npx gatehouse <command> [arguments] [flags]",
    "",
    "  config check FILE                       validate a config file, list every problem (no gateway needed)",
    "  config sync FILE                        make the directory's store match FILE exactly (opens the store FILE names)",
    "  backup FILE                             a consistent copy of the SQLite database while the gateways serve (--config CONFIG)",
    "  restore BACKUP                          replace the SQLite database by BACKUP; every gateway and worker stopped (--config CONFIG)",
    "  import [DIR]                            import an older release's .data/ folder into the SQLite database, once (--config CONFIG)",
  ];
  for (const c of COMMANDS) {
    const head = [c.group, c.action, ...c.args].join(" ");
    lines.push(`  ${head.padEnd(39)} ${c.summary}`);
    if (c.flags) lines.push(`  ${"".padEnd(39)}   ${c.flags}`);
  }
  lines.push(
    "",
    "flags for every Admin API command:",
    "  --url URL               the gateway (env GATEHOUSE_URL; default http://127.0.0.1:3000)",
    "  --admin-key KEY         the operator key, x-admin-api-key (env GATEHOUSE_ADMIN_KEY)",
    "  --edge-secret SECRET    behind a trusted edge: its shared secret (env GATEHOUSE_EDGE_SECRET;",
    "                          header --edge-header / GATEHOUSE_EDGE_HEADER, default x-gatehouse-edge-secret)",
    "  --idempotency-key KEY   for a mutation (default: a new one, printed; reuse it to retry safely)",
    "  --limit N --cursor C    pages of a list",
    "  --timeout SECONDS       how long to wait for the gateway (default 15)",
    "  --json                  the Admin API's JSON answer, for scripts",
    "",
    "exit codes: 0 done, 1 the gateway answered an error (or the config is invalid), 2 usage, 3 gateway unreachable",
  );
  return lines.join("\n");
}

export function printResult(command: Command, body: any, flags: Flags, idempotencyKey: string | null): void {
  if (flags.json) {
    process.stdout.write(JSON.stringify(body, null, 2) + "\n");
    return;
  }
  const view = command.view;
  if (view.kind === "table") {
    if (command.group === "wallet") consola.log(`${body.businessId}: balance NGN ${body.balance.toFixed(2)}`);
    const rows = view.rows ? view.rows(body) : (body.data as Record<string, unknown>[]);
    consola.log(rows.length === 0 ? "(none)" : table(rows, view.columns));
    if (body.nextCursor) consola.info(`more: add --cursor ${body.nextCursor}`);
    return;
  }
  const { plainKey, ...fields } = (view.pick ? view.pick(body) : body) as Record<string, unknown>;
  consola.log(fieldsText(fields));
  // Keys: the value is in the first answer only (a replay answers null).
  if (typeof plainKey === "string") consola.warn(`the key (shown once, store it now): ${plainKey}`);
  else if (plainKey === null) consola.info("the key's value is shown only in the first answer; roll the key if you did not keep it");
  if (idempotencyKey) consola.success(`done (idempotency key ${idempotencyKey})`);
}

export function printError(problem: any, flags: Flags, idempotencyKey: string | null): void {
  if (flags.json) {
    process.stdout.write(JSON.stringify(problem, null, 2) + "\n");
    return;
  }
  const status = problem?.status ?? problem?.statusCode ?? "?";
  consola.error(`${status} ${problem?.code ?? ""}: ${problem?.detail ?? problem?.message ?? "the gateway answered an error"}`.replace(" :", ":"));
  for (const v of problem?.errors ?? []) consola.log(`  - ${v.location} ${v.pointer ?? v.field ?? ""}: ${v.code} ${v.detail}`);
  if (idempotencyKey && problem?.retry?.sameIdempotencyKey)
    consola.info(`retry with the same idempotency key: --idempotency-key ${idempotencyKey}`);
  if (problem?.requestId) consola.info(`request id ${problem.requestId}`);
}

/** Rows as an aligned text table (values on one line, long ones cut). */
export function table(rows: readonly Record<string, unknown>[], columns: readonly string[]): string {
  const cells = rows.map((r) => columns.map((c) => _cell(r[c])));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)));
  const line = (values: readonly string[]) => values.map((v, i) => v.padEnd(widths[i]!)).join("  ").trimEnd();
  return [line(columns), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

function fieldsText(record: Record<string, unknown>): string {
  const width = Math.max(...Object.keys(record).map((k) => k.length));
  return Object.entries(record)
    .map(([k, v]) => `${k.padEnd(width)}  ${_cell(v, 200)}`)
    .join("\n");
}

function _cell(value: unknown, max = 60): string {
  const text =
    value === null || value === undefined
      ? "-"
      : Array.isArray(value)
        ? value.map((v) => (typeof v === "object" ? JSON.stringify(v) : String(v))).join(",") || "-"
        : typeof value === "object"
          ? JSON.stringify(value)
          : String(value);
  return text.length > max ? text.slice(0, max - 1) + "…" : text;
}
