/**
 * Sessions of server-rendered pages as signed cookies: the cookie holds the claims (who, role), a
 * random session id and an expiry, signed with HMAC-SHA256 under a key every process derives from
 * the same config, so any process behind a load balancer accepts it and no store is read per page
 * (a page can still say the store is down). The trade-off: a cookie stays valid until it expires,
 * so the TTL is short (pages that must see a revoked credential check it themselves).
 *
 * Forgery defences for every POST: the Origin (or, without it, Referer) must name the page's own
 * host or a configured origin, and the form must carry the CSRF token derived from the session id.
 * Cookies are HttpOnly, SameSite=Strict, scoped to the page set's public path, Secure on HTTPS.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface SessionClaims {
  /** Who (a credential id), shown and audited. */
  sub: string;
  role: string;
}

export interface Session extends SessionClaims {
  /** Random id; the CSRF token is derived from it. */
  sid: string;
  /** Expiry, epoch ms. */
  exp: number;
}

export interface SessionCookiesOptions {
  /** The signing key (32 bytes or more). */
  secret: Buffer;
  cookieName: string;
  /** Cookie path (the page set's public base). */
  path: string;
  ttlMs: number;
  now?: () => number;
}

export interface SessionCookies {
  /** A new session and its Set-Cookie header value. */
  issue(claims: SessionClaims, secure: boolean): { session: Session; setCookie: string };
  /** The valid, unexpired session named by the request's Cookie header, or null. */
  read(cookieHeader: string | null): Session | null;
  /** Set-Cookie that removes the session. */
  clear(secure: boolean): string;
  csrfToken(session: Session): string;
  checkCsrf(session: Session, token: string | undefined): boolean;
  /** A short-lived signed value in its own cookie (the flash message across a redirect). */
  seal(name: string, value: unknown, ttlMs: number, secure: boolean): string;
  unseal(cookieHeader: string | null, name: string): unknown;
}

export function createSessionCookies(o: SessionCookiesOptions): SessionCookies {
  const now = o.now ?? Date.now;
  const sign = (payload: string) => createHmac("sha256", o.secret).update(payload).digest("base64url");
  const open = (value: string | undefined): Record<string, unknown> | null => {
    if (!value) return null;
    const dot = value.lastIndexOf(".");
    if (dot <= 0) return null;
    const payload = value.slice(0, dot);
    if (!_equal(value.slice(dot + 1), sign(payload))) return null;
    try {
      const v = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as Record<string, unknown>;
      return typeof v.exp === "number" && v.exp > now() ? v : null;
    } catch {
      return null;
    }
  };
  const sealed = (v: object) => {
    const payload = Buffer.from(JSON.stringify(v), "utf8").toString("base64url");
    return `${payload}.${sign(payload)}`;
  };
  return {
    issue(claims, secure) {
      const session: Session = { sub: claims.sub, role: claims.role, sid: randomBytes(18).toString("base64url"), exp: now() + o.ttlMs };
      return { session, setCookie: _cookie(o.cookieName, sealed(session), o.path, Math.floor(o.ttlMs / 1000), secure) };
    },
    read(header) {
      const v = open(parseCookies(header)[o.cookieName]);
      if (!v || typeof v.sub !== "string" || typeof v.role !== "string" || typeof v.sid !== "string") return null;
      return { sub: v.sub, role: v.role, sid: v.sid, exp: v.exp as number };
    },
    clear: (secure) => _cookie(o.cookieName, "", o.path, 0, secure),
    csrfToken: (s) => sign(`csrf\u0000${s.sid}`),
    checkCsrf: (s, token) => token !== undefined && _equal(token, sign(`csrf\u0000${s.sid}`)),
    seal: (name, value, ttlMs, secure) => _cookie(name, sealed({ value, exp: now() + ttlMs }), o.path, Math.ceil(ttlMs / 1000), secure),
    unseal: (header, name) => open(parseCookies(header)[name])?.value ?? null,
  };
}

/**
 * Whether a POST comes from the page's own origin: its Origin header (or Referer when a browser
 * sent none) must name the request's Host or one of `allowed` (full origins, for proxies that
 * rewrite Host). No header at all is refused.
 */
export function isSameOrigin(headers: Headers, allowed: readonly string[] = []): boolean {
  const source = headers.get("origin") ?? _refererOrigin(headers.get("referer"));
  if (!source || source === "null") return false;
  if (allowed.includes(source)) return true;
  const host = headers.get("host");
  try {
    return host !== null && new URL(source).host === host.toLowerCase();
  } catch {
    return false;
  }
}

export function parseCookies(header: string | null): Record<string, string> {
  const out: Record<string, string> = {};
  if (!header) return out;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq <= 0) continue;
    const k = part.slice(0, eq).trim();
    if (!(k in out)) out[k] = part.slice(eq + 1).trim();
  }
  return out;
}

// --- Internal helpers ---

function _cookie(name: string, value: string, path: string, maxAgeSeconds: number, secure: boolean): string {
  return `${name}=${value}; Path=${path || "/"}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure ? "; Secure" : ""}`;
}

function _equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function _refererOrigin(referer: string | null): string | null {
  if (!referer) return null;
  try {
    return new URL(referer).origin;
  } catch {
    return null;
  }
}
