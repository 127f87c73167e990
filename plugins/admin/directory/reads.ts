/**
 * The directory-admin reads: businesses, domains, keys (never their values) and the audit log.
 * Lists page by a unique field (the cursor is its last value, base64url) or, for the audit log,
 * newest first by the store's own cursor.
 */
import { isInvalidQueryError, type Collection, type Doc, type Filter } from "../../../adapters/ports.ts";
import { DEFAULT_LIMIT, type AuditListInput, type DomainListInput, type KeyListInput, type ListLimit } from "../directory-schemas.ts";
import type { DirectoryEnv } from "./env.ts";
import { badCursor, notFound } from "./failures.ts";
import { domainOf, keyOf } from "./lookups.ts";
import {
  auditView,
  businessView,
  domainView,
  keyView,
  TO_SCHEME,
  type AuditView,
  type BusinessView,
  type DomainView,
  type KeyView,
  type ListPage,
} from "./views.ts";

export async function listBusinesses(env: DirectoryEnv, q: ListLimit): Promise<ListPage<BusinessView>> {
  const page = await _page(env.store.businesses, {}, "_id", q);
  return { data: page.items.map(businessView), nextCursor: page.nextCursor };
}

export async function getBusiness(env: DirectoryEnv, id: string): Promise<BusinessView & { domains: string[] }> {
  const doc = await env.store.businesses.get(id);
  if (!doc) throw notFound("business");
  const domains = await env.store.domains.find({ businessId: id }, { sort: [{ field: "_id", direction: 1 }], limit: 1000 });
  return { ...businessView(doc), domains: domains.items.map((d) => d._id) };
}

export async function listDomains(env: DirectoryEnv, q: DomainListInput): Promise<ListPage<DomainView>> {
  const filter: Filter = {};
  if (q.businessId) filter.businessId = q.businessId;
  if (q.approval) filter.approval = q.approval;
  const page = await _page(env.store.domains, filter, "_id", q);
  return { data: page.items.map(domainView), nextCursor: page.nextCursor };
}

export async function getDomain(env: DirectoryEnv, host: string): Promise<DomainView> {
  return domainView(await domainOf(env, host));
}

export async function listKeys(env: DirectoryEnv, q: KeyListInput): Promise<ListPage<KeyView>> {
  const filter: Filter = {};
  if (q.businessId) filter.businessId = q.businessId;
  if (q.scheme) filter.scheme = TO_SCHEME[q.scheme];
  const t = env.now();
  if (q.status === "revoked") filter.revoked = true;
  if (q.status === "expired") Object.assign(filter, { revoked: false, expiresAt: { $lte: t } });
  if (q.status === "active") Object.assign(filter, { revoked: false, $or: [{ expiresAt: null }, { expiresAt: { $gt: t } }] });
  const page = await _page(env.store.credentials, filter, "credentialId", q);
  return { data: page.items.map((d) => keyView(d, t)), nextCursor: page.nextCursor };
}

export async function getKey(env: DirectoryEnv, keyId: string): Promise<KeyView> {
  return keyView(await keyOf(env, keyId), env.now());
}

export async function listAudit(env: DirectoryEnv, q: AuditListInput): Promise<ListPage<AuditView>> {
  const filter: Filter = {};
  if (q.targetId) filter["target.id"] = q.targetId;
  if (q.action) filter.action = q.action;
  let page;
  try {
    page = await env.store.audit.find(filter, {
      sort: [{ field: "atMs", direction: -1 }],
      limit: q.limit ?? DEFAULT_LIMIT,
      cursor: q.cursor ?? null,
    });
  } catch (e) {
    if (isInvalidQueryError(e)) throw badCursor();
    throw e;
  }
  return { data: page.items.map(auditView), nextCursor: page.nextCursor };
}

// --- Internal helpers ---

/** Pages a collection by a unique string field; the cursor is that field's last value. */
async function _page<T extends Doc>(coll: Collection<T>, filter: Filter, field: string, q: ListLimit): Promise<{ items: T[]; nextCursor: string | null }> {
  const limit = q.limit ?? DEFAULT_LIMIT;
  const f: Filter = { ...filter };
  if (q.cursor !== undefined) {
    const after = Buffer.from(q.cursor, "base64url").toString("utf8");
    if (after === "") throw badCursor();
    f[field] = { $gt: after };
  }
  const page = await coll.find(f, { sort: [{ field, direction: 1 }], limit: limit + 1 });
  const items = page.items.slice(0, limit);
  const last = items[items.length - 1];
  return {
    items,
    nextCursor: page.items.length > limit && last ? Buffer.from(String(last[field]), "utf8").toString("base64url") : null,
  };
}
