/**
 * The lines `npm start` prints once it listens: its URL and, for the demo, hosts and credentials.
 * What it advertises is what the tenant directory holds (the store outlives the config file: a key
 * revoked or expired through the Admin API, a domain switched to the other mode), never the file
 * alone. A key is printed only while the directory accepts it, and only when the config file holds
 * its plain value (demo keys): the directory keeps hashes, so an operator-made key is never shown.
 */
import type { DocumentStore } from "../adapters/ports.ts";
import type { Config } from "../config/schema.ts";
import { hashSecret } from "../core/directory/secrets.ts";
import { openDirectoryStore, type Mode } from "../core/directory/store.ts";
import { DEMO_OWNER, demoOwnerBusiness } from "../plugins/dashboard/demo-owner.ts";

/** What the banner needs of the tenant directory. */
export interface BannerDirectory {
  /** Is the key with this plain value held and usable (not revoked, not expired)? */
  accepts(plainKey: string): boolean;
  /** The domain's current mode, or null when the directory does not serve the host. */
  modeOf(host: string): Mode | null;
}

/** Reads, once, what the banner shows of the directory: every config key and domain's record. */
export async function readBannerDirectory(config: Config, store: DocumentStore, now = Date.now()): Promise<BannerDirectory> {
  const ds = openDirectoryStore(store);
  const plain = [
    ...config.businesses.flatMap((b) => [...(b.gateway?.apiKeys ?? []), ...(b.collections?.apiKeys ?? [])]),
    ...config.operators.apiKeys,
  ].flatMap((k) => (k.key ? [k.key] : []));
  const usable = new Set<string>();
  for (const key of plain) {
    const doc = await ds.credentials.get(hashSecret(key));
    if (doc && !doc.revoked && (doc.expiresAt === null || doc.expiresAt > now)) usable.add(key);
  }
  const modes = new Map<string, Mode>();
  for (const d of config.businesses.flatMap((b) => b.gateway?.domains ?? [])) {
    const doc = await ds.domains.get(d.host);
    if (doc) modes.set(d.host, doc.mode);
  }
  return { accepts: (key) => usable.has(key), modeOf: (host) => modes.get(host) ?? null };
}

export function startupBanner(config: Config, url: string, simulatorUrl: string | null, held: BannerDirectory): string {
  const port = new URL(url).port;
  const lines = [`Gatehouse listening on ${url}`];
  if (config.demo) {
    lines.push("Demo deployment (demo-only keys; never use them elsewhere):");
    for (const b of config.businesses) {
      for (const d of b.gateway?.domains ?? []) {
        const mode = held.modeOf(d.host);
        if (mode) lines.push(`  invoice gateway  http://${d.host}:${port}  (${b.id}, ${mode})`);
      }
      for (const k of b.gateway?.apiKeys ?? [])
        if (k.key && held.accepts(k.key)) lines.push(`    x-api-key: ${k.key}  (${b.id}${k.ipWhitelisted.length ? `, allowlist ${k.ipWhitelisted.join(",")}` : ""})`);
    }
    lines.push(`  collections      ${config.collections.hosts.map((h) => `http://${h}:${port}`).join("  ")}`);
    for (const b of config.businesses)
      for (const k of b.collections?.apiKeys ?? []) if (k.key && held.accepts(k.key)) lines.push(`    Authorization: Bearer ${k.key}  (${b.id})`);
    lines.push(...dashboardLines(config, port));
    for (const k of config.operators.apiKeys) if (k.key && held.accepts(k.key)) lines.push(`  operator         x-admin-api-key: ${k.key}`);
    if (simulatorUrl) lines.push(`  regulator simulator ${simulatorUrl}  (fixtures: ${config.regulator.simulator.fixtures})`);
  }
  return lines.join("\n") + "\n";
}

/** The merchant dashboard and its demo owner (demo configs only: the owner is seeded there alone). */
export function dashboardLines(config: Config, port: string): string[] {
  const businessId = demoOwnerBusiness(config);
  if (!config.dashboard.enabled || !businessId) return [];
  const host = config.businesses.find((b) => b.id === businessId)?.gateway?.domains[0]?.host ?? "localhost";
  const path = config.dashboard.publicPath ?? config.dashboard.basePath;
  return [
    `  merchant dashboard  http://${host}:${port}${path}  (${businessId}; also on the collections hosts)`,
    `    demo owner: ${DEMO_OWNER.email}  password ${DEMO_OWNER.password}  TOTP secret ${DEMO_OWNER.totpSecret}`,
  ];
}
