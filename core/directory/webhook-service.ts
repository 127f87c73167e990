/**
 * The webhook endpoint service (webhook-types.ts `WebhookEndpoints`): list, add, edit, disable and
 * enable, rotate the secret with an overlap, reveal the secret; the attempt-time reads and outcomes
 * are in webhook-health.ts. Input is checked here (http(s) URL, known services, short description),
 * so the dashboard, the console and the Admin API share one validation.
 */
import { gwError } from "../errors/gateway-error.ts";
import { appendAudit } from "./store.ts";
import { writeEndpoint, type WebhookContext } from "./webhook-context.ts";
import { attemptedEndpoint, resolveEndpoint } from "./webhook-health.ts";
import type { WebhookSnapshot } from "./webhook-snapshot.ts";
import { endpointView, liveSecrets, newEndpointId, newWebhookSecret, type WebhookEndpointDoc } from "./webhook-store.ts";
import { WEBHOOK_SERVICES, type WebhookActor, type WebhookEndpointInput, type WebhookEndpointPatch, type WebhookEndpoints, type WebhookEndpointView } from "./webhook-types.ts";

export type { WebhookContext, WebhookDisableNotice } from "./webhook-context.ts";

export function createWebhookEndpoints(c: WebhookContext, snapshot: WebhookSnapshot): WebhookEndpoints {
  return {
    list: async (businessId) => (await c.coll.find({ businessId }, { sort: [{ field: "createdAt", direction: 1 }], limit: 1000 })).items.map((d) => endpointView(d, c.now())),
    get: async (businessId, id) => {
      const doc = await _owned(c, businessId, id);
      return doc ? endpointView(doc, c.now()) : null;
    },
    create: (by, businessId, input) => _create(c, by, businessId, input),
    update: (by, businessId, id, patch) => _update(c, by, businessId, id, patch),
    rotate: (by, businessId, id) => _rotate(c, by, businessId, id),
    revealSecret: (by, businessId, id) => _reveal(c, by, businessId, id),
    targets: (businessId, service) => snapshot.targets(businessId, service),
    resolve: (id) => resolveEndpoint(c, id),
    attempted: (id, ok, atMs, error) => attemptedEndpoint(c, id, ok, atMs, error),
  };
}

// --- Internal helpers ---

const MAX_DESCRIPTION = 200;

async function _owned(c: WebhookContext, businessId: string, id: string): Promise<WebhookEndpointDoc | null> {
  const doc = await c.coll.get(id);
  return doc && doc.businessId === businessId ? doc : null;
}

async function _create(c: WebhookContext, by: WebhookActor, businessId: string, input: WebhookEndpointInput): Promise<WebhookEndpointView> {
  _check(input, true);
  const at = c.now();
  const iso = new Date(at).toISOString();
  const doc: WebhookEndpointDoc = {
    _id: newEndpointId(),
    businessId,
    url: input.url,
    services: [...new Set(input.services)],
    description: input.description ?? "",
    enabled: true,
    disabled: null,
    secrets: [{ secret: newWebhookSecret(), createdAtMs: at, expiresAtMs: null }],
    failingSinceMs: null,
    source: "dashboard",
    seed: null,
    rev: 1,
    createdAt: iso,
    updatedAt: iso,
  };
  await c.coll.insert(doc);
  await appendAudit(c.audit, { actor: by.actor, requestId: by.requestId, action: "webhook_endpoint.create", target: { type: "webhook_endpoint", id: doc._id }, changes: { url: doc.url, services: doc.services } }, at);
  await c.changed(businessId);
  return endpointView(doc, at);
}

