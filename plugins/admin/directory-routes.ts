/**
 * The Admin API over the tenant directory (docs/operations.md "Admin API"): x-admin-api-key
 * (401 GW_ADMIN_AUTHENTICATION_FAILED otherwise), answered on every host (in trusted edge mode an
 * authenticated any-host route still needs the verified edge), the management quota per operator
 * credential (spec §8: 30 per 60 s by default), every mutation idempotent on x-idempotency-key; a
 * directory-store outage answers 503 GW_MANAGEMENT_SERVICE_UNAVAILABLE (declared once, below).
 * Handlers are thin: validate (by declaration) → service → respond.
 */
import type { RouteDeclaration } from "../../core/plugin.ts";
import { json } from "../../core/respond.ts";
import {
  AuditListQuery,
  BusinessListQuery,
  BusinessParams,
  DomainListQuery,
  DomainParams,
  DomainUpdateBody,
  EmptyBody,
  KeyCreateBody,
  KeyListQuery,
  KeyParams,
  KeyRollBody,
  KeyUpdateBody,
  ModeChangeBody,
  type AuditListInput,
  type DomainListInput,
  type DomainUpdateInput,
  type KeyCreateInput,
  type KeyListInput,
  type KeyRollInput,
  type KeyUpdateInput,
  type ListLimit,
  type ModeChangeInput,
} from "./directory-schemas.ts";
import { operatorCall, type AdminAnswer, type DirectoryAdmin } from "./directory-service.ts";

export const DIRECTORY_PATHS = {
  businesses: "/admin/businesses",
  business: "/admin/businesses/:businessId",
  domains: "/admin/domains",
  domain: "/admin/domains/:host",
  modeChange: "/admin/domains/:host/mode-change",
  approval: "/admin/domains/:host/approval",
  keys: "/admin/keys",
  key: "/admin/keys/:keyId",
  roll: "/admin/keys/:keyId/roll",
  revoke: "/admin/keys/:keyId/revoke",
  audit: "/admin/audit",
} as const;

/** What every directory route answers when the directory store cannot. */
const STORE_UNAVAILABLE = {
  code: "GW_MANAGEMENT_SERVICE_UNAVAILABLE",
  detail: "The directory store is unavailable; reads may retry with backoff, mutations only with the same idempotency key.",
} as const;

// Operators set mode, fees and owners on purpose: the customer rule against server-managed fields (spec §1.2) does not apply.
const READ = {
  service: "gateway",
  hosts: "any",
  auth: "admin",
  quota: "management",
  skip: ["mode"],
  rejectServerFields: false,
  unavailable: STORE_UNAVAILABLE,
} as const;
const MUTATION = { ...READ, idempotent: true } as const;

export function directoryRoutes(admin: DirectoryAdmin): RouteDeclaration[] {
  return [..._businessRoutes(admin), ..._domainRoutes(admin), ..._keyRoutes(admin), _auditRoute(admin)];
}

// --- Internal helpers ---

function _businessRoutes(admin: DirectoryAdmin): RouteDeclaration[] {
  return [
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.businesses,
      schemas: { query: BusinessListQuery },
      summary: "Operator: list businesses",
      description: "Businesses of the directory (seeded from the config file), by id; `limit` 1–100 (default 50), `cursor` from `nextCursor`.",
      responses: { 200: "{ data: [business], nextCursor }" },
      handler: async (ctx) => json(ctx, 200, await admin.listBusinesses(ctx.query as ListLimit)),
    },
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.business,
      schemas: { params: BusinessParams },
      summary: "Operator: one business and its domains",
      description: "Unknown business → 404 GW_OPERATION_NOT_FOUND. The collections webhook secret is never answered.",
      responses: { 200: "{ id, name, state, invoiceGateway, collections, domains }" },
      handler: async (ctx) => json(ctx, 200, await admin.getBusiness(ctx.params.businessId!)),
    },
  ];
}

function _domainRoutes(admin: DirectoryAdmin): RouteDeclaration[] {
  return [
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.domains,
      schemas: { query: DomainListQuery },
      summary: "Operator: list domains",
      description: "Filters: `businessId`, `approval` (approved, draining, pending_approval).",
      responses: { 200: "{ data: [domain], nextCursor }" },
      handler: async (ctx) => json(ctx, 200, await admin.listDomains(ctx.query as DomainListInput)),
    },
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.domain,
      schemas: { params: DomainParams },
      summary: "Operator: one domain",
      description: "Mode, modeVersion, approval state (and the pending mode while draining), sign fee, autoTransmit. Unknown host → 404 GW_DOMAIN_NOT_PROVISIONED.",
      responses: { 200: "The domain" },
      handler: async (ctx) => json(ctx, 200, await admin.getDomain(ctx.params.host!)),
    },
    {
      ...MUTATION,
      method: "PATCH",
      path: DIRECTORY_PATHS.domain,
      schemas: { params: DomainParams, body: DomainUpdateBody },
      summary: "Operator: set a domain's sign fee and autoTransmit",
      description: "`signFee` in NGN (two decimals at most), `autoTransmit` (Stored mode). Takes effect in every process at once.",
      responses: { 200: "The domain" },
      handler: async (ctx) => _answer(ctx, await admin.updateDomain(operatorCall(ctx), ctx.params.host!, ctx.body as DomainUpdateInput)),
    },
    {
      ...MUTATION,
      method: "POST",
      path: DIRECTORY_PATHS.modeChange,
      schemas: { params: DomainParams, body: ModeChangeBody },
      summary: "Operator: start a mode change (the domain drains)",
      description:
        "An approved domain goes to `draining`: its invoice routes answer 503 GW_TENANT_MODE_UNAVAILABLE with Retry-After while in-flight work finishes; then approve it in the new mode. The current mode while draining calls the drain off. Already in that mode → 409 GW_DOMAIN_APPROVAL_STATE_CHANGED.",
      responses: { 200: "The domain (approval draining, pendingMode)" },
      handler: async (ctx) => _answer(ctx, await admin.changeMode(operatorCall(ctx), ctx.params.host!, ctx.body as ModeChangeInput)),
    },
    {
      ...MUTATION,
      method: "POST",
      path: DIRECTORY_PATHS.approval,
      schemas: { params: DomainParams, body: EmptyBody },
      summary: "Operator: approve a domain (in its new mode after a drain)",
      description:
        "draining → approved in the pending mode; pending_approval → approved. modeVersion + 1: a request authorized under the previous one that has not reached its handler answers 409 GW_DOMAIN_APPROVAL_STATE_CHANGED. Represented-business mappings carry over. Nothing awaiting approval → 409 GW_DOMAIN_APPROVAL_STATE_CHANGED.",
      responses: { 200: "The domain" },
      handler: async (ctx) => _answer(ctx, await admin.approveDomain(operatorCall(ctx), ctx.params.host!)),
    },
  ];
}

