/**
 * The dashboard's frame around every screen: the kit's layout with the sections' navigation, the
 * business's environment (TEST or LIVE) at the top of every page, the signed-in user with role
 * and a sign-out form, and the flash message a POST-redirect-GET left (read once, then cleared).
 * Also the pages for what went wrong: a dependency that cannot answer (503, named), a refusal (403),
 * not found (404, the same for "not yours" as for "does not exist") and an unexpected failure (500
 * with the request id only).
 */
import { isDependencyUnavailableError } from "../../adapters/ports.ts";
import type { RequestContext } from "../../core/context.ts";
import { describeError } from "../../core/log.ts";
import { EMPTY, html, isSafeHtml, layout, page, postForm, seeOther, type Flash, type SafeHtml } from "../../core/ui/index.ts";
import { FLASH_COOKIE, type DashboardEnv, type Viewer } from "./env.ts";

export const APP_NAME = "Gatehouse dashboard";

export interface ScreenOptions {
  title: string;
  /** The nav path of the screen. */
  current?: string;
  body: SafeHtml;
  status?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
  /** Set-Cookie values to add (a fresh TOTP mark). */
  cookies?: readonly string[];
}

/** A screen for a signed-in team member. */
export function screen(env: DashboardEnv, ctx: RequestContext, who: Viewer, o: ScreenOptions): Response {
  const flash = env.cookies.unseal(ctx.req.headers.get("cookie"), FLASH_COOKIE) as Flash | null;
  const signOut = postForm({ action: env.paths.href("/sign-out"), csrf: env.cookies.csrfToken(who.session), submit: "Sign out", layout: "inline", button: "secondary" });
  const body = layout({
    app: APP_NAME,
    paths: env.paths,
    title: o.title,
    nav: env.nav,
    current: o.current,
    user: { label: `${who.user.email} (${who.role}) · ${who.business.name} · ${who.environment}`, signOut },
    flash: _isFlash(flash) ? flash : null,
    body: html`${environmentBanner(who.environment, who.business.name)}${o.body}`,
  });
  const res = page(ctx, o.status ?? 200, body, { "cache-control": "no-store", ...o.headers });
  const cookies = [...(o.cookies ?? []), ...(flash ? [`${FLASH_COOKIE}=; Path=${env.paths.public || "/"}; Max-Age=0; HttpOnly; SameSite=Strict`] : [])];
  for (const c of cookies) res.headers.append("set-cookie", c);
  return res;
}

/** The environment strip every signed-in page starts with (TEST: a warning colour; LIVE: plain). */
export function environmentBanner(environment: string, businessName: string): SafeHtml {
  const live = environment === "LIVE";
  return html`<p class="flash ${live ? "ok" : "warn"}" role="note" data-environment="${environment}"><strong>${environment}</strong> environment · ${businessName}${
    live ? EMPTY : html` — test data; nothing here reaches the regulator's live systems or moves real money.`
  }</p>`;
}

/**
 * A page with no session (sign-in, links from e-mails, refusals before sign-in). On a business's own
 * host it starts with that business's environment strip too; a collections host serves every
 * business, so there is none to show before sign-in.
 */
export function bare(env: DashboardEnv, ctx: RequestContext, status: number, title: string, body: SafeHtml, flash: Flash | null = null, headers: Record<string, string> = {}): Response {
  const business = ctx.hostKind === "gateway" && ctx.domain ? env.kit.directory.business(ctx.domain.businessId) : null;
  const strip = business ? environmentBanner(business.state, business.name) : EMPTY;
  return page(ctx, status, layout({ app: APP_NAME, paths: env.paths, title, flash, body: html`${strip}${body}` }), { "cache-control": "no-store", ...headers });
}

export function forbidden(env: DashboardEnv, ctx: RequestContext, why: string): Response {
  env.kit.log.warn("dashboard_request_refused", { requestId: ctx.requestId, path: ctx.path, reason: why });
  return bare(env, ctx, 403, "Not allowed", html`<p>${why}</p><p><a href="${env.paths.href("")}">Back to the dashboard</a></p>`);
}

/** 404 for anything not found or not the viewer's business (never says which). */
export function notFound(env: DashboardEnv, ctx: RequestContext, who: Viewer | null): Response {
  const body = html`<p>There is nothing here, or it belongs to another business.</p><p><a href="${env.paths.href("")}">Back to the dashboard</a></p>`;
  return who ? screen(env, ctx, who, { title: "Not found", body, status: 404 }) : bare(env, ctx, 404, "Not found", body);
}

/** Runs a screen; a dependency outage or an unexpected failure becomes a page, never a stack trace. */
export async function guarded(env: DashboardEnv, ctx: RequestContext, who: Viewer | null, fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (e) {
    if (isDependencyUnavailableError(e)) {
      const body = html`<div class="flash error" role="alert"><p><strong>A service the dashboard needs is unavailable</strong> (${e.dependency}). Try again in a moment; the API may still answer.</p></div>`;
      return who ? screen(env, ctx, who, { title: "Temporarily unavailable", body, status: 503 }) : bare(env, ctx, 503, "Temporarily unavailable", body);
    }
    env.kit.log.error("dashboard_page_failed", { requestId: ctx.requestId, path: ctx.path, error: describeError(e) });
    return bare(env, ctx, 500, "Something went wrong", html`<p>The dashboard could not draw this page. Request id: <code>${ctx.requestId}</code>.</p>`);
  }
}

/** A panel with a heading; a dependency outage inside it is said in place, the rest of the page still draws. */
export async function section(title: string, fn: () => Promise<SafeHtml>): Promise<SafeHtml> {
  const id = `s-${title.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
  try {
    return html`<section class="panel" aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${await fn()}</section>`;
  } catch (e) {
    if (!isDependencyUnavailableError(e)) throw e;
    return html`<section class="panel" aria-labelledby="${id}"><h2 id="${id}">${title}</h2><p class="flash error" role="alert">This section could not be read (${e.dependency} is unavailable).</p></section>`;
  }
}

/** A definition list of facts; null values show as "—"; an html fragment (a badge) is kept as markup. */
export function facts(rows: ReadonlyArray<readonly [string, unknown]>): SafeHtml {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null || v === undefined || v === "" ? "—" : isSafeHtml(v) ? v : String(v)}</dd>`)}</dl>`;
}

export function badge(text: string, kind: "ok" | "bad" | "warn" | "muted"): SafeHtml {
  return html`<span class="badge ${kind}">${text}</span>`;
}

/** 303 back to `location` with a flash message (POST-redirect-GET), plus any extra Set-Cookie. */
export function back(env: DashboardEnv, ctx: RequestContext, location: string, flash: Flash, headers: Array<[string, string]> = []): Response {
  return seeOther(ctx, location, [["set-cookie", env.cookies.seal(FLASH_COOKIE, flash, 60_000, isSecure(ctx))], ...headers]);
}

/** Whether the browser reached us over HTTPS (cookies get Secure). */
export function isSecure(ctx: RequestContext): boolean {
  return (ctx.req.headers.get("origin") ?? "").startsWith("https:") || ctx.req.url.startsWith("https:");
}

// --- Internal helpers ---

function _isFlash(v: unknown): v is Flash {
  return typeof v === "object" && v !== null && typeof (v as Flash).text === "string" && ["ok", "error", "warn"].includes((v as Flash).kind);
}
