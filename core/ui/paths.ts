/**
 * Where a set of pages lives: the path the gateway serves them on (`mount`) and the path links and
 * cookies name (`public`), which differ when a reverse proxy strips a prefix (the console served on
 * /console and reached as /ops/console). Every link a page writes goes through `href`, so links
 * follow the configured base and never carry unescaped input.
 */

export interface PagePaths {
  /** The path the gateway routes (e.g. "/console"). */
  readonly mount: string;
  /** The path the browser sees (e.g. "/ops/console"); cookies are scoped to it. */
  readonly public: string;
  /** A link to `sub` under the public base, with query parameters encoded. */
  href(sub?: string, query?: Record<string, string | number | null | undefined>): string;
  /** The route path of `sub` under the mount (route declarations). */
  route(sub?: string): string;
}

export function createPagePaths(mount: string, publicBase: string = mount): PagePaths {
  const m = _trim(mount);
  const p = _trim(publicBase);
  return {
    mount: m,
    public: p,
    href(sub = "", query) {
      const qs = query ? new URLSearchParams(Object.entries(query).flatMap(([k, v]) => (v === null || v === undefined || v === "" ? [] : [[k, String(v)]]))).toString() : "";
      return `${p}${sub}${qs ? `?${qs}` : ""}` || "/";
    },
    route: (sub = "") => `${m}${sub}` || "/",
  };
}

/** A path segment for a link (encodes everything but unreserved characters). */
export function segment(s: string): string {
  return encodeURIComponent(s);
}

// --- Internal helpers ---

/** "/ops/console/" → "/ops/console"; "/" → "". */
function _trim(path: string): string {
  const withSlash = path.startsWith("/") ? path : `/${path}`;
  return withSlash.replace(/\/+$/, "");
}
