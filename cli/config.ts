/**
 * The CLI's local commands on a config file: `config check FILE` validates it (every problem listed,
 * exit 1) without a gateway; `config sync FILE` makes the directory's store match the file exactly
 * (as `npm start -- --sync` does at boot), announcing each change to the running gateways.
 */
import { ConfigError, loadConfig } from "../config/load.ts";
import type { Config } from "../config/schema.ts";
import type { Flags } from "./commands.ts";
import { consola, table } from "./output.ts";

/** Validates FILE as written (environment overrides are not applied). */
export function checkConfig(file: string, flags: Flags): number {
  let config: Config;
  try {
    config = loadConfig({ argv: ["--config", file], env: {} });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    if (flags.json) process.stdout.write(JSON.stringify({ valid: false, file, problems: e.problems }, null, 2) + "\n");
    else {
      consola.error(`${file}: ${e.problems.length} problem${e.problems.length === 1 ? "" : "s"}`);
      for (const p of e.problems) consola.log(`  - ${p}`);
    }
    return 1;
  }
  const rows = config.businesses.map((b) => ({
    business: b.id,
    state: b.state,
    domains: (b.gateway?.domains ?? []).map((d) => `${d.host} (${d.mode}${d.approved ? "" : ", pending"})`),
    gatewayKeys: b.gateway?.apiKeys.length ?? 0,
    collectionsKeys: b.collections?.apiKeys.length ?? 0,
  }));
  const summary = { valid: true, file, storage: config.storage.driver, coordination: config.coordination.driver, operatorKeys: config.operators.apiKeys.length, businesses: rows };
  if (flags.json) process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  else {
    consola.success(`${file} is valid (storage ${summary.storage}, coordination ${summary.coordination}, ${summary.operatorKeys} operator key(s))`);
    consola.log(table(rows, ["business", "state", "domains", "gatewayKeys", "collectionsKeys"]));
  }
  return 0;
}

/** Opens the store FILE names (environment overrides applied, as `npm start`) and syncs the directory to FILE. */
export async function syncConfig(file: string, flags: Flags): Promise<number> {
  let config: Config;
  try {
    config = loadConfig({ argv: ["--config", file] });
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    consola.error(e.message);
    return 1;
  }
  // The composition root: loaded only for a sync (it loads every adapter).
  const { syncDirectoryToConfig } = await import("../boot/sync-directory.ts");
  const { createLogger } = await import("../core/log.ts");
  const log = createLogger({ level: "warn", format: flags.json ? "json" : "pretty" });
  const report = await syncDirectoryToConfig(config, log);
  await log.flush(); // the warnings first: log lines leave in batches
  if (flags.json) process.stdout.write(JSON.stringify({ synced: true, ...report }, null, 2) + "\n");
  else consola.success(`the directory matches ${file}: ${report.created} created, ${report.updated} updated, ${report.removed} removed`);
  return 0;
}
