/**
 * The team: every member of the business (name, e-mail, role, state, two-factor), and for owners
 * the invitation form (an e-mail with a link that works once, until it expires), role changes and
 * removal. A business always keeps one owner; nobody removes or demotes themselves here. A user id of
 * another business answers 404.
 */
import type { RequestContext } from "../../../core/context.ts";
import { isDuplicateKeyError } from "../../../adapters/ports.ts";
import { EMPTY, html, postForm, radioGroup, segment, textField, type SafeHtml } from "../../../core/ui/index.ts";
import { acting, viewing } from "../auth.ts";
import { back, badge, notFound, screen } from "../chrome.ts";
import { isRole, type DashboardEnv, type Viewer } from "../env.ts";
import { absoluteLink, sendMail } from "../mail.ts";
import { getPage, postPage } from "../routes.ts";
import type { DashboardSection } from "../sections.ts";
import { isEmail, normalizeEmail, type DashboardUser } from "../users.ts";
import { issueLink } from "./links.ts";

const ROLE_CHOICES = [
  { value: "viewer", label: "viewer: reads everything, changes nothing" },
  { value: "developer", label: "developer: also keys and webhooks" },
  { value: "owner", label: "owner: also the team" },
];

export const teamSection: DashboardSection = {
  nav: { label: "Team", path: "/team" },
  routes: (env) => [
    getPage(env, "/team", "the team", viewing(env, (ctx, who) => teamScreen(env, ctx, who))),
    postPage(env, "/team/invitations", "invite a team member by e-mail (owner)", acting(env, "owner", (ctx, who, form) => inviteAction(env, ctx, who, form))),
    postPage(env, "/team/:userId/role", "change a member's role (owner)", acting(env, "owner", (ctx, who, form) => roleAction(env, ctx, who, form))),
    postPage(env, "/team/:userId/removal", "remove a member (owner)", acting(env, "owner", (ctx, who, form) => removeAction(env, ctx, who, form))),
  ],
};

export async function teamScreen(env: DashboardEnv, ctx: RequestContext, who: Viewer): Promise<Response> {
  const team = await env.users.team(who.business.id);
  const owner = who.role === "owner";
  const rows = team.map(
    (u) => html`<tr><td>${u.name || "—"}</td><td>${u.email}</td><td>${u.role}</td><td>${u.status === "invited" ? badge("invited", "warn") : badge("active", "ok")}</td>
<td>${u.totp ? badge("on", "ok") : badge("off", "muted")}</td><td>${owner && u._id !== who.user._id ? _memberForms(env, who, u) : EMPTY}</td></tr>`,
  );
  const table = html`<div class="table-wrap"><table><thead><tr><th scope="col">Name</th><th scope="col">E-mail</th><th scope="col">Role</th><th scope="col">State</th><th scope="col">Two-factor</th><th scope="col"><span class="muted">Actions</span></th></tr></thead>
<tbody>${rows}</tbody></table></div>`;
  const invite = owner
    ? html`<section class="panel" aria-labelledby="invite-h"><h2 id="invite-h">Invite a member</h2>${postForm({
        action: env.paths.href("/team/invitations"),
        csrf: env.cookies.csrfToken(who.session),
        submit: "Send invitation",
        fields: html`${textField({ name: "email", label: "E-mail", required: true, autocomplete: "off", maxLength: 254 })}${radioGroup("role", "Role", ROLE_CHOICES)}`,
      })}</section>`
    : html`<p class="muted">Only owners invite members and change roles.</p>`;
  return screen(env, ctx, who, { title: "Team", current: "/team", body: html`<section class="panel" aria-labelledby="team-h"><h2 id="team-h">Members</h2>${table}</section>${invite}` });
}

