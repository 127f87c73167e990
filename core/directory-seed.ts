/**
 * Seeding the tenant directory from the config file: kept at this path for its importers; the
 * modules are core/directory/seed*.ts.
 */
export { seedDirectory, type SeedOptions, type SeedReport } from "./directory/seed.ts";
