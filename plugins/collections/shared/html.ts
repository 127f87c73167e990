/** Text into HTML: the one escaping every value of the checkout pages and the link e-mail goes through. */

/** Escapes text for HTML element content and quoted attributes. */
export function escapeHtml(s: string): string {
  return s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;").replaceAll("'", "&#39;");
}
