/**
 * The kit's one page layout: language, title, the stylesheet, a skip link, a header with the page
 * set's name and navigation (the current page marked with aria-current), who is signed in with a
 * sign-out form, an optional flash message (role=status, or role=alert for errors), and the page's
 * main content under its one h1.
 */
import { EMPTY, html, type SafeHtml } from "./html.ts";
import type { PagePaths } from "./paths.ts";
import { STYLESHEET_PATH } from "./stylesheet.ts";

export interface NavItem {
  label: string;
  /** Path under the page set's base ("" for its home). */
  path: string;
}

export interface Flash {
  kind: "ok" | "error" | "warn";
  text: string;
}

export interface LayoutOptions {
  /** The page set's name (the header brand and the title suffix). */
  app: string;
  paths: PagePaths;
  title: string;
  nav?: readonly NavItem[];
  /** The nav path of the current page. */
  current?: string;
  /** Who is signed in (name and role) and the sign-out form, when signed in. */
  user?: { label: string; signOut: SafeHtml } | null;
  flash?: Flash | null;
  body: SafeHtml;
}

export function layout(o: LayoutOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${o.title} · ${o.app}</title>
<link rel="stylesheet" href="${o.paths.href(STYLESHEET_PATH)}">
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="${o.paths.href("")}">${o.app}</a>
${o.nav && o.nav.length > 0 ? _nav(o) : EMPTY}
${o.user ? html`<div class="who"><span>${o.user.label}</span>${o.user.signOut}</div>` : EMPTY}
</header>
<main id="main" tabindex="-1">
${o.flash ? flashMessage(o.flash) : EMPTY}
<h1>${o.title}</h1>
${o.body}
</main>
</body>
</html>`;
}

/** A flash message: errors are announced at once (role=alert), others politely (role=status). */
export function flashMessage(f: Flash): SafeHtml {
  return html`<p class="flash ${f.kind}" role="${f.kind === "error" ? "alert" : "status"}">${f.text}</p>`;
}

// --- Internal helpers ---

function _nav(o: LayoutOptions): SafeHtml {
  return html`<nav aria-label="Main"><ul>${o.nav!.map(
    (n) => html`<li><a href="${o.paths.href(n.path)}"${n.path === o.current ? html` aria-current="page"` : EMPTY}>${n.label}</a></li>`,
  )}</ul></nav>`;
}
