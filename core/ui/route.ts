/**
 * The route declaration of a server-rendered page or form action (console, dashboard): a public
 * entry point for the pipeline (no API key, no per-credential quota; the page set authenticates
 * with its own session), HTML answers and POST-redirect-GET, form bodies accepted.
 */
import type { RequestContext } from "../context.ts";
import type { RouteDeclaration } from "../plugin.ts";

const FORM = "application/x-www-form-urlencoded";

export function pageRoute(method: "GET" | "POST", path: string, summary: string, handler: (ctx: RequestContext) => Promise<Response> | Response): RouteDeclaration {
  return {
    method,
    path,
    service: "gateway",
    hosts: "any",
    auth: "none",
    quota: "none",
    skip: ["auth", "ip-allowlist", "quota", "mode"],
    accepts: [FORM],
    rejectServerFields: false,
    summary,
    responses: { 200: "An HTML page", 303: "POST-redirect-GET" },
    handler,
  };
}
