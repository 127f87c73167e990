/**
 * The directory's webhook endpoints as the rest of the gateway sees them: the delivery targets of a
 * business's events, the operator's and dashboard's view of an endpoint (never a secret), and the
 * service that manages them.
 */
import type { WebhookEndpointSource } from "../../adapters/ports.ts";

/** Which events an endpoint receives: invoice-gateway events, collections events, or both. */
export type WebhookService = "invoice" | "collections";
export const WEBHOOK_SERVICES: readonly WebhookService[] = ["invoice", "collections"];

/** Where an event goes: an enabled endpoint of the business for the event's service. */
export interface WebhookTarget {
  readonly id: string;
  readonly url: string;
}

/** Why an endpoint is disabled: by a person, or by the gateway after failing for too long (the notice). */
export interface WebhookDisabled {
  reason: "manual" | "failing";
  /** Epoch ms. */
  at: number;
  /** "failing": since when every attempt failed, and the last attempt's error class. */
  failingSinceMs?: number;
  lastError?: string | null;
}

/** An endpoint as operators and the dashboard see it (secrets only as hints). */
export interface WebhookEndpointView {
  id: string;
  businessId: string;
  url: string;
  services: WebhookService[];
  description: string;
  enabled: boolean;
  disabled: WebhookDisabled | null;
  /** "config": seeded from the config file's webhook entry; "dashboard": added at run time. */
  source: "config" | "dashboard";
  /** Since when every attempt has failed (null: the last one succeeded, or none yet). */
  failingSinceMs: number | null;
  /** The signing secrets, newest first: a hint ("whsec_…ab12"), created, and the old one's end of overlap. */
  secrets: Array<{ hint: string; createdAtMs: number; expiresAtMs: number | null }>;
  createdAt: string;
  updatedAt: string;
}

/** Who changes an endpoint (the audit's actor: "operator:<credential id>", "user:<user id>") and the request. */
export interface WebhookActor {
  actor: string;
  requestId: string | null;
}

export interface WebhookEndpointInput {
  url: string;
  services: WebhookService[];
  description?: string;
}

export interface WebhookEndpointPatch {
  url?: string;
  services?: WebhookService[];
  description?: string;
  enabled?: boolean;
}

/**
 * Managing a business's endpoints (the dashboard, the operator console and the Admin API call the
 * same service). Every change is a compare-and-set, audited with the actor, and announced to every
 * process. Reads and changes answer null for an endpoint of another business.
 */
export interface WebhookEndpoints extends WebhookEndpointSource {
  list(businessId: string): Promise<WebhookEndpointView[]>;
  get(businessId: string, endpointId: string): Promise<WebhookEndpointView | null>;
  /** Adds an endpoint with a new secret (read it with revealSecret). Throws a validation error on bad input. */
  create(by: WebhookActor, businessId: string, input: WebhookEndpointInput): Promise<WebhookEndpointView>;
  update(by: WebhookActor, businessId: string, endpointId: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointView | null>;
  /** A new secret; the previous ones keep signing until the configured overlap ends. */
  rotate(by: WebhookActor, businessId: string, endpointId: string): Promise<WebhookEndpointView | null>;
  /** The current secret (audited; the dashboard asks for a TOTP code first). */
  revealSecret(by: WebhookActor, businessId: string, endpointId: string): Promise<{ secret: string } | null>;
  /** Enabled endpoints of the business receiving `service` events (this process's snapshot). */
  targets(businessId: string, service: WebhookService): readonly WebhookTarget[];
}
