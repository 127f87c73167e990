/**
 * The plugin API. A plugin is a folder under plugins/ exporting one `definePlugin({...})`: its
 * name, the ports and stages it needs, and one `setup(kit)` that returns its routes (each a
 * declaration the core turns into the route table, the Allow lists and the OpenAPI document), its
 * background workers and what it offers to other plugins. Adding a plugin never edits the core:
 * list it in plugins/index.ts.
 */
import type * as v from "valibot";
import type { Config } from "../config/schema.ts";
import type {
  AlertChannel,
  IdentityAttestor,
  BillingLedger,
  CoordinationStore,
  DependencyHealth,
  DocumentStore,
  EmailSender,
  PaymentProcessor,
  WebhookOutbox,
} from "../adapters/ports.ts";
import type { RegulatorClient } from "../adapters/regulator/port.ts";
import type { RequestContext, Service } from "./context.ts";
import type { GwCode } from "./errors/catalog.ts";
import type { Mode, TenantDirectory } from "./directory.ts";
import type { Logger } from "./log.ts";
import type { GatewayMetrics } from "./metrics.ts";
import type { StageName } from "./stages/names.ts";

export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
export type AuthScheme = "apiKey" | "bearer" | "admin" | "none";
export type QuotaClass = "sign" | "management" | "default" | "none";

/** The ports a plugin may ask for. The composition root supplies them; boot checks `needs`. */
export interface Ports {
  documentStore: DocumentStore;
  coordination: CoordinationStore;
  /** Durable webhook outbox (collections and invoice events). */
  webhooks?: WebhookOutbox;
  /** Outgoing e-mail (payment links to customers). */
  email?: EmailSender;
  /** Card/transfer processor behind the checkout (sandbox for TEST businesses). */
  payments?: PaymentProcessor;
  /** The regulator's e-invoicing interface (HTTP client; the simulator in the demo and tests). */
  regulator?: RegulatorClient;
  /** The invoice gateway's wallet ledger (sign fees). */
  billing?: BillingLedger;
  /** Operator alerts (spec §6): thresholds, immediate signals, chat webhook, dead letters. */
  alerts?: AlertChannel;
  /** Signs what onboarding verified (identity attestations), behind its resilience policy. */
  attestation?: IdentityAttestor;
}
export type PortName = keyof Ports;
export const PORT_NAMES: readonly PortName[] = ["documentStore", "coordination", "webhooks", "email", "payments", "regulator", "billing", "alerts", "attestation"];

/** A port the plugin declared in `needs` (boot guarantees it is configured). */
export function requirePort<K extends PortName>(kit: PluginKit, name: K): NonNullable<Ports[K]> {
  const port = kit.ports[name];
  if (!port) throw new Error(`port "${name}" is not configured`);
  return port as NonNullable<Ports[K]>;
}

export interface RouteDeclaration {
  method: HttpMethod;
  /** rou3 syntax: `/sub-businesses/:id`. */
  path: string;
  /** Which error/envelope shape the route answers in and which hosts serve it. */
  service: Service;
  /** "service" (default): the service's hosts (approved domains / collections hosts); "any": every host. */
  hosts?: "service" | "any";
  auth: AuthScheme;
  /** Default: "default" for authenticated routes, "none" for public ones. */
  quota?: QuotaClass;
  /** Modes the route is available in (gateway routes on approved domains); omitted = every mode. */
  modes?: readonly Mode[];
  /** "default" (limits.bodyBytes), "large" (limits.largeBodyBytes) or bytes. */
  bodyLimit?: "default" | "large" | number;
  /** Accepted request content types (default application/json). */
  accepts?: readonly string[];
  /** valibot schemas for the route's own checks. */
  schemas?: {
    body?: v.GenericSchema;
    query?: v.GenericSchema;
    params?: v.GenericSchema;
  };
  /**
   * An idempotent mutation: x-idempotency-key is required (true) or accepted when present
   * ("optional"), validated before the handler and handed to it as `ctx.idempotencyKey`.
   */
  idempotent?: boolean | "optional";
  /** Request headers the route reads besides the credential and the idempotency key (OpenAPI). */
  headers?: readonly RouteHeader[];
  /**
   * What the route answers when a dependency it calls cannot answer (a DependencyUnavailableError
   * reaches the core): this catalog code, with `detail`. Handlers map only what differs (an
   * outcome that became uncertain). Collections routes answer their envelope's 503 instead.
   */
  unavailable?: { code: GwCode; detail: string };
  /** Stages this route does not use (health and public entry points declare theirs). */
  skip?: readonly StageName[];
  /** Reject server-managed fields in the body (spec §1.2 rule 1). Default true for gateway routes. */
  rejectServerFields?: boolean;
  /**
   * Authenticates the body's raw bytes before anything parses them (a signed delivery on a route
   * without a credential): throws a catalog error to refuse. Runs right after the body is read.
   */
  verifyBody?: (ctx: RequestContext, rawBody: Uint8Array) => void;
  /**
   * A tighter early limit for this route per client address (the admission stage), for an
   * unauthenticated entry point that reads a large body: `perClient` requests per `windowSeconds`.
   */
  admission?: { perClient: number; windowSeconds: number };
  summary: string;
  description?: string;
  /** Documented success statuses for the OpenAPI document. */
  responses?: Partial<Record<number, string>>;
  handler: (ctx: RequestContext) => Response | Promise<Response>;
}

