/**
 * The tenant directory: approved domains, businesses and credentials, kept in the document store
 * (core/directory/store.ts), seeded from the config file at boot (core/directory/seed.ts) and
 * changed by operators through the Admin API without a restart. Spec §5.3: authorization is fresh,
 * configuration may be cached.
 *
 * - Credentials are never cached as answers: every key check reads the key's record (by its hash)
 *   or confirms it unchanged by an indexed count (core/directory/credentials.ts).
 * - Domain records are cached per process for `directory.domainCacheTtlMs`, and every change is
 *   pushed at once through the coordination port's publish/subscribe (core/directory/changes.ts): a
 *   message makes the entry stale and reloads it; a lost subscription (`gap`) makes every entry
 *   stale. When a stale entry cannot be reloaded the request fails; an earlier answer is never used
 *   (core/directory/domains.ts).
 * - Businesses (name, state, collections settings) are a snapshot loaded at boot and reloaded on
 *   change notifications: they only change through the config file (core/directory/businesses.ts).
 * - Webhook endpoints (`webhooks`): a per-process snapshot of where each business's events go,
 *   reloaded on change notifications; attempts read an endpoint's current secrets from the store
 *   (core/directory/webhook-service.ts).
 * - `isCurrent(record)` tells whether the domain's `modeVersion` moved since `record` was read (a
 *   mode change was approved): the dispatcher asks it right before the handler
 *   (GW_DOMAIN_APPROVAL_STATE_CHANGED).
 *
 * Failures are thrown (DependencyUnavailableError from the store, DirectoryRecordError for an
 * unreadable record); the pipeline stages turn them into the spec's 503 codes (docs/operations.md
 * "Tenant directory", docs/decisions.md "Control plane"). This file is the directory's public entry
 * point; core/directory/open.ts puts the parts together.
 */
export type {
  Approval,
  BusinessRecord,
  BusinessState,
  CredentialScheme,
  DirectoryChange,
  DirectoryOptions,
  DomainRecord,
  Mode,
  Principal,
  TenantDirectory,
} from "./directory/types.ts";
export type {
  WebhookActor,
  WebhookDisabled,
  WebhookEndpointInput,
  WebhookEndpointPatch,
  WebhookEndpoints,
  WebhookEndpointView,
  WebhookService,
  WebhookTarget,
} from "./directory/webhook-types.ts";
export { WEBHOOK_SERVICES } from "./directory/webhook-types.ts";
export { DIRECTORY_CHANNEL, announceChange } from "./directory/changes.ts";
export { hashSecret } from "./directory/secrets.ts";
export { openDirectory } from "./directory/open.ts";