async function _update(c: WebhookContext, by: WebhookActor, businessId: string, id: string, patch: WebhookEndpointPatch): Promise<WebhookEndpointView | null> {
  _check(patch, false);
  for (let tries = 0; tries < 5; tries++) {
    const doc = await _owned(c, businessId, id);
    if (!doc) return null;
    const set: Record<string, unknown> = {};
    const changes: Record<string, unknown> = {};
    const field = (name: "url" | "services" | "description" | "enabled", to: unknown) => {
      if (to === undefined || JSON.stringify(doc[name]) === JSON.stringify(to)) return;
      set[name] = to;
      changes[name] = { from: doc[name], to };
    };
    field("url", patch.url);
    field("services", patch.services && [...new Set(patch.services)]);
    field("description", patch.description);
    field("enabled", patch.enabled);
    if (set.enabled === false) set.disabled = { reason: "manual", at: c.now() };
    // Enabled again: the failing streak starts over.
    if (set.enabled === true) Object.assign(set, { disabled: null, failingSinceMs: null });
    if (Object.keys(set).length === 0) return endpointView(doc, c.now());
    const action = set.enabled === false ? "webhook_endpoint.disable" : set.enabled === true ? "webhook_endpoint.enable" : "webhook_endpoint.update";
    const updated = await writeEndpoint(c, doc, set, by, action, changes);
    if (updated) return endpointView(updated, c.now());
  }
  throw new Error("the webhook endpoint kept changing; try again");
}

async function _rotate(c: WebhookContext, by: WebhookActor, businessId: string, id: string): Promise<WebhookEndpointView | null> {
  for (let tries = 0; tries < 5; tries++) {
    const doc = await _owned(c, businessId, id);
    if (!doc) return null;
    const at = c.now();
    const until = at + c.overlapMs;
    // The old secrets keep signing until the overlap ends (an earlier end stays); expired ones go.
    const old = liveSecrets(doc, at).map((s) => ({ ...s, expiresAtMs: s.expiresAtMs === null ? until : Math.min(s.expiresAtMs, until) }));
    const secrets = [{ secret: newWebhookSecret(), createdAtMs: at, expiresAtMs: null }, ...old.filter((s) => s.expiresAtMs > at)];
    const updated = await writeEndpoint(c, doc, { secrets }, by, "webhook_endpoint.rotate", { secret: "rotated", overlapUntil: new Date(until).toISOString() });
    if (updated) return endpointView(updated, at);
  }
  throw new Error("the webhook endpoint kept changing; try again");
}

async function _reveal(c: WebhookContext, by: WebhookActor, businessId: string, id: string): Promise<{ secret: string } | null> {
  const doc = await _owned(c, businessId, id);
  const current = doc ? liveSecrets(doc, c.now())[0] : undefined;
  if (!doc || !current) return null;
  await appendAudit(c.audit, { actor: by.actor, requestId: by.requestId, action: "webhook_endpoint.reveal_secret", target: { type: "webhook_endpoint", id }, changes: {} }, c.now());
  return { secret: current.secret };
}

/** Throws GW_REQUEST_VALIDATION_FAILED naming each bad field (never repeating its value). */
function _check(input: WebhookEndpointPatch, creating: boolean): void {
  const bad: Array<{ field: string; detail: string }> = [];
  if (creating || input.url !== undefined) if (!_httpUrl(input.url)) bad.push({ field: "url", detail: "an http(s) URL" });
  if (creating || input.services !== undefined) {
    const s = input.services;
    if (!Array.isArray(s) || s.length === 0 || s.some((x) => !WEBHOOK_SERVICES.includes(x))) bad.push({ field: "services", detail: "one or more of: invoice, collections" });
  }
  if (input.description !== undefined && (typeof input.description !== "string" || input.description.length > MAX_DESCRIPTION)) bad.push({ field: "description", detail: `text of at most ${MAX_DESCRIPTION} characters` });
  if (input.enabled !== undefined && typeof input.enabled !== "boolean") bad.push({ field: "enabled", detail: "true or false" });
  if (bad.length > 0)
    throw gwError("GW_REQUEST_VALIDATION_FAILED", { violations: bad.map((b) => ({ location: "body", pointer: `/${b.field}`, code: "FORMAT", detail: b.detail })) });
}

function _httpUrl(u: unknown): boolean {
  if (typeof u !== "string" || u.length > 2000) return false;
  try {
    const p = new URL(u);
    return p.protocol === "https:" || p.protocol === "http:";
  } catch {
    return false;
  }
}
