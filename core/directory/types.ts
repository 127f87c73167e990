/**
 * What the tenant directory answers (records derived from the stored documents of
 * core/directory/store.ts) and the interface every other part of the gateway uses.
 */
import type { CoordinationStore, DocumentStore, EmailSender } from "../../adapters/ports.ts";
import type { Config } from "../../config/schema.ts";
import type { Logger } from "../log.ts";
import type { Approval, BusinessState, CredentialScheme, Mode, WebhookSettings } from "./store.ts";
import type { WebhookEndpoints } from "./webhook-types.ts";

export type { Approval, BusinessState, CredentialScheme, Mode } from "./store.ts";

export interface DomainRecord {
  readonly host: string;
  readonly businessId: string;
  /** null when the stored mode cannot be read (GW_TENANT_MODE_UNAVAILABLE). */
  readonly mode: Mode | null;
  readonly modeVersion: number;
  /** "approved" or "draining" (a pending domain is not provisioned). */
  readonly approval: Approval;
  /** While draining: the mode the domain will be approved in. */
  readonly pendingMode: Mode | null;
  /** The owning business's state. */
  readonly state: BusinessState;
  /** Sign fee in integer kobo. */
  readonly signFeeKobo: number;
  /** Stored mode: transmit every signed invoice automatically. */
  readonly autoTransmit: boolean;
}

export interface Principal {
  readonly scheme: CredentialScheme;
  /** Non-secret credential id (logs, quotas, audit). */
  readonly credentialId: string;
  /** Owning business; null for operator credentials. */
  readonly businessId: string | null;
  readonly ipWhitelisted: readonly string[];
}

export interface BusinessRecord {
  readonly id: string;
  readonly name: string;
  readonly state: BusinessState;
  readonly collections?: {
    readonly webhook?: WebhookSettings;
    readonly feeBearerDefault: "MERCHANT" | "CUSTOMER";
  };
  /** The invoice gateway's webhook endpoint (Stored mode events), when configured. */
  readonly gateway?: { readonly webhook: WebhookSettings };
}

/** A change written to the store, announced to every process. */
export interface DirectoryChange {
  /** "webhook": the business `id`'s webhook endpoints changed. */
  kind: "domain" | "business" | "credential" | "webhook";
  id: string;
  /** Domains: the modeVersion after the change (in-flight requests of an older one are refused). */
  modeVersion?: number;
  /** The record was deleted (--sync). */
  removed?: boolean;
}

export interface TenantDirectory {
  /** The cached record of a canonical host while fresh (null: known not provisioned); undefined: call loadDomain. */
  cachedDomain(host: string): DomainRecord | null | undefined;
  /** Reads the domain record from the store and caches it. Throws when it cannot be read. */
  loadDomain(host: string): Promise<DomainRecord | null>;
  /** False when the domain's modeVersion moved since `record` was read. */
  isCurrent(record: DomainRecord): boolean;
  /** Is this a host the collections API answers on? (config `collections.hosts`) */
  isCollectionsHost(host: string): boolean;
  /**
   * The principal of a presented key: read fresh from the store; null when unknown, revoked or
   * expired. Throws (or rejects) when it cannot be read. Answered synchronously when the store
   * confirms a known key synchronously (the embedded store's `countNow`), else a promise.
   */
  authenticate(scheme: CredentialScheme, secret: string): Principal | null | Promise<Principal | null>;
  business(id: string): BusinessRecord | null;
  businesses(): readonly BusinessRecord[];
  /** After a write to the directory's store: updates this process at once and tells the others. */
  changed(change: DirectoryChange): Promise<void>;
  /** The businesses' webhook endpoints: where events go, and their management (core/directory/webhook-service.ts). */
  readonly webhooks: WebhookEndpoints;
  close(): Promise<void>;
}

export interface DirectoryOptions {
  config: Config;
  store: DocumentStore;
  coordination: CoordinationStore;
  log: Logger;
  now?: () => number;
  /** Make the store match the config file exactly (`--sync`) instead of seeding it. */
  sync?: boolean;
  /** Sends the notice of a webhook endpoint disabled for failing (else only a log line). */
  email?: EmailSender;
}