/** POST /team/invitations: a new invited member (or a fresh link for one still invited), e-mailed. */
export async function inviteAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const page = env.paths.href("/team");
  const email = normalizeEmail(form.email ?? "");
  const role = form.role ?? "";
  if (!isEmail(email) || !isRole(role)) return back(env, ctx, page, { kind: "error", text: "Not sent: enter an e-mail address and choose a role." });
  let user = await env.users.byEmail(who.business.id, email);
  if (user && user.status === "active") return back(env, ctx, page, { kind: "error", text: `Not sent: ${email} is already a member.` });
  if (user) user = await env.users.update(user._id, { role, status: "invited", invitedBy: who.user._id });
  else {
    try {
      user = await env.users.create({ businessId: who.business.id, email, name: "", role, status: "invited", password: null, invitedBy: who.user._id });
    } catch (e) {
      if (!isDuplicateKeyError(e)) throw e;
      return back(env, ctx, page, { kind: "error", text: "Not sent: that address was invited at the same moment; reload the page." });
    }
  }
  const token = await issueLink(env, "invitation", user!);
  const days = Math.round(env.config.invitationTtlMs / 86_400_000);
  const sent = await sendMail(env, ctx, "invitation", email, `You are invited to the Gatehouse dashboard of ${who.business.name}`, [
    `${who.user.name || who.user.email} invited you to the Gatehouse dashboard of ${who.business.name} as ${role}.`,
    `Accept within ${days} days, choose a password, then set up two-factor authentication:`,
    absoluteLink(env, ctx, `/invitations/${token}`),
    "If you did not expect this, ignore this e-mail.",
  ].join("\n"));
  env.kit.log.event("dashboard_member_invited", { requestId: ctx.requestId, actor: `dashboard:${who.user._id}`, userId: user!._id, role, sent });
  if (!sent) return back(env, ctx, page, { kind: "error", text: "The invitation is saved but the e-mail could not be sent; try again in a moment." });
  return back(env, ctx, page, { kind: "ok", text: `Invitation sent to ${email}.` });
}

/** POST /team/:userId/role. */
export async function roleAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const page = env.paths.href("/team");
  const member = await _member(env, who, ctx.params.userId ?? "");
  if (!member) return notFound(env, ctx, who);
  const role = form.role ?? "";
  if (!isRole(role)) return back(env, ctx, page, { kind: "error", text: "Not changed: choose a role." });
  if (member._id === who.user._id) return back(env, ctx, page, { kind: "error", text: "Not changed: ask another owner to change your own role." });
  await env.users.update(member._id, { role });
  env.kit.log.event("dashboard_member_role_changed", { requestId: ctx.requestId, actor: `dashboard:${who.user._id}`, userId: member._id, from: member.role, to: role });
  return back(env, ctx, page, { kind: "ok", text: `${member.email} is now ${role}.` });
}

/** POST /team/:userId/removal (confirmed): the member's sessions end at once. */
export async function removeAction(env: DashboardEnv, ctx: RequestContext, who: Viewer, form: Record<string, string>): Promise<Response> {
  const page = env.paths.href("/team");
  const member = await _member(env, who, ctx.params.userId ?? "");
  if (!member) return notFound(env, ctx, who);
  if (form.confirm !== "yes") return back(env, ctx, page, { kind: "error", text: "Not removed: tick the confirmation box." });
  if (member._id === who.user._id) return back(env, ctx, page, { kind: "error", text: "Not removed: ask another owner to remove you." });
  // The e-mail is freed for a later invitation: the removed record keeps its id for the logs only.
  await env.users.update(member._id, { status: "removed", email: `removed+${member._id}@invalid`, sessionsValidAfter: env.now(), password: null });
  env.kit.log.event("dashboard_member_removed", { requestId: ctx.requestId, actor: `dashboard:${who.user._id}`, userId: member._id });
  return back(env, ctx, page, { kind: "ok", text: `${member.email} was removed.` });
}

// --- Internal helpers ---

async function _member(env: DashboardEnv, who: Viewer, userId: string): Promise<DashboardUser | null> {
  if (!/^usr_[A-Za-z0-9_-]{1,40}$/.test(userId)) return null;
  const u = await env.users.get(userId);
  return u && u.businessId === who.business.id && u.status !== "removed" ? u : null;
}

function _memberForms(env: DashboardEnv, who: Viewer, u: DashboardUser): SafeHtml {
  const csrf = env.cookies.csrfToken(who.session);
  const base = `/team/${segment(u._id)}`;
  const roleSelect = html`<label for="r-${u._id}">Role</label><select id="r-${u._id}" name="role">${ROLE_CHOICES.map((c) => html`<option value="${c.value}"${c.value === u.role ? html` selected` : EMPTY}>${c.value}</option>`)}</select>`;
  return html`${postForm({ action: env.paths.href(`${base}/role`), csrf, layout: "inline", button: "secondary", submit: "Change role", fields: roleSelect })}${postForm({
    action: env.paths.href(`${base}/removal`),
    csrf,
    layout: "inline",
    button: "danger",
    submit: "Remove",
    fields: html`<input type="checkbox" id="rm-${u._id}" name="confirm" value="yes" required> <label for="rm-${u._id}" class="inline-label">Remove ${u.email}</label>`,
  })}`;
}
