/**
 * The console's frame around every screen: the kit's layout with the console's navigation, the
 * signed-in operator and role, a sign-out form, the one search box, and the flash message a
 * POST-redirect-GET left (read once, then cleared). Also the pages for what went wrong: a
 * dependency that cannot answer (named, with what still works; 503, never a stack), a refusal (403)
 * and an unexpected failure (500 with the request id only).
 */
import { isDependencyUnavailableError } from "../../adapters/ports.ts";
import type { RequestContext } from "../../core/context.ts";
import { describeError } from "../../core/log.ts";
import { EMPTY, html, isSafeHtml, layout, page, postForm, type Flash, type NavItem, type SafeHtml, type Session } from "../../core/ui/index.ts";
import { FLASH_COOKIE, type ConsoleEnv } from "./env.ts";

export const APP_NAME = "Gatehouse console";

export const NAV: readonly NavItem[] = [
  { label: "Overview", path: "" },
  { label: "Frozen operations", path: "/frozen" },
  { label: "Alerts", path: "/alerts" },
  { label: "Businesses", path: "/businesses" },
  { label: "Webhooks", path: "/webhooks" },
  { label: "Search", path: "/search" },
  { label: "Audit log", path: "/audit" },
];

export interface ScreenOptions {
  title: string;
  /** The nav path of the screen. */
  current?: string;
  body: SafeHtml;
  status?: number;
  /** Extra response headers (a page that must not be cached). */
  headers?: Record<string, string>;
}

/** A screen for a signed-in operator. */
export function screen(env: ConsoleEnv, ctx: RequestContext, session: Session, o: ScreenOptions): Response {
  const flash = env.cookies.unseal(ctx.req.headers.get("cookie"), FLASH_COOKIE) as Flash | null;
  const signOut = postForm({ action: env.paths.href("/sign-out"), csrf: env.cookies.csrfToken(session), submit: "Sign out", layout: "inline", button: "secondary" });
  const search = html`<form method="get" action="${env.paths.href("/search")}" class="inline" role="search">
<label for="top-q">Search by request, operation or invoice ID, or IRN</label><input id="top-q" name="q" type="search" maxlength="200"><button type="submit">Search</button></form>`;
  const body = layout({
    app: APP_NAME,
    paths: env.paths,
    title: o.title,
    nav: NAV,
    current: o.current,
    user: { label: `${session.sub} (${session.role})`, signOut },
    flash: _isFlash(flash) ? flash : null,
    body: html`<div class="panel">${search}</div>${o.body}`,
  });
  const headers: Record<string, string> = { ...o.headers, ...(flash ? { "set-cookie": `${FLASH_COOKIE}=; Path=${env.paths.public || "/"}; Max-Age=0; HttpOnly; SameSite=Strict` } : {}) };
  return page(ctx, o.status ?? 200, body, headers);
}

/** A page with no session (sign-in, refusals before sign-in). */
export function bare(env: ConsoleEnv, ctx: RequestContext, status: number, title: string, body: SafeHtml, flash: Flash | null = null, headers: Record<string, string> = {}): Response {
  return page(ctx, status, layout({ app: APP_NAME, paths: env.paths, title, flash, body }), headers);
}

export function forbidden(env: ConsoleEnv, ctx: RequestContext, why: string): Response {
  env.kit.log.warn("console_request_refused", { requestId: ctx.requestId, path: ctx.path, reason: why });
  return bare(env, ctx, 403, "Not allowed", html`<p>${why}</p><p><a href="${env.paths.href("")}">Back to the console</a></p>`);
}

/** Runs a screen; a dependency outage or an unexpected failure becomes a page, never a stack trace. */
export async function guarded(env: ConsoleEnv, ctx: RequestContext, session: Session | null, fn: () => Promise<Response>): Promise<Response> {
  try {
    return await fn();
  } catch (e) {
    if (isDependencyUnavailableError(e)) {
      const body = outageNotice(e.dependency);
      return session ? screen(env, ctx, session, { title: "Dependency unavailable", body, status: 503 }) : bare(env, ctx, 503, "Dependency unavailable", body);
    }
    env.kit.log.error("console_page_failed", { requestId: ctx.requestId, path: ctx.path, error: describeError(e) });
    return bare(env, ctx, 500, "Something went wrong", html`<p>The console could not draw this page. Request id: <code>${ctx.requestId}</code>.</p>`);
  }
}

/** What an outage of `dependency` means for the operator. */
export function outageNotice(dependency: string): SafeHtml {
  return html`<div class="flash error" role="alert"><p><strong>${_dependencyName(dependency)} is unavailable</strong> (${dependency}).</p>
<p>What still works: the overview's circuits, in-flight figures and traffic charts (this process's memory), and the Admin API for anything that does not read it. Lists and actions that read it come back when it answers.</p></div>`;
}

/** A section of a screen that reads a dependency: its outage is said in place, the rest of the page still draws. */
export async function section(title: string, fn: () => Promise<SafeHtml>): Promise<SafeHtml> {
  try {
    return html`<section class="panel" aria-labelledby="${_slug(title)}"><h2 id="${_slug(title)}">${title}</h2>${await fn()}</section>`;
  } catch (e) {
    const note = isDependencyUnavailableError(e) ? outageNotice(e.dependency) : html`<p class="flash error" role="alert">This section could not be read.</p>`;
    return html`<section class="panel" aria-labelledby="${_slug(title)}"><h2 id="${_slug(title)}">${title}</h2>${note}</section>`;
  }
}

/** A definition list of facts; null values show as "—"; an html fragment (a badge) is kept as markup. */
export function facts(rows: ReadonlyArray<readonly [string, unknown]>): SafeHtml {
  return html`<dl class="facts">${rows.map(([k, v]) => html`<dt>${k}</dt><dd>${v === null || v === undefined || v === "" ? "—" : isSafeHtml(v) ? v : String(v)}</dd>`)}</dl>`;
}

export function badge(text: string, kind: "ok" | "bad" | "warn" | "muted"): SafeHtml {
  return html`<span class="badge ${kind}">${text}</span>`;
}

export { EMPTY };

// --- Internal helpers ---

function _isFlash(v: unknown): v is Flash {
  return typeof v === "object" && v !== null && typeof (v as Flash).text === "string" && ["ok", "error", "warn"].includes((v as Flash).kind);
}

function _dependencyName(dependency: string): string {
  const d = dependency.toLowerCase();
  if (d.includes("documentstore") || d.includes("sqlite") || d.includes("mongo") || d === "memory") return "The document store";
  if (d.includes("redis") || d.includes("coordination")) return "The coordination store (Redis)";
  if (d.includes("billing")) return "The billing ledger";
  if (d.includes("regulator")) return "The regulator";
  return `Dependency "${dependency}"`;
}

function _slug(s: string): string {
  return `s-${s.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;
}
