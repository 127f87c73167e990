/**
 * The taxpayer and entity routes: portal login (`POST /api/v1/utilities/authenticate`), TIN
 * verification (`POST /api/v1/utilities/verify-tin/`), GetEntity (`GET /api/v1/entity/{id}`) and
 * SearchEntity (`GET /api/v1/entity`). All answer from the fixtures; none changes state.
 */
import { randomUUID } from "node:crypto";
import { uuidProblem } from "../invoice-schema.ts";
import type { SimulatorStore } from "../state.ts";
import { VALIDATION_FAILED, dataAnswer, errorAnswer, isObject, pageAnswer } from "../views.ts";
import type { Answer } from "../views.ts";

export function authenticate(store: SimulatorStore, body: unknown): Answer {
  const route = "authenticate";
  if (!isObject(body)) return errorAnswer(400, route, VALIDATION_FAILED, "request body must be a JSON object");
  const email = body.email;
  const password = body.password;
  if (typeof email !== "string" || email === "" || typeof password !== "string" || password === "") {
    return errorAnswer(400, route, VALIDATION_FAILED, "email and password are required");
  }
  const taxpayer = store.fixtures.taxpayers.get(email.toLowerCase());
  if (!taxpayer) return errorAnswer(404, route, "user not found");
  if (taxpayer.password !== password) return errorAnswer(401, route, "invalid email or password");
  if (taxpayer.app_linked === false) {
    return errorAnswer(403, route, "the taxpayer has not linked this application as an access point provider");
  }
  // The documented 200 sample (AuthenticateTaxPayer).
  return dataAnswer({
    entity_id: taxpayer.entity_id,
    id: randomUUID(),
    message: "User logged in",
    received_at: new Date().toISOString(),
    status: "200 OK",
  });
}

export function verifyTin(store: SimulatorStore, body: unknown): Answer {
  const route = "verify-tin";
  const tin = isObject(body) ? body.tin : undefined;
  if (typeof tin !== "string" || tin === "") return errorAnswer(400, route, VALIDATION_FAILED, "tin is required");
  const found = store.fixtures.businessesByTin.get(tin);
  if (!found) return errorAnswer(404, route, "tin not found");
  // The documented 200 sample (VerifyTin), filled from the fixture business.
  return dataAnswer({
    address: "",
    email: "",
    id: found.business.id,
    jtb_tin: "",
    message: "TIN Information",
    phone: "",
    rc_number: "",
    status: "200 OK",
    taxofficer_id: "",
    taxofficer_name: "",
    taxpayer_name: found.business.name,
    taxpayer_type: "C",
    tin,
  });
}

/** GetEntity: the pre-serialised answer of a fixture entity. */
export function getEntity(store: SimulatorStore, id: string): Answer {
  const bad = uuidProblem(id);
  if (bad) return errorAnswer(400, "entity", VALIDATION_FAILED, bad);
  const raw = store.fixtures.entityAnswers.get(id);
  return raw ? { status: 200, raw } : errorAnswer(404, "entity", "entity not found");
}

/** SearchEntity: `size`, `page`, `sort_by`, `sort_direction_desc`, `reference` (documented); the page shape is modelled. */
export function searchEntities(store: SimulatorStore, q: URLSearchParams): Answer {
  const reference = q.get("reference") ?? "";
  const views = store.fixtures.entityViews;
  return pageAnswer(reference === "" ? views : views.filter((e) => e.reference === reference), q, "entity-search", "created_at");
}
