/**
 * A business's represented businesses and their identity reviews, on the business page: the list
 * (read from the invoice kit's collection, by the business's index), the pending reviews (the
 * onboarding plugin's review list, as `GET /admin/identity-reviews?businessId=`), and an admin's
 * decisions: approve or reject a review of additive drift, or apply a protected change as a
 * migration. Each decision calls the onboarding plugin's service offered through the kit
 * (IDENTITY_REVIEW_OPERATIONS): the Admin API routes' validation, idempotency (the form's key) and
 * records. Never a regulator credential or QR material (only its version).
 */
import type { RequestContext } from "../../../core/context.ts";
import { EMPTY, html, postForm, segment, type SafeHtml, type Session } from "../../../core/ui/index.ts";
import { openRepresentedBusinesses } from "../../invoice/represented-businesses.ts";
import { badge, section } from "../chrome.ts";
import type { ConsoleEnv } from "../env.ts";
import { runOperatorChange } from "./business-actions.ts";

const LIMIT = 50;

/** The represented businesses section of a business page. */
export function representedPanel(env: ConsoleEnv, businessId: string): Promise<SafeHtml> {
  return section("Represented businesses", async () => {
    const page = await openRepresentedBusinesses(env.store).find({ businessId }, { sort: [{ field: "createdAt", direction: -1 }], limit: LIMIT });
    if (page.items.length === 0) return html`<p>None.</p>`;
    return html`<div class="table-wrap"><table><thead><tr><th scope="col">Gateway sub-business ID</th><th scope="col">State</th><th scope="col">Name at the regulator</th><th scope="col">TIN</th><th scope="col">Regulator business ID</th><th scope="col">Identity version</th><th scope="col">QR material version</th><th scope="col">Onboarded</th></tr></thead><tbody>${page.items.map(
      (s) =>
        html`<tr><td>${s.gatewaySubBusinessId}</td><td>${s.state}</td><td>${s.identity.businessName}</td><td>${s.identity.tin}</td><td>${s.externalBusinessId}</td><td>${s.identityVersion}</td><td>${s.crypto ? s.cryptoVersion : "—"}</td><td>${s.createdAt}</td></tr>`,
    )}</tbody></table></div>${page.nextCursor ? html`<p class="muted">The newest ${LIMIT} are shown.</p>` : EMPTY}`;
  });
}

/** The pending identity reviews of a business, with the decision forms for an admin. */
export function reviewsPanel(env: ConsoleEnv, session: Session, businessId: string): Promise<SafeHtml> {
  return section("Identity reviews", async () => {
    if (!env.identity) return html`<p class="muted">The onboarding plugin is not part of this gateway.</p>`;
    const page = await env.identity.reviews({ status: "pending", businessId, limit: String(LIMIT) });
    if (page.data.length === 0) return html`<p>No pending reviews.</p>`;
    return html`<div class="table-wrap"><table><thead><tr><th scope="col">Review</th><th scope="col">Sub-business</th><th scope="col">State</th><th scope="col">Changed</th><th scope="col">Kind</th><th scope="col">Opened</th>${session.role === "admin" ? html`<th scope="col">Decision</th>` : EMPTY}</tr></thead><tbody>${page.data.map(
      (r) => _reviewRow(env, session, businessId, r as unknown as _Review),
    )}</tbody></table></div>${session.role === "admin" ? EMPTY : html`<p class="muted">Your role is viewer: decisions need an operator key.</p>`}`;
  });
}

/** POST …/sub-businesses/:gatewaySubBusinessId/identity-reviews/:reviewId/decision (confirmed). */
export async function decideReviewAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const { gatewaySubBusinessId = "", reviewId = "" } = ctx.params;
  return runOperatorChange(env, ctx, session, form, "identity.review_decision", (op) => _identity(env).decideReview(op, gatewaySubBusinessId, reviewId, { decision: form.decision ?? "" }), true);
}

/** POST …/sub-businesses/:gatewaySubBusinessId/identity-migrations (confirmed): the protected change, audited. */
export async function migrateAction(env: ConsoleEnv, ctx: RequestContext, session: Session, form: Record<string, string>): Promise<Response> {
  const { gatewaySubBusinessId = "" } = ctx.params;
  return runOperatorChange(env, ctx, session, form, "identity.migration", (op) => _identity(env).migrate(op, gatewaySubBusinessId, { reviewId: form.reviewId ?? "" }), true);
}

// --- Internal helpers ---

interface _Review {
  reviewId: string;
  gatewaySubBusinessId: string;
  state: string;
  changedFields: string[];
  requiresProtectedMigration: boolean;
  createdAt: string;
}

function _identity(env: ConsoleEnv): NonNullable<ConsoleEnv["identity"]> {
  if (!env.identity) throw new Error("the onboarding plugin's identity review operations are not offered in this gateway");
  return env.identity;
}

function _reviewRow(env: ConsoleEnv, session: Session, businessId: string, r: _Review): SafeHtml {
  const kind = r.requiresProtectedMigration ? badge("protected: needs a migration", "bad") : badge("additive drift", "warn");
  const forms = session.role === "admin" ? html`<td>${_decisionForms(env, session, businessId, r)}</td>` : EMPTY;
  return html`<tr><td>${r.reviewId}</td><td>${r.gatewaySubBusinessId}</td><td>${r.state}</td><td>${r.changedFields.join(", ")}</td><td>${kind}</td><td>${r.createdAt}</td>${forms}</tr>`;
}

function _decisionForms(env: ConsoleEnv, session: Session, businessId: string, r: _Review): SafeHtml {
  const base = `/businesses/${segment(businessId)}/sub-businesses/${segment(r.gatewaySubBusinessId)}`;
  const csrf = env.cookies.csrfToken(session);
  const confirm = (id: string, label: string) => html`<input type="checkbox" id="${id}" name="confirm" value="yes" required> <label for="${id}" class="inline-label">${label}</label>`;
  const reject = postForm({
    action: env.paths.href(`${base}/identity-reviews/${segment(r.reviewId)}/decision`),
    csrf,
    idempotent: true,
    layout: "inline",
    button: "secondary",
    submit: "Reject",
    fields: html`<input type="hidden" name="decision" value="reject">${confirm(`rj-${r.reviewId}`, "Keep the current identity")}`,
  });
  if (r.requiresProtectedMigration)
    return html`${postForm({
      action: env.paths.href(`${base}/identity-migrations`),
      csrf,
      idempotent: true,
      layout: "inline",
      button: "danger",
      submit: "Apply migration",
      fields: html`<input type="hidden" name="reviewId" value="${r.reviewId}">${confirm(`mg-${r.reviewId}`, "The entity ID, business ID or TIN really changed: migrate (audited)")}`,
    })}${reject}`;
  return html`${postForm({
    action: env.paths.href(`${base}/identity-reviews/${segment(r.reviewId)}/decision`),
    csrf,
    idempotent: true,
    layout: "inline",
    submit: "Approve",
    fields: html`<input type="hidden" name="decision" value="approve">${confirm(`ok-${r.reviewId}`, "Apply the new identity version")}`,
  })}${reject}`;
}
