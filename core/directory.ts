/**
 * The tenant directory: approved domains, businesses and credentials, resolved from config once at
 * startup. Keys are held only as sha256 hashes; a request's key is hashed and looked up, so the
 * plain key is never compared or kept. The directory sits behind a small interface so a remote
 * tenant service can replace it (its failures then surface as GW_DOMAIN_REGISTRY_UNAVAILABLE /
 * GW_TENANT_AUTHORIZATION_UNAVAILABLE, never as a stale answer).
 */
import { hash } from "node:crypto";
import type { BusinessConfig, Config, DomainConfig } from "../config/schema.ts";
import { ngnTextToKobo } from "./money.ts";

export type Mode = "passthrough" | "stored";
export type BusinessState = "TEST" | "LIVE";
export type CredentialScheme = "apiKey" | "bearer" | "admin";

export interface DomainRecord {
  host: string;
  businessId: string;
  mode: Mode | null;
  state: BusinessState;
  approved: boolean;
  /** The domain's sign fee in integer kobo (resolved once from config). */
  signFeeKobo: number;
  config: DomainConfig;
}

export interface Principal {
  scheme: CredentialScheme;
  /** Non-secret credential id (logs, quotas). */
  credentialId: string;
  /** Owning business; null for operator credentials. */
  businessId: string | null;
  ipWhitelisted: readonly string[];
  revoked: boolean;
}

export interface TenantDirectory {
  /** The domain record of a canonical host, or null when not provisioned. Throws when unavailable. */
  domain(host: string): DomainRecord | null;
  /** Is this a host the collections API answers on? */
  isCollectionsHost(host: string): boolean;
  /** Resolves a presented secret for a scheme; null when unknown. Throws when unavailable. */
  authenticate(scheme: CredentialScheme, secret: string): Principal | null;
  business(id: string): BusinessConfig | null;
  businesses(): readonly BusinessConfig[];
}

export function hashSecret(secret: string): string {
  return "sha256:" + hash("sha256", secret);
}

export function createConfigDirectory(config: Config): TenantDirectory {
  const domains = new Map<string, DomainRecord>();
  const businesses = new Map<string, BusinessConfig>();
  const credentials: Record<CredentialScheme, Map<string, Principal>> = {
    apiKey: new Map(),
    bearer: new Map(),
    admin: new Map(),
  };
  const add = (scheme: CredentialScheme, businessId: string | null, c: Config["operators"]["apiKeys"][number]) => {
    const keyHash = c.keyHash ?? hashSecret(c.key!);
    credentials[scheme].set(keyHash, {
      scheme,
      credentialId: c.id,
      businessId,
      ipWhitelisted: Object.freeze([...c.ipWhitelisted]),
      revoked: c.revoked,
    });
  };
  for (const b of config.businesses) {
    businesses.set(b.id, b);
    for (const d of b.gateway?.domains ?? []) {
      domains.set(d.host, {
        host: d.host,
        businessId: b.id,
        mode: d.mode,
        state: b.state,
        approved: d.approved,
        signFeeKobo: ngnTextToKobo(d.signFee),
        config: d,
      });
    }
    for (const c of b.gateway?.apiKeys ?? []) add("apiKey", b.id, c);
    for (const c of b.collections?.apiKeys ?? []) add("bearer", b.id, c);
  }
  for (const c of config.operators.apiKeys) add("admin", null, c);
  const collectionsHosts = new Set(config.collections.hosts);

  return {
    domain: (host) => {
      const d = domains.get(host);
      return d && d.approved ? d : null;
    },
    isCollectionsHost: (host) => collectionsHosts.has(host),
    authenticate: (scheme, secret) => credentials[scheme].get(hashSecret(secret)) ?? null,
    business: (id) => businesses.get(id) ?? null,
    businesses: () => [...businesses.values()],
  };
}
