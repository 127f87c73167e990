/**
 * The merchant dashboard's config section (docs/dashboard.md): HTML pages where a business's team
 * signs in (password, then a TOTP code once enrolled) and manages its API keys and the rest of its
 * integration. Served under `dashboard.basePath` on the business's own approved hosts (users of that
 * business only) and on the collections hosts (users of any business).
 */
import * as v from "valibot";

/** A URL path for a set of pages: "/" or "/a/b" (no trailing slash, no query). */
const PAGE_PATH = v.pipe(v.string(), v.regex(/^\/$|^(\/[A-Za-z0-9._~-]+)+$/, 'a path like "/dashboard" or "/merchant/dashboard"'));
const POSITIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(1));

export function dashboardSchema() {
  return v.strictObject({
    enabled: v.optional(v.boolean(), true),
    /** The path the gateway serves the dashboard on. */
    basePath: v.optional(PAGE_PATH, "/dashboard"),
    /** The path browsers see when a reverse proxy strips a prefix; default basePath. */
    publicPath: v.optional(PAGE_PATH),
    /** Origins besides the request's own Host that a POST may come from (a proxy that rewrites Host). */
    allowedOrigins: v.optional(v.array(v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s]+$/, "an origin like https://dashboard.example.com"))), []),
    /** How long a session lasts after sign-in. */
    sessionTtlMs: v.optional(POSITIVE_INT, 8 * 60 * 60_000),
    /** Sign-in attempts allowed per client address and window (all accounts; the coordination store). */
    signInAttempts: v.optional(POSITIVE_INT, 20),
    signInWindowMs: v.optional(POSITIVE_INT, 5 * 60_000),
    /**
     * Per account: wrong passwords or codes allowed before each further attempt must wait
     * (`failureDelayMs`, doubling per failure), and the count at which the account locks for
     * `lockMs` (an e-mail tells the user). Counted over `failureWindowMs`.
     */
    freeFailures: v.optional(POSITIVE_INT, 5),
    lockAfterFailures: v.optional(POSITIVE_INT, 10),
    failureDelayMs: v.optional(POSITIVE_INT, 2_000),
    failureWindowMs: v.optional(POSITIVE_INT, 15 * 60_000),
    lockMs: v.optional(POSITIVE_INT, 30 * 60_000),
    /** A TOTP code counts as fresh (key and secret actions) for this long after it was entered. */
    totpFreshMs: v.optional(POSITIVE_INT, 5 * 60_000),
    /** How long an invitation link and a password reset link stay valid. */
    invitationTtlMs: v.optional(POSITIVE_INT, 7 * 24 * 60 * 60_000),
    resetTtlMs: v.optional(POSITIVE_INT, 60 * 60_000),
    /** The public origin written into e-mailed links (invitations, resets); default: the request's own. */
    linkOrigin: v.optional(v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s]+$/, "an origin like https://dashboard.example.com"))),
  });
}

export type DashboardConfig = v.InferOutput<ReturnType<typeof dashboardSchema>>;
