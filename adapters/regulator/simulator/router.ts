/**
 * The simulator's routes: their names (call counts and faults are keyed by them) and the router that
 * maps a method and path to one, following the documented endpoint list (FIRS-MBS Endpoints 1.0.md;
 * docs/regulator-simulator.md has the table). An unknown path and an unserved method both map to no
 * route, as at the real router.
 */

/** The simulator's route names; call counts and faults are keyed by them (docs/regulator-simulator.md). */
export const SIMULATOR_ROUTES = [
  "authenticate",
  "verify-tin",
  "entity-search",
  "entity",
  "irn-validate",
  "validate",
  "sign",
  "party-create",
  "party-search",
  "invoice-search",
  "transmit",
  "confirm-receipt",
  "transmit-lookup",
  "self-health-check",
  "pull",
  "confirm",
  "download",
  "update",
  "resources",
  "health",
] as const;

export type SimulatorRoute = (typeof SIMULATOR_ROUTES)[number];

/** The HTTP status of a route's normal success answer (sign, transmit and party creation answer 201). */
export function successStatusOf(route: SimulatorRoute): 200 | 201 {
  return route === "sign" || route === "transmit" || route === "party-create" ? 201 : 200;
}

export function isSimulatorRoute(value: unknown): value is SimulatorRoute {
  return typeof value === "string" && (SIMULATOR_ROUTES as readonly string[]).includes(value);
}

/** What a transmit-lookup's path parameter is. */
export type LookupKey = "irn" | "tin" | "party";

export interface RouteMatch {
  route: SimulatorRoute;
  /** The decoded path parameter (an id, IRN, TIN or resource name), "" when the route has none. */
  param: string;
  /** transmit-lookup: what `param` is. */
  by?: LookupKey;
}

/** Method + path → route (the documented endpoint list, FIRS-MBS Endpoints 1.0.md), or null: no route. */
export function matchRoute(method: string, path: string): RouteMatch | null {
  if (path === "/api") return method === "GET" ? { route: "health", param: "" } : null;
  if (!path.startsWith("/api/v1/")) return null;
  const s = path.slice(8).split("/");
  const [a, b, c, d, e] = s;
  const only = (allowed: string, route: SimulatorRoute, param = "", by?: LookupKey): RouteMatch | null =>
    method === allowed ? { route, param, ...(by ? { by } : {}) } : null;
  if (a === "utilities" && s.length === 2 && b === "authenticate") return only("POST", "authenticate");
  // Documented with a trailing slash: /api/v1/utilities/verify-tin/
  if (a === "utilities" && b === "verify-tin" && (s.length === 2 || (s.length === 3 && c === ""))) return only("POST", "verify-tin");
  if (a === "entity" && s.length === 1) return only("GET", "entity-search");
  if (a === "entity" && s.length === 2 && b) return only("GET", "entity", decodeSegment(b));
  if (a !== "invoice" || !b) return null;
  if (s.length === 2) {
    if (method === "GET") return { route: "invoice-search", param: decodeSegment(b) };
    if (b === "validate") return only("POST", "validate");
    if (b === "sign") return only("POST", "sign");
    if (b === "party") return only("POST", "party-create");
    return null;
  }
  if (!c) return null;
  if (s.length === 3) {
    switch (b) {
      case "irn":
        return c === "validate" ? only("POST", "irn-validate") : null;
      case "party":
        return only("GET", "party-search", decodeSegment(c));
      case "transmit":
        if (c === "self-health-check") return only("GET", "self-health-check");
        if (c === "pull") return only("GET", "pull");
        if (method === "PATCH") return { route: "confirm-receipt", param: decodeSegment(c) };
        return only("POST", "transmit", decodeSegment(c));
      case "confirm":
        return only("GET", "confirm", decodeSegment(c));
      case "download":
        return only("GET", "download", decodeSegment(c));
      case "update":
        return only("PATCH", "update", decodeSegment(c));
      case "resources":
        return only("GET", "resources", decodeSegment(c));
      default:
        return null;
    }
  }
  if (b === "transmit" && c === "lookup") {
    if (s.length === 4 && d) return only("GET", "transmit-lookup", decodeSegment(d), "irn");
    if (s.length === 5 && e && (d === "tin" || d === "party")) return only("GET", "transmit-lookup", decodeSegment(e), d);
  }
  return null;
}

/** A path segment, percent-decoded; a malformed escape leaves it as sent. */
export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
