/**
 * `npx gatehouse config sync FILE` (and `npm start -- --sync` through the directory): makes the
 * directory's store match the config exactly, announcing each change to the running gateways.
 */
import type { Config } from "../config/schema.ts";
import { announceChange } from "../core/directory.ts";
import { seedDirectory, type SeedReport } from "../core/directory/seed.ts";
import { openDirectoryStore } from "../core/directory-store.ts";
import type { Logger } from "../core/log.ts";
import { openCoordination, openDocumentStore } from "./open-ports.ts";

export async function syncDirectoryToConfig(config: Config, log: Logger): Promise<SeedReport> {
  const store = await openDocumentStore(config);
  const coordination = await openCoordination(config);
  try {
    return await seedDirectory(openDirectoryStore(store), config, {
      sync: true,
      now: Date.now,
      log,
      notify: (change) => announceChange(coordination, change).catch(() => undefined),
    });
  } finally {
    await Promise.allSettled([store.close(), coordination.close()]);
  }
}
