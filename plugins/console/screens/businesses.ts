/**
 * Businesses, read-only: the list, and one business with its domains (mode, approval, a pending mode
 * change while draining, sign fee) and its keys (scheme, hint, revoked, expiry, IP allowlist; never
 * a key). Read from the directory's collections as the Admin API's reads do. An admin also gets the
 * forms of business-actions.ts (key create / roll / revoke, mode change and approval, sign fee and
 * autoTransmit), wallet.ts (credit, suspension) and represented.ts (the represented businesses, and
 * their identity reviews with the decisions).
 */
import type { RequestContext } from "../../../core/context.ts";
import { openDirectoryStore } from "../../../core/directory-store.ts";
import { formatNgn } from "../../../core/money.ts";
import { html, segment, type Session } from "../../../core/ui/index.ts";
import { EMPTY, badge, facts, screen } from "../chrome.ts";
import { createKeyForm, domainActions, domainSettingsForm, keyActions } from "./business-actions.ts";
import { representedPanel, reviewsPanel } from "./represented.ts";
import { walletPanel } from "./wallet.ts";
import type { ConsoleEnv } from "../env.ts";

const BUSINESS_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LIMIT = 200;

export async function businessesScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const page = await openDirectoryStore(env.store).businesses.find({}, { sort: [{ field: "_id", direction: 1 }], limit: LIMIT });
  const body = html`<div class="table-wrap"><table><thead><tr><th scope="col">Business</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Invoice gateway</th><th scope="col">Collections</th></tr></thead><tbody>${page.items.map(
    (b) => html`<tr><td><a href="${env.paths.href(`/businesses/${segment(b._id)}`)}">${b._id}</a></td><td>${b.name}</td><td>${b.state}</td><td>${b.gateway ? "yes" : "no"}</td><td>${b.collections ? "yes" : "no"}</td></tr>`,
  )}</tbody></table></div>${page.nextCursor ? html`<p class="muted">The first ${LIMIT} businesses are shown.</p>` : html``}`;
  return screen(env, ctx, session, { title: "Businesses", current: "/businesses", body });
}

export async function businessScreen(env: ConsoleEnv, ctx: RequestContext, session: Session): Promise<Response> {
  const id = ctx.params.businessId ?? "";
  const dir = openDirectoryStore(env.store);
  const business = BUSINESS_ID.test(id) ? await dir.businesses.get(id) : null;
  if (!business) return screen(env, ctx, session, { title: "Not found", current: "/businesses", status: 404, body: html`<p>No such business.</p>` });
  const [domains, keys] = await Promise.all([dir.domains.find({ businessId: id }, { limit: LIMIT }), dir.credentials.find({ businessId: id }, { limit: LIMIT })]);
  const now = env.now();
  const [wallet, represented, reviews] = business.gateway
    ? await Promise.all([walletPanel(env, session, id), representedPanel(env, id), reviewsPanel(env, session, id)])
    : [EMPTY, EMPTY, EMPTY];
  const admin = session.role === "admin";
  const actionHead = admin ? html`<th scope="col">Action</th>` : EMPTY;
  const body = html`<section class="panel">${facts([
    ["Business ID", business._id],
    ["Name", business.name],
    ["State", business.state],
    ["Invoice gateway", business.gateway ? "yes" : "no"],
    ["Collections", business.collections ? "yes" : "no"],
    ["Updated", business.updatedAt],
  ])}</section>
<h2>Domains</h2>${
    domains.items.length === 0
      ? html`<p>None.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Host</th><th scope="col">Mode</th><th scope="col">Approval</th><th scope="col">Pending mode</th><th scope="col">Sign fee (NGN)</th><th scope="col">Auto-transmit</th>${actionHead}</tr></thead><tbody>${domains.items.map(
          (d) => html`<tr><td>${d._id}</td><td>${d.mode}</td><td>${badge(d.approval, d.approval === "approved" ? "ok" : "warn")}</td><td>${
            d.pendingMode ? `${d.pendingMode} (draining since ${d.drainingSince ?? "?"})` : "—"
          }</td><td>${formatNgn(d.signFeeKobo)}</td><td>${d.autoTransmit ? "yes" : "no"}</td>${admin ? html`<td>${domainActions(env, session, id, d)} ${domainSettingsForm(env, session, id, d)}</td>` : EMPTY}</tr>`,
        )}</tbody></table></div>`
  }
<h2>Keys</h2>${
    keys.items.length === 0
      ? html`<p>None.</p>`
      : html`<div class="table-wrap"><table><thead><tr><th scope="col">Key ID</th><th scope="col">Scheme</th><th scope="col">Hint</th><th scope="col">Status</th><th scope="col">IP allowlist</th><th scope="col">Source</th>${actionHead}</tr></thead><tbody>${keys.items.map(
          (k) => html`<tr><td>${k.credentialId}</td><td>${k.scheme}</td><td>${k.hint ?? "—"}</td><td>${
            k.revoked ? badge("revoked", "bad") : k.expiresAt !== null && k.expiresAt <= now ? badge("expired", "muted") : k.expiresAt !== null ? badge(`valid until ${new Date(k.expiresAt).toISOString()}`, "warn") : badge("valid", "ok")
          }</td><td>${k.ipWhitelisted.join(", ") || "any"}</td><td>${k.source}</td>${admin && !k.revoked && (k.expiresAt === null || k.expiresAt > now) ? html`<td>${keyActions(env, session, id, k.credentialId, k.ipWhitelisted)}</td>` : admin ? html`<td></td>` : EMPTY}</tr>`,
        )}</tbody></table></div>`
  }
${admin ? createKeyForm(env, session, id) : html`<p class="muted">Your role is viewer: the businesses are read-only for you.</p>`}
${wallet}
${represented}
${reviews}`;
  return screen(env, ctx, session, { title: business.name, current: "/businesses", body });
}
