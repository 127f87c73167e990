/**
 * The UI kit for server-rendered pages (the operator console, the merchant dashboard): escaped
 * HTML templates, one layout, one stylesheet, forms with POST-redirect-GET, signed-cookie sessions
 * with Origin and CSRF checks, base paths that work behind a proxy, and small SVG charts.
 */
export { EMPTY, SafeHtml, escapeHtml, html, isSafeHtml, joinHtml, raw, type HtmlValue } from "./html.ts";
export { createPagePaths, segment, type PagePaths } from "./paths.ts";
export { flashMessage, layout, type Flash, type LayoutOptions, type NavItem } from "./layout.ts";
export { CSRF_FIELD, IDEMPOTENCY_FIELD, formFields, postForm, radioGroup, seeOther, textField, type Choice, type FieldOptions, type PostFormOptions } from "./forms.ts";
export { PAGE_HEADERS, page, stylesheet } from "./respond.ts";
export { STYLESHEET, STYLESHEET_ETAG, STYLESHEET_PATH } from "./stylesheet.ts";
export { createSessionCookies, isSameOrigin, parseCookies, type Session, type SessionClaims, type SessionCookies, type SessionCookiesOptions } from "./session.ts";
export { barChart, type BarChartOptions } from "./chart.ts";
export { pageRoute } from "./route.ts";