/** A request header a route reads (documented in OpenAPI; validated by the route's own checks). */
export interface RouteHeader {
  name: string;
  required: boolean;
  description: string;
  /** A regular expression the value must match, for the OpenAPI document. */
  pattern?: string;
}

export interface Worker {
  name: string;
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

/** Runtime facts a plugin may read (health). */
export interface RuntimeState {
  readonly startedAt: number;
  isReady(): boolean;
  isDraining(): boolean;
  inFlight(): { total: number; perDomain: Record<string, number> };
  /** What this process's requests observed of the services behind the directory (dependency snapshot). */
  services(): Record<ServiceFacet, ServiceObservation>;
}

/** The services spec §4.2's snapshot names that the gateway serves from its own store. */
export type ServiceFacet = "domainRegistry" | "tenantAuthorization" | "managementService" | "administratorService";
export interface ServiceObservation {
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  lastFailureCode: string | null;
}

/**
 * Named status reports that plugins contribute to the operator's dependency snapshot
 * (/health/dependencies `workers`): a plugin registers one when it declares its workers; the health
 * plugin collects them in its background refresh, never per request.
 */
export interface StatusReports {
  register(name: string, report: () => Promise<unknown>): void;
  /** Every report by name; a report that fails is `{ status: "unknown", error }`. */
  collect(): Promise<Record<string, unknown>>;
}

/**
 * A typed key under which one plugin offers a value (a service) to others, so a plugin never
 * imports another plugin's folder: the key is declared in a shared kit (plugins/invoice/), the
 * offering plugin returns it from setup, the using plugin declares it in `uses` and reads it with
 * `kit.offers.get(key)` during its own setup. Both sides declare the key (`provides`, `uses`), so
 * boot can order the setups and report an offer nobody makes.
 */
export interface OfferKey<T> {
  readonly name: string;
  /** Carries T for the type checker only. */
  readonly _type?: T;
}

export function defineOffer<T>(name: string): OfferKey<T> {
  return { name };
}

/** One value a plugin offers under a key (built with `offer(key, value)`, so the types match). */
export interface Offer {
  readonly key: OfferKey<unknown>;
  readonly value: unknown;
}

export function offer<T>(key: OfferKey<T>, value: T): Offer {
  return { key: key as OfferKey<unknown>, value };
}

/** The offers of the plugins set up so far. */
export interface Offers {
  /** The value offered under `key`; a key no plugin offered is a boot error (declare it in `uses`). */
  get<T>(key: OfferKey<T>): T;
}

/** What a plugin's setup returns. */
export interface PluginSetup {
  routes: RouteDeclaration[];
  workers?: Worker[];
  offers?: Offer[];
}

export interface PluginKit {
  config: Config;
  ports: Ports;
  directory: TenantDirectory;
  /** Every dependency's circuit (the resilience policies), for the health plugin. */
  dependencyHealth: DependencyHealth;
  log: Logger;
  runtime: RuntimeState;
  reports: StatusReports;
  /** The gateway's metrics; a plugin registers its own with `metrics.counter(...)` and the like. */
  metrics: GatewayMetrics;
  /** What the plugins set up before this one offer (see `uses`). */
  offers: Offers;
}

export interface GatewayPlugin {
  name: string;
  /** Ports that must be present before routes mount. */
  needs?: readonly PortName[];
  /** Stages that must be enabled for this plugin to be safe. */
  stages?: readonly StageName[];
  /** Offers of other plugins this one reads in setup; boot sets those plugins up first. */
  uses?: readonly OfferKey<unknown>[];
  /** What this plugin's setup offers to others (each key must come back in `setup().offers`). */
  provides?: readonly OfferKey<unknown>[];
  /** Called once per gateway, at boot. */
  setup(kit: PluginKit): PluginSetup;
}

export function definePlugin(plugin: GatewayPlugin): GatewayPlugin {
  return plugin;
}
