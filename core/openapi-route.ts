/** `GET /openapi.json`: the core's own route, the document built once from the route table. */
import { buildOpenApi } from "./openapi.ts";
import type { RouteDeclaration } from "./plugin.ts";
import type { RouteTable } from "./route-table.ts";
import { VERSION } from "./version.ts";

/** `routes` is read at the first request (the table is built after the route is declared). */
export function openApiRoute(routes: () => RouteTable): RouteDeclaration {
  let document: string | null = null;
  return {
    method: "GET",
    path: "/openapi.json",
    service: "gateway",
    hosts: "any",
    auth: "none",
    skip: ["admission", "capacity-guard", "ip-allowlist", "quota", "mode"],
    summary: "The OpenAPI 3.1 document of every route, derived from the plugin declarations",
    handler: (ctx) => {
      document ??= JSON.stringify(buildOpenApi(routes().routes(), VERSION));
      return new Response(document, {
        headers: {
          "content-type": "application/json",
          "content-length": String(Buffer.byteLength(document)),
          "x-request-id": ctx.requestId,
          "cache-control": "public, max-age=60",
        },
      });
    },
  };
}
