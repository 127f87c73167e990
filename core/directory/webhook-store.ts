/**
 * How the directory keeps webhook endpoints: collection `directory_webhook_endpoints`, one document
 * per endpoint (`_id` "cfg-<service>-<business>" for one seeded from the config file, "ep_<hex>"
 * for one added at run time), with its signing secrets newest first. A rotated-out secret carries
 * `expiresAtMs` (the end of the overlap); expired ones are dropped at the next write. `seed` holds
 * the config file's url and secret as last applied (the three-way merge of webhook-seed.ts).
 */
import { randomBytes } from "node:crypto";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { WebhookDisabled, WebhookEndpointView, WebhookService } from "./webhook-types.ts";

export const WEBHOOK_ENDPOINTS_COLLECTION = "directory_webhook_endpoints";

export interface StoredSecret {
  secret: string;
  createdAtMs: number;
  /** null: the current secret; else when the overlap of a rotation ends. */
  expiresAtMs: number | null;
}

export interface WebhookEndpointDoc extends Doc {
  businessId: string;
  url: string;
  services: WebhookService[];
  description: string;
  enabled: boolean;
  disabled: WebhookDisabled | null;
  secrets: StoredSecret[];
  failingSinceMs: number | null;
  source: "config" | "dashboard";
  /** The config file's values when last applied (seeded endpoints only). */
  seed: { url: string; secret: string } | null;
  rev: number;
  createdAt: string;
  updatedAt: string;
}

export function openWebhookEndpoints(store: DocumentStore): Collection<WebhookEndpointDoc> {
  return store.collection<WebhookEndpointDoc>(WEBHOOK_ENDPOINTS_COLLECTION, { indexes: [{ fields: ["businessId", "createdAt"] }] });
}

/** The id of the endpoint seeded from a business's config `webhook` entry of one service. */
export function seededEndpointId(businessId: string, service: WebhookService): string {
  return `cfg-${service}-${businessId}`;
}

export function newEndpointId(): string {
  return `ep_${randomBytes(12).toString("hex")}`;
}

/** A new Standard Webhooks secret: "whsec_" + the base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString("base64")}`;
}

/** The secrets still signing at `nowMs`, newest first. */
export function liveSecrets(doc: Pick<WebhookEndpointDoc, "secrets">, nowMs: number): StoredSecret[] {
  return doc.secrets.filter((s) => s.expiresAtMs === null || s.expiresAtMs > nowMs);
}

/** What operators and the dashboard see of an endpoint: secrets only as hints. */
export function endpointView(doc: WebhookEndpointDoc, nowMs: number): WebhookEndpointView {
  return {
    id: doc._id,
    businessId: doc.businessId,
    url: doc.url,
    services: [...doc.services],
    description: doc.description,
    enabled: doc.enabled,
    disabled: doc.disabled,
    source: doc.source,
    failingSinceMs: doc.failingSinceMs,
    secrets: liveSecrets(doc, nowMs).map((s) => ({ hint: _hint(s.secret), createdAtMs: s.createdAtMs, expiresAtMs: s.expiresAtMs })),
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
  };
}

// --- Internal helpers ---

/** "whsec_…ab12": enough to tell secrets apart, never enough to sign. */
function _hint(secret: string): string {
  const prefix = secret.startsWith("whsec_") ? "whsec_" : "";
  return `${prefix}…${secret.slice(-4)}`;
}