function _keyRoutes(admin: DirectoryAdmin): RouteDeclaration[] {
  return [
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.keys,
      schemas: { query: KeyListQuery },
      summary: "Operator: list API keys (never their values)",
      description: "Filters: `businessId`, `scheme` (gateway, collections, operator), `status` (active, revoked, expired). A key is shown by id and hint only.",
      responses: { 200: "{ data: [key], nextCursor }" },
      handler: async (ctx) => json(ctx, 200, await admin.listKeys(ctx.query as KeyListInput)),
    },
    {
      ...READ,
      method: "GET",
      path: DIRECTORY_PATHS.key,
      schemas: { params: KeyParams },
      summary: "Operator: one API key (never its value)",
      responses: { 200: "The key" },
      handler: async (ctx) => json(ctx, 200, await admin.getKey(ctx.params.keyId!)),
    },
    {
      ...MUTATION,
      method: "POST",
      path: DIRECTORY_PATHS.keys,
      schemas: { body: KeyCreateBody },
      summary: "Operator: create an API key (the plain key is answered once)",
      description:
        "`scheme` gateway / collections (with `businessId`) or operator; optional `id`, `ipWhitelisted`, `expiresAt`. 201 with `plainKey` once; a replay with the same idempotency key answers 200 with the same key id and no plain key.",
      responses: { 201: "{ key, plainKey }", 200: "replay: { key, plainKey: null }" },
      handler: async (ctx) => _answer(ctx, await admin.createKey(operatorCall(ctx), ctx.body as KeyCreateInput)),
    },
    {
      ...MUTATION,
      method: "POST",
      path: DIRECTORY_PATHS.roll,
      schemas: { params: KeyParams, body: KeyRollBody },
      summary: "Operator: roll an API key (the old one stays valid until oldKeyExpiresAt)",
      description:
        "A new key with the same owner, scheme and IP allowlist (plain key answered once); the old key keeps working until `oldKeyExpiresAt` (a past time: at once). A revoked or expired key cannot be rolled.",
      responses: { 201: "{ key, plainKey, previous }", 200: "replay" },
      handler: async (ctx) => _answer(ctx, await admin.rollKey(operatorCall(ctx), ctx.params.keyId!, ctx.body as KeyRollInput)),
    },
    {
      ...MUTATION,
      method: "PATCH",
      path: DIRECTORY_PATHS.key,
      schemas: { params: KeyParams, body: KeyUpdateBody },
      summary: "Operator: replace an API key's IP allowlist",
      description: "`ipWhitelisted`: addresses or CIDR ranges (an empty list: any address). Checked by every gateway process from the next request on. A revoked or expired key is refused.",
      responses: { 200: "{ key }" },
      handler: async (ctx) => _answer(ctx, await admin.updateKey(operatorCall(ctx), ctx.params.keyId!, ctx.body as KeyUpdateInput)),
    },
    {
      ...MUTATION,
      method: "POST",
      path: DIRECTORY_PATHS.revoke,
      schemas: { params: KeyParams, body: EmptyBody },
      summary: "Operator: revoke an API key",
      description: "Refused by every gateway process from the next request on (keys are checked against the store on every request).",
      responses: { 200: "{ key }" },
      handler: async (ctx) => _answer(ctx, await admin.revokeKey(operatorCall(ctx), ctx.params.keyId!)),
    },
  ];
}

function _auditRoute(admin: DirectoryAdmin): RouteDeclaration {
  return {
    ...READ,
    method: "GET",
    path: DIRECTORY_PATHS.audit,
    schemas: { query: AuditListQuery },
    summary: "Operator: the directory's audit log (newest first)",
    description: "Who (operator credential id, or the config file), what, when, and the changed fields; never a key or a secret. Filters: `targetId`, `action`.",
    responses: { 200: "{ data: [record], nextCursor }" },
    handler: async (ctx) => json(ctx, 200, await admin.listAudit(ctx.query as AuditListInput)),
  };
}

/** The mutation's answer; the plain key (first answer of a create or roll only) is added here, never stored. */
function _answer(ctx: Parameters<RouteDeclaration["handler"]>[0], answer: AdminAnswer): Response {
  if (answer.plainKey === undefined) return json(ctx, answer.status, answer.body);
  const { plainKeyNote: _note, ...body } = answer.body as Record<string, unknown>;
  return json(ctx, answer.status, { ...body, plainKey: answer.plainKey });
}
