/**
 * One matched call → its answer: the public routes (health, resource lists), the credentials check
 * every other route makes, the JSON body read of the routes that take one, and the route handlers of
 * ./auth-entity.ts, ./invoice.ts, ./party.ts and ./exchange.ts. Faults are not seen here: the server
 * decides whether a call is processed at all.
 */
import type { IncomingMessage } from "node:http";
import { readBody } from "../http-io.ts";
import type { LookupKey, SimulatorRoute } from "../router.ts";
import type { SimulatorStore } from "../state.ts";
import { HEALTH, NO_ROUTE, OK_200, VALIDATION_FAILED, credentialsRejectedBody, errorAnswer } from "../views.ts";
import type { Answer } from "../views.ts";
import { authenticate, getEntity, searchEntities, verifyTin } from "./auth-entity.ts";
import { confirmReceipt, lookupExchanged, pull, transmit } from "./exchange.ts";
import { confirmInvoice, searchInvoices, updateInvoice, validateIrn, validateOrSign } from "./invoice.ts";
import { createParty, searchParties } from "./party.ts";

/** What the route handlers need besides the call: the store, the deployment's credentials, the body limit. */
export interface RouteContext {
  store: SimulatorStore;
  apiKey: string;
  apiSecret: string;
  /** Largest accepted request body (larger → 413). */
  bodyLimit: number;
}

/** One call of a matched route. */
export interface Call {
  req: IncomingMessage;
  route: SimulatorRoute;
  /** The decoded path parameter, "" when the route has none. */
  param: string;
  /** transmit-lookup: what `param` is. */
  by?: LookupKey;
  /** The query string, without "?". */
  query: string;
}

/** Process `call`: synchronous for the routes without a body, a promise for those that read one. */
export function processCall(ctx: RouteContext, call: Call): Answer | Promise<Answer> {
  const { req, route, param } = call;
  const { store } = ctx;
  if (route === "health") return HEALTH;
  if (route === "resources") {
    // Public at the regulator (the documented curls carry no credentials); an unknown list is no route.
    const raw = store.fixtures.resourceAnswers.get(param);
    return raw ? { status: 200, raw } : NO_ROUTE;
  }
  if (req.headers["x-api-key"] !== ctx.apiKey || req.headers["x-api-secret"] !== ctx.apiSecret) {
    return { status: 400, raw: credentialsRejectedBody() };
  }
  switch (route) {
    case "entity":
      return getEntity(store, param);
    case "entity-search":
      return searchEntities(store, new URLSearchParams(call.query));
    case "confirm":
      return confirmInvoice(store, param, false);
    case "download":
      return confirmInvoice(store, param, true);
    case "transmit-lookup":
      return lookupExchanged(store, call.by ?? "irn", param);
    case "self-health-check":
      return OK_200;
    case "pull":
      return pull(store, new URLSearchParams(call.query));
    case "party-search":
      return searchParties(store, param, new URLSearchParams(call.query));
    case "invoice-search":
      return searchInvoices(store, param, new URLSearchParams(call.query));
    case "transmit":
      // The body ("" in the documented curl, `{}` from the gateway) is ignored, but read so the
      // connection stays reusable.
      return _withBody(ctx, req, route, () => transmit(store, param), true);
    case "confirm-receipt":
      return _withBody(ctx, req, route, () => confirmReceipt(store, param), true);
    case "authenticate":
      return _withBody(ctx, req, route, (body) => authenticate(store, body));
    case "verify-tin":
      return _withBody(ctx, req, route, (body) => verifyTin(store, body));
    case "irn-validate":
      return _withBody(ctx, req, route, (body) => validateIrn(store, body));
    case "validate":
      return _withBody(ctx, req, route, (body) => validateOrSign(store, body, "validate"));
    case "sign":
      return _withBody(ctx, req, route, (body) => validateOrSign(store, body, "sign"));
    case "party-create":
      return _withBody(ctx, req, route, (body) => createParty(store, body));
    case "update":
      return _withBody(ctx, req, route, (body) => updateInvoice(store, param, body));
  }
}

// --- Internal helpers ---

/**
 * Read the JSON body, then run `fn` with it. Too large → 413 (and close the connection); not received,
 * empty or not JSON → 400, unless the body is `optional` (then `fn` gets undefined).
 */
async function _withBody(
  ctx: RouteContext,
  req: IncomingMessage,
  route: SimulatorRoute,
  fn: (body: unknown) => Answer,
  optional = false,
): Promise<Answer> {
  const read = await readBody(req, ctx.bodyLimit);
  if (read.kind === "too_large") {
    return { ...errorAnswer(413, route, "request entity too large", `request body exceeds ${ctx.bodyLimit} bytes`), headers: { connection: "close" } };
  }
  if (read.kind === "aborted") return errorAnswer(400, route, VALIDATION_FAILED, "request body was not received");
  if (read.text.trim() === "") return optional ? fn(undefined) : errorAnswer(400, route, VALIDATION_FAILED, "unexpected end of JSON input");
  let body: unknown;
  try {
    body = JSON.parse(read.text);
  } catch {
    return optional ? fn(undefined) : errorAnswer(400, route, VALIDATION_FAILED, "request body is not valid JSON");
  }
  return fn(body);
}
