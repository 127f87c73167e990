/**
 * API keys of the signed-in user's business: the list (id, scheme, hint, created, last used from
 * the request log's recent entries, IP allowlist, status) and one key's page, with the forms of
 * key-forms.ts for developers and owners. Keys are read from the tenant directory's store; only keys
 * whose business is the viewer's are ever shown (another business's key id answers 404).
 */
import type { RequestContext } from "../../../core/context.ts";
import { openDirectoryStore, type CredentialDoc } from "../../../core/directory-store.ts";
import { EMPTY, html, segment, type SafeHtml } from "../../../core/ui/index.ts";
import { badge, facts, notFound, screen } from "../chrome.ts";
import { hasRole, type DashboardEnv, type Viewer } from "../env.ts";
import { RECENT_REQUESTS, recentKeyUse } from "../key-usage.ts";
import { createKeyForm, keyForms } from "./key-forms.ts";

const LIMIT = 200;
export const SCHEME_LABEL: Readonly<Record<string, string>> = { apiKey: "gateway (x-api-key)", bearer: "collections (Bearer)" };

/** The business's key `keyId`, or null (unknown, an operator key, or another business's). */
export async function businessKey(env: DashboardEnv, who: Viewer, keyId: string): Promise<CredentialDoc | null> {
  if (keyId.length === 0 || keyId.length > 64) return null;
  const doc = await openDirectoryStore(env.store).credentials.findOne({ credentialId: keyId });
  return doc && doc.businessId === who.business.id && doc.scheme !== "admin" ? doc : null;
}

export async function keysScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const [page, used] = await Promise.all([
    openDirectoryStore(env.store).credentials.find({ businessId: who.business.id }, { sort: [{ field: "createdAt", direction: -1 }], limit: LIMIT }),
    recentKeyUse(env.store, who.business.id),
  ]);
  const keys = page.items.filter((k) => k.scheme !== "admin");
  const now = env.now();
  const rows = keys.map(
    (k) => html`<tr><td><a href="${env.paths.href(`/keys/${segment(k.credentialId)}`)}">${k.credentialId}</a></td><td>${SCHEME_LABEL[k.scheme] ?? k.scheme}</td><td><code>${k.hint ?? "—"}</code></td>
<td>${k.createdAt}</td><td>${_lastUsed(used.get(k.credentialId))}</td><td>${allowlist(k)}</td><td>${keyStatus(k, now)}</td></tr>`,
  );
  const table = html`<div class="table-wrap"><table><caption class="muted">Keys are shown by id and hint only: a key's value is shown once, when it is created or rolled.</caption>
<thead><tr><th scope="col">Key ID</th><th scope="col">Scheme</th><th scope="col">Hint</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">IP allowlist</th><th scope="col">Status</th></tr></thead>
<tbody>${rows.length > 0 ? rows : html`<tr><td colspan="7">No keys yet.</td></tr>`}</tbody></table></div>`;
  const manage = hasRole(who.role, "developer") ? createKeyForm(env, who) : html`<p class="muted">Your role is ${who.role}: keys are read-only for you.</p>`;
  return screen(env, ctx, who, { title: "API keys", current: "/keys", body: html`<section class="panel" aria-labelledby="keys-h"><h2 id="keys-h">Keys</h2>${table}</section>${manage}` });
}

export async function keyScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const k = await businessKey(env, who, ctx.params.keyId ?? "");
  if (!k) return notFound(env, ctx, who);
  const now = env.now();
  const used = await recentKeyUse(env.store, who.business.id);
  const details = facts([
    ["Key ID", k.credentialId],
    ["Scheme", SCHEME_LABEL[k.scheme] ?? k.scheme],
    ["Hint", k.hint],
    ["Status", keyStatus(k, now)],
    ["Created", k.createdAt],
    ["Last used", _lastUsed(used.get(k.credentialId))],
    ["IP allowlist", allowlist(k)],
    ["Rolled from", k.rolledFrom],
    ["Rolled to", k.rolledTo],
  ]);
  const forms = hasRole(who.role, "developer") && _isLive(k, now) ? keyForms(env, who, k) : EMPTY;
  return screen(env, ctx, who, { title: `Key ${k.credentialId}`, current: "/keys", body: html`<section class="panel">${details}</section>${forms}<p><a href="${env.paths.href("/keys")}">All keys</a></p>` });
}

export function keyStatus(k: CredentialDoc, now: number): SafeHtml {
  if (k.revoked) return badge("revoked", "bad");
  if (k.expiresAt !== null && k.expiresAt <= now) return badge("expired", "muted");
  if (k.expiresAt !== null) return html`${badge("active", "ok")} <span class="muted">until ${new Date(k.expiresAt).toISOString()}</span>`;
  return badge("active", "ok");
}

export function allowlist(k: CredentialDoc): SafeHtml | string {
  return k.ipWhitelisted.length > 0 ? k.ipWhitelisted.join(", ") : html`<span class="muted">any address</span>`;
}

// --- Internal helpers ---

function _isLive(k: CredentialDoc, now: number): boolean {
  return !k.revoked && (k.expiresAt === null || k.expiresAt > now);
}

/** The newest request with the key among the business's recent ones (key-usage.ts), or a plain "not recently". */
function _lastUsed(at: number | undefined): SafeHtml {
  return at === undefined ? html`<span class="muted">not in the last ${RECENT_REQUESTS} requests</span>` : html`${new Date(at).toISOString()}`;
}
