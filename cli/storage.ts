/**
 * The CLI's commands on the embedded database (docs/operations.md "Backup and restore"), run in
 * this process on the file the config names (`--config FILE`, else GATEHOUSE_CONFIG, else
 * config/demo.json; environment overrides applied as `npm start` applies them):
 *   backup FILE      a consistent copy while the gateways serve (a new file: never overwrites)
 *   restore BACKUP   the database replaced by BACKUP (refused while a gateway or worker has it open)
 *   import [DIR]     an older release's `.data/` folder imported once (counts per collection)
 * Exit 0 done, 1 failed (the message says why and what to do).
 */
import { ConfigError, configPathFrom, loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Flags } from "./commands.ts";
import { consola, table } from "./output.ts";

export type StorageCommand = "backup" | "restore" | "import";

/** `args`: the command's one argument (a file), or none for `import` (its folder is optional). */
export async function runStorageCommand(command: StorageCommand, args: readonly string[], flags: Flags): Promise<number> {
  const config = _config(flags);
  if (!config) return 1;
  // The composition root's commands: loaded only here (they load the SQLite adapter).
  const ops = await import("../boot/storage-commands.ts");
  try {
    if (command === "backup") return _print(flags, "backed up", ops.backupStorage(config, args[0]!));
    if (command === "restore") {
      const r = ops.restoreStorage(config, args[0]!);
      return _print(flags, `restored from ${r.from}${r.previous ? ` (the database it replaced is kept as ${r.previous})` : ""}`, r);
    }
    const r = ops.importStorage(config, args[0]);
    const what = r.alreadyImported ? `already imported from ${r.from} on ${r.importedAt}: nothing done` : `imported from ${r.from}`;
    return _print(flags, `${what} (${r.skipped.length} unreadable entries skipped)`, { ...r, bytes: undefined });
  } catch (e) {
    if (flags.json) process.stdout.write(JSON.stringify({ ok: false, error: (e as Error).message }, null, 2) + "\n");
    else consola.error((e as Error).message);
    return 1;
  }
}

// --- Internal helpers ---

function _config(flags: Flags): Config | null {
  const path = flags.config ?? configPathFrom([], process.env);
  try {
    return loadConfig({ argv: ["--config", path] });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    consola.error(e.message);
    return null;
  }
}

function _print(flags: Flags, what: string, report: { file: string; documents: number; collections: Record<string, number>; bytes?: number; ms: number }): number {
  if (flags.json) {
    process.stdout.write(JSON.stringify({ ok: true, ...report }, null, 2) + "\n");
    return 0;
  }
  const size = report.bytes === undefined ? "" : `, ${(report.bytes / 1024 / 1024).toFixed(1)} MiB`;
  consola.success(`${report.file}: ${what}: ${report.documents} documents${size}, ${report.ms} ms`);
  const rows = Object.entries(report.collections).map(([collection, documents]) => ({ collection, documents }));
  if (rows.length > 0) consola.log(table(rows, ["collection", "documents"]));
  return 0;
}
