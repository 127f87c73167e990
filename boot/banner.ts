/** The lines `npm start` prints once it listens: its URL and, for the demo, hosts and credentials. */
import type { Config } from "../config/schema.ts";

export function startupBanner(config: Config, url: string, simulatorUrl: string | null): string {
  const port = new URL(url).port;
  const lines = [`Gatehouse listening on ${url}`];
  if (config.demo) {
    lines.push("Demo deployment (demo-only keys; never use them elsewhere):");
    for (const b of config.businesses) {
      for (const d of b.gateway?.domains ?? []) lines.push(`  invoice gateway  http://${d.host}:${port}  (${b.id}, ${d.mode})`);
      for (const k of b.gateway?.apiKeys ?? []) if (k.key) lines.push(`    x-api-key: ${k.key}  (${b.id}${k.ipWhitelisted.length ? `, allowlist ${k.ipWhitelisted.join(",")}` : ""})`);
    }
    lines.push(`  collections      ${config.collections.hosts.map((h) => `http://${h}:${port}`).join("  ")}`);
    for (const b of config.businesses)
      for (const k of b.collections?.apiKeys ?? []) if (k.key) lines.push(`    Authorization: Bearer ${k.key}  (${b.id})`);
    for (const k of config.operators.apiKeys) if (k.key) lines.push(`  operator         x-admin-api-key: ${k.key}`);
    if (simulatorUrl) lines.push(`  regulator simulator ${simulatorUrl}  (fixtures: ${config.regulator.simulator.fixtures})`);
  }
  return lines.join("\n") + "\n";
}
