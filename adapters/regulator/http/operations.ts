/**
 * The port's operations over HTTP: each builds its request (path and body of the regulator's
 * interface v1.1.6), runs one call, and turns the interpreted answer into what the port promises.
 */
import { gwError } from "../../../core/errors/gateway-error.ts";
import { mapRegulatorFailure } from "../port.ts";
import type {
  InvoiceConfirmation,
  InvoiceDocument,
  IrnValidationRequest,
  RegulatorAuthResult,
  RegulatorCallContext,
  RegulatorEntity,
  RegulatorResponse,
  RegulatorState,
  RelayRequest,
  SignOutcome,
  TaxpayerLogin,
  TransmitOutcome,
  ValidationOutcome,
} from "../port.ts";
import { call, type CallEnv } from "./call.ts";
import { interpretEntity } from "./entity.ts";
import { any2xx, interpretAuth, interpretOk, interpretRelay, isObject } from "./interpret.ts";
import { check } from "./options.ts";
import { confirmation, mutationFailure, validationOutcome } from "./outcomes.ts";
import { relayOperationName, relayWire } from "./relay.ts";
import { JSON_TYPE } from "./transport.ts";

export async function authenticate(env: CallEnv, state: RegulatorState, login: TaxpayerLogin, ctx: RegulatorCallContext): Promise<RegulatorAuthResult> {
  const email = login?.email;
  const password = login?.password;
  if (typeof email !== "string" || email.trim() === "" || typeof password !== "string" || password === "") {
    throw gwError("GW_REG_CREDENTIALS_REQUIRED", { detail: "regulatorCredentials needs a non-empty email and password." });
  }
  const wire = { method: "POST", path: "/api/v1/utilities/authenticate", body: JSON.stringify({ email, password }), contentType: JSON_TYPE };
  const r = await call(env, state, { operation: "authenticate", logOperation: "authenticate", wire, interpret: interpretAuth }, ctx);
  if (r.ok) return r.value;
  throw mapRegulatorFailure(r.failure, "authenticate");
}

export async function getEntity(env: CallEnv, state: RegulatorState, entityId: string, ctx: RegulatorCallContext): Promise<RegulatorEntity> {
  check(typeof entityId === "string" && entityId !== "", "getEntity needs a non-empty entity id");
  const wire = { method: "GET", path: `/api/v1/entity/${encodeURIComponent(entityId)}` };
  const r = await call(env, state, { operation: "getEntity", logOperation: "getEntity", wire, interpret: (raw) => interpretEntity(raw, entityId) }, ctx);
  if (r.ok) return r.value;
  throw mapRegulatorFailure(r.failure, "getEntity");
}

export async function validateIrn(env: CallEnv, state: RegulatorState, body: IrnValidationRequest, ctx: RegulatorCallContext): Promise<ValidationOutcome> {
  const wire = {
    method: "POST",
    path: "/api/v1/invoice/irn/validate",
    body: JSON.stringify({ invoice_reference: body.invoice_reference, business_id: body.business_id, irn: body.irn }),
    contentType: JSON_TYPE,
  };
  const r = await call(env, state, { operation: "validateIrn", logOperation: "validateIrn", wire, interpret: interpretOk(any2xx) }, ctx);
  return validationOutcome(r, "validateIrn");
}

export async function validateInvoice(env: CallEnv, state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<ValidationOutcome> {
  const wire = { method: "POST", path: "/api/v1/invoice/validate", body: _documentBody(invoiceDocument), contentType: JSON_TYPE };
  const r = await call(env, state, { operation: "validateInvoice", logOperation: "validateInvoice", wire, interpret: interpretOk(any2xx) }, ctx);
  return validationOutcome(r, "validateInvoice");
}

export async function sign(env: CallEnv, state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<SignOutcome> {
  const wire = { method: "POST", path: "/api/v1/invoice/sign", body: _documentBody(invoiceDocument), contentType: JSON_TYPE };
  const r = await call(env, state, { operation: "sign", logOperation: "sign", wire, interpret: interpretOk((code) => code === 201) }, ctx);
  if (r.ok) return { kind: "signed", response: r.value };
  return mutationFailure(r.failure, "sign");
}

export async function transmit(env: CallEnv, state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<TransmitOutcome> {
  check(typeof irn === "string" && irn !== "", "transmit needs a non-empty IRN");
  const wire = { method: "POST", path: `/api/v1/invoice/transmit/${encodeURIComponent(irn)}`, body: "{}", contentType: JSON_TYPE };
  const r = await call(env, state, { operation: "transmit", logOperation: "transmit", wire, interpret: interpretOk((code) => code === 200 || code === 201) }, ctx);
  if (r.ok) return { kind: "transmitted", response: r.value };
  return mutationFailure(r.failure, "transmit");
}

export async function confirm(env: CallEnv, state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<InvoiceConfirmation> {
  check(typeof irn === "string" && irn !== "", "confirm needs a non-empty IRN");
  const wire = { method: "GET", path: `/api/v1/invoice/confirm/${encodeURIComponent(irn)}` };
  return confirmation(await call(env, state, { operation: "relay", logOperation: "confirm", wire, interpret: interpretOk(any2xx, false) }, ctx));
}

export async function relay(env: CallEnv, state: RegulatorState, request: RelayRequest, ctx: RegulatorCallContext): Promise<RegulatorResponse> {
  const wire = relayWire(request);
  const r = await call(env, state, { operation: "relay", logOperation: relayOperationName(request), wire, interpret: interpretRelay }, ctx);
  if (r.ok) return r.value;
  throw mapRegulatorFailure(r.failure, "relay");
}

// --- Internal helpers ---

/** An invoice document as sent: bytes and strings unchanged, a JSON object serialised. */
function _documentBody(doc: InvoiceDocument): Uint8Array | string {
  if (doc instanceof Uint8Array || typeof doc === "string") return doc;
  check(isObject(doc), "an invoice document must be bytes, a string or a JSON object");
  return JSON.stringify(doc);
}
