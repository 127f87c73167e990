/**
 * The operator console's config section (docs/operator-console.md): HTML pages over the Admin API's
 * services. Operators sign in with an operator key (role admin) or a console viewer credential
 * (role viewer: read-only, enforced by the server). Built from the main schema's hostname and
 * credential schemas (passed in, so this module does not import config/schema.ts back).
 */
import * as v from "valibot";

/** A URL path for a set of pages: "/" or "/a/b" (no trailing slash, no query). */
const PAGE_PATH = v.pipe(v.string(), v.regex(/^\/$|^(\/[A-Za-z0-9._~-]+)+$/, 'a path like "/console" or "/ops/console"'));
const POSITIVE_INT = v.pipe(v.number(), v.integer(), v.minValue(1));

export function consoleSchema<H extends v.GenericSchema<string>, C extends v.GenericSchema>(host: H, credential: C) {
  return v.strictObject({
    enabled: v.optional(v.boolean(), true),
    /** Hosts that serve the console: "any" (every host the gateway answers) or a list. */
    hosts: v.optional(v.union([v.literal("any"), v.array(host)]), "any"),
    /** The path the gateway serves the console on. */
    basePath: v.optional(PAGE_PATH, "/console"),
    /** The path browsers see when a reverse proxy strips a prefix (e.g. "/ops/console"); default basePath. */
    publicPath: v.optional(PAGE_PATH),
    /** Origins besides the request's own Host that a POST may come from (a proxy that rewrites Host). */
    allowedOrigins: v.optional(v.array(v.pipe(v.string(), v.regex(/^https?:\/\/[^/\s]+$/, "an origin like https://ops.example.com"))), []),
    /** How long a session lasts after sign-in. */
    sessionTtlMs: v.optional(POSITIVE_INT, 8 * 60 * 60_000),
    /** Sign-in attempts allowed per client address and window (shared across processes by the coordination store). */
    signInAttempts: v.optional(POSITIVE_INT, 10),
    signInWindowMs: v.optional(POSITIVE_INT, 5 * 60_000),
    /** Read-only console credentials (not Admin API keys). */
    viewers: v.optional(v.array(credential), []),
  });
}
