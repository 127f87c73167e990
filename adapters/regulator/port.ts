/**
 * The regulator port: what plugins (onboarding, reverification, signing, transmission, the Stored
 * processor, the direct routes) may ask of the regulator's e-invoicing interface (contract v1.1.6),
 * and the one mapping from a regulator failure to a public `GW_*` error (spec §7.5, §7.6, §7.10, §7.11).
 *
 * Three ways a call can end, by operation:
 *   authenticate, getEntity, relay   a value, or a thrown GatewayError (see `mapRegulatorFailure`)
 *   validateIrn, validateInvoice     `{ kind: "valid" }` or `{ kind: "rejected" }`; dependency problems throw
 *   sign, transmit                   a classified outcome, never a guess:
 *                                      succeeded  HTTP 2xx AND body `code` as required AND `data.ok === true`
 *                                      rejected   a 4xx business rejection in the regulator's error envelope
 *                                      ambiguous  anything after dispatch that proves neither (malformed,
 *                                                 empty, renamed or ok:false success envelope, timeout,
 *                                                 connection lost, 5xx, 3xx, unrecognised 4xx)
 *                                    and they THROW only when the regulator certainly did not perform the
 *                                    operation: no base URL for the state, circuit open, connection never
 *                                    established, deployment credentials rejected (400 "unable to validate
 *                                    api key", 401, 403), the regulator's router knows no such route (its
 *                                    un-enveloped 404), throttled (429).
 *
 * The real regulator sends no stable machine-readable reason: its `error.id` is a per-request UUID
 * (kept for correlation only) and `error.details` is free text. Failures are therefore classified from
 * the HTTP status, the envelope's structure and, where nothing better exists, its message text
 * (docs/regulator-client.md, "Real API behaviour → gateway outcome", with sources).
 *
 * Every thrown regulator error is a GatewayError carrying `dependencyFailure` (and `failureClass` when
 * it counts against the circuit), so `classifyError` in adapters/policies.ts reads it correctly.
 * Nothing here ever holds a taxpayer password, the deployment secret or an upstream body.
 */
import { gwError, type GatewayError } from "../../core/errors/gateway-error.ts";

// ---------------------------------------------------------------------------
// Inputs
// ---------------------------------------------------------------------------

/** The regulator environment; selected by the business state, never by a request (spec §1.2 rule 4). */
export type RegulatorState = "TEST" | "LIVE";

export const REGULATOR_STATES: readonly RegulatorState[] = ["TEST", "LIVE"];

/** Regulator interface documentation version the adapter implements (spec §9). */
export const REGULATOR_CONTRACT_VERSION = "1.1.6";

/**
 * Contract adapter versions this release implements (spec §9: "the regulator contract adapter is
 * version v1; test and live select their versions independently"), each with the interface
 * documentation version it follows. A state configured with any other version cannot start.
 */
export const REGULATOR_ADAPTERS: Readonly<Record<string, { interfaceVersion: string }>> = { v1: { interfaceVersion: REGULATOR_CONTRACT_VERSION } };
export const REGULATOR_ADAPTER_VERSIONS: readonly string[] = Object.keys(REGULATOR_ADAPTERS);

/**
 * Resource lists the regulator serves at `GET /api/v1/invoice/resources/{name}` (no credentials needed).
 * countries, currencies, invoice-types, services-codes, vat-exemptions: recorded answers in
 * FIRS-MBS_E-Invoicing_Documentation.md; tax-categories, payment-means: E_Invoice_Collection.md (the
 * Postman collection); hs-codes: DECISIONS.md's direct routes. Any other name is a path the regulator's
 * router does not know (its un-enveloped 404), so the gateway refuses it before calling.
 */
export const REGULATOR_RESOURCES: ReadonlySet<string> = new Set([
  "countries",
  "currencies",
  "invoice-types",
  "services-codes",
  "vat-exemptions",
  "tax-categories",
  "payment-means",
  "hs-codes",
]);

/** Correlation for logs: the gateway's authoritative request id. */
export interface RegulatorCallContext {
  requestId: string;
}

/** Transient taxpayer portal credentials (never persisted, never logged). */
export interface TaxpayerLogin {
  email: string;
  password: string;
}

/** Body of the regulator's IRN validation. */
export interface IrnValidationRequest {
  invoice_reference: string;
  business_id: string;
  irn: string;
}

/**
 * A regulator invoice document: the caller's exact bytes (Uint8Array or string, sent unchanged, which
 * is what Pass-through should do) or a JSON value the client serialises.
 */
export type InvoiceDocument = Uint8Array | string | Record<string, unknown>;

export type RelayMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export type RelayQueryValue = string | number | boolean;

/** A direct-route call: resources, IRN validation, confirm, download, payment update. */
export interface RelayRequest {
  method: RelayMethod;
  /**
   * Regulator path starting with "/api/v1/", path parameters already percent-encoded
   * (`/api/v1/invoice/confirm/${encodeURIComponent(irn)}`). No query, fragment, "." / ".." segments,
   * "//" or encoded "." / "/" (a wiring error otherwise: RangeError).
   */
  path: string;
  query?: URLSearchParams | Record<string, RelayQueryValue | readonly RelayQueryValue[] | undefined>;
  /** POST/PUT/PATCH only. Uint8Array/string are sent unchanged; anything else is JSON-encoded. */
  body?: Uint8Array | string | Record<string, unknown> | unknown[];
  /** Content type of `body`; default "application/json". */
  contentType?: string;
  /** Name for the `operation` log field; default derived from the path ("relay.confirm", …). */
  operation?: string;
}

// ---------------------------------------------------------------------------
// Results
// ---------------------------------------------------------------------------

/** A successful regulator answer, to be passed through (after safe-header filtering). */
export interface RegulatorResponse {
  status: number;
  /** The regulator's Content-Type ("application/octet-stream" when it sent none). */
  contentType: string;
  /** The body exactly as received. */
  body: Uint8Array;
  /**
   * The safe subset of response headers, lower-case names: content-disposition, content-language,
   * etag, last-modified. Never set-cookie, hop-by-hop, cache-control, x-request-id or credentials.
   */
  headers: Record<string, string>;
}

export interface RegulatorAuthResult {
  entityId: string;
}

export interface RegulatorBusiness {
  id: string;
  /** "" when the regulator sends none (the real answer may omit it). */
  name: string;
  tin: string;
  /** null when the regulator has none (key absent, null or ""). */
  irnTemplate: string | null;
  /** Derived from the IRN template (the real answer has no `service_id`); null when there is no template. */
  serviceId: string | null;
  active: boolean;
}

/** The fields of a regulator entity the gateway needs (spec §9); everything else is ignored. */
export interface RegulatorEntity {
  id: string;
  reference: string;
  active: boolean;
  businesses: RegulatorBusiness[];
}

/**
 * Size limits of the entity answer. Values beyond them are served as GW_REG_ENTITY_METADATA_UNSUPPORTED
 * (502, DO_NOT_RETRY): a value the gateway cannot store or publish unchanged (gatewaySubBusinessId is at
 * most 255 characters, spec §8) is refused rather than truncated.
 */
export const ENTITY_LIMITS = {
  idLength: 255,
  referenceLength: 255,
  businesses: 100,
  businessIdLength: 255,
  businessNameLength: 255,
  tinLength: 64,
  irnTemplateLength: 255,
} as const;

/**
 * Why the regulator refused, classified by the client from what the real API sends: the HTTP status
 * and, for one case, the message text. The operation decides the public code (`mapRegulatorFailure`).
 */
export type RejectionReason =
  /** 400 (the real API's "validation failed: …", which also covers duplicates), 422 or another 4xx. */
  | "bad_request"
  /** 401 on the taxpayer login (its message does not name the API key): the taxpayer's credentials. */
  | "unauthorized"
  /** 403 on the taxpayer login (its message does not name the API key): this application not linked. */
  | "forbidden"
  /** 404 in the error envelope: the IRN, business, entity or user does not exist. */
  | "not_found"
  | "conflict"
  /** 413 (with or without envelope: refused before processing). */
  | "payload_too_large"
  /** Message text names the webhook ("webhook url is not setup"): a transmission prerequisite. */
  | "webhook_not_configured";

/** A 4xx business rejection; the regulator certainly did not perform the operation. */
export interface RegulatorRejection {
  kind: "rejected";
  status: number;
  reason: RejectionReason;
  /**
   * The regulator's `error.id` as sent: a per-request UUID on the real API, for correlation with the
   * regulator's support only, never for decisions. null when absent or not a safe token.
   */
  errorId: string | null;
  /**
   * The regulator's own explanation (`error.details`, else `error.public_message`), at most 500
   * characters, control characters removed. Free text that may repeat the document: it is kept only
   * on the owning business's own records (a Stored invoice's `lastError`) — never logged, never put in
   * a problem body. Absent when the answer carries none.
   */
  message?: string;
}

/** Why the result of a mutation cannot be proved. */
export type AmbiguousReason =
  | "timeout"
  | "connection_lost"
  | "server_error"
  | "redirect"
  | "empty_body"
  | "malformed_body"
  | "unrecognized_envelope"
  | "not_ok"
  | "unrecognized_error"
  | "response_too_large";

/** The operation may or may not have happened: freeze, never replay automatically (spec §3.2, §3.3). */
export interface RegulatorAmbiguity {
  kind: "ambiguous";
  reason: AmbiguousReason;
  /** HTTP status when an answer arrived. */
  upstreamStatus?: number;
}

export type SignOutcome = { kind: "signed"; response: RegulatorResponse } | RegulatorRejection | RegulatorAmbiguity;

export type TransmitOutcome = { kind: "transmitted"; response: RegulatorResponse } | RegulatorRejection | RegulatorAmbiguity;

export type ValidationOutcome = { kind: "valid"; response: RegulatorResponse } | RegulatorRejection;

export interface RegulatorTargetInfo {
  state: RegulatorState;
  dependency: string;
  contractVersion: string;
  interfaceVersion: string;
  /** The staged credential pair in use. */
  credentials: "current" | "next";
  /** Whether a next pair is staged. */
  staged: boolean;
}

/**
 * What the regulator says about an IRN (confirm by IRN): `found` (it holds the invoice signed),
 * `not_found` (its own "no such invoice": provably not signed), or `unknown` (nothing is proved:
 * unavailable, throttled, an unusable answer).
 */
export type InvoiceConfirmation = { kind: "found" } | { kind: "not_found" } | { kind: "unknown"; failureClass: string };

// ---------------------------------------------------------------------------
// The port
// ---------------------------------------------------------------------------

export interface RegulatorClient {
  /**
   * Taxpayer login → the entity id. Throws GW_REG_CREDENTIALS_REQUIRED (no call made) when email or
   * password is empty, otherwise the authentication mapping of `mapRegulatorFailure`.
   */
  authenticate(state: RegulatorState, login: TaxpayerLogin, ctx: RegulatorCallContext): Promise<RegulatorAuthResult>;
  /** The entity and its businesses, validated field by field (ENTITY_LIMITS). */
  getEntity(state: RegulatorState, entityId: string, ctx: RegulatorCallContext): Promise<RegulatorEntity>;
  validateIrn(state: RegulatorState, body: IrnValidationRequest, ctx: RegulatorCallContext): Promise<ValidationOutcome>;
  validateInvoice(state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<ValidationOutcome>;
  /** The billable call. Success only on HTTP 2xx, body `code` 201 and `data.ok === true`. */
  sign(state: RegulatorState, invoiceDocument: InvoiceDocument, ctx: RegulatorCallContext): Promise<SignOutcome>;
  /** Success on HTTP 2xx, body `code` 200 or 201 and `data.ok === true`. Sends `{}`. */
  transmit(state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<TransmitOutcome>;
  /** Per configured state: contract adapter version, interface version, the credentials in use (health). */
  describe?(): RegulatorTargetInfo[];
  /** Confirm by IRN (the recovery jobs): never throws. */
  confirm(state: RegulatorState, irn: string, ctx: RegulatorCallContext): Promise<InvoiceConfirmation>;
  /** Direct routes: the 2xx answer to pass through, or a thrown GatewayError (regulator body discarded). */
  relay(state: RegulatorState, request: RelayRequest, ctx: RegulatorCallContext): Promise<RegulatorResponse>;
}

// ---------------------------------------------------------------------------
// Failures and their public mapping
// ---------------------------------------------------------------------------

export type RegulatorOperation =
  | "authenticate"
  | "getEntity"
  | "validateIrn"
  | "validateInvoice"
  | "sign"
  | "transmit"
  | "relay";

/** Why the returned data could not be used. */
export type InvalidResponseReason = Exclude<AmbiguousReason, "timeout" | "connection_lost" | "server_error" | "redirect">;

/** Every way a regulator call can fail, normalised. */
export type RegulatorFailure =
  /** No base URL for the state: nothing was called. */
  | { kind: "not_configured" }
  /** Refused by the open circuit: nothing was called. */
  | { kind: "circuit_open" }
  /** The per-call deadline passed (or the regulator answered 408). */
  | { kind: "timeout"; upstreamStatus?: number }
  /** Connection failure; `dispatched: false` = the connection was never established (nothing sent). */
  | { kind: "transport"; dispatched: boolean }
  | { kind: "server_error"; upstreamStatus: number }
  | { kind: "rate_limited"; retryAfterSeconds: number }
  /** The deployment's own x-api-key / x-api-secret refused (400 "unable to validate api key", 401, 403). */
  | { kind: "credentials_rejected"; upstreamStatus: number }
  /** The regulator's router knows no such path (its un-enveloped 404): nothing was processed. */
  | { kind: "route_not_found"; upstreamStatus: number }
  /** A 3xx: redirects are never followed (a contract failure). */
  | { kind: "redirect"; upstreamStatus: number }
  /** The answer breaks the dependency contract (envelope, body, unrecognised error answer). */
  | { kind: "invalid_response"; reason: InvalidResponseReason; upstreamStatus: number }
  /** The entity answer is coherent but a field is missing/malformed ("invalid") or over ENTITY_LIMITS ("unsupported"). */
  | { kind: "entity_metadata"; problem: "invalid" | "unsupported" }
  | RegulatorRejection;

/** Normalised `failureClass` values (logs, circuit). */
export type RegulatorFailureClass =
  | "not_configured"
  | "circuit_open"
  | "timeout"
  | "transport"
  | "server_error"
  | "rate_limited"
  | "credentials_rejected"
  | "invalid_response"
  | "metadata_invalid"
  | "rejected";

/**
 * How a failure counts for the circuit (spec §3.5): timeouts, transport errors, 5xx, rejected deployment
 * credentials and invalid dependency contracts (bad envelope, 3xx, unrecognised error answer, a
 * route the regulator does not know) count. Customer 4xx, business rejections, 429 and a coherent entity
 * answer whose business fields are malformed or oversized (one taxpayer's data, not the dependency) do not.
 */
export function regulatorFailureCounts(failure: RegulatorFailure): boolean {
  switch (failure.kind) {
    case "timeout":
    case "transport":
    case "server_error":
    case "credentials_rejected":
    case "redirect":
    case "route_not_found":
    case "invalid_response":
    case "circuit_open":
      return true;
    case "rejected":
    case "not_configured":
    case "rate_limited":
    case "entity_metadata":
      return false;
  }
}

export function regulatorFailureClass(failure: RegulatorFailure): RegulatorFailureClass {
  switch (failure.kind) {
    case "redirect":
    case "route_not_found":
      return "invalid_response";
    case "entity_metadata":
      return "metadata_invalid";
    default:
      return failure.kind;
  }
}

/** Marks carried by every GatewayError the regulator client throws (read by `classifyError`). */
export interface RegulatorErrorMarks {
  /** true: counts against the regulator circuit (spec §3.5); false: customer/business outcome. */
  dependencyFailure: boolean;
  /** Present only when dependencyFailure is true. */
  failureClass?: RegulatorFailureClass;
  regulatorFailure: RegulatorFailure["kind"];
}

export type RegulatorGatewayError = GatewayError & RegulatorErrorMarks;

export function isRegulatorGatewayError(e: unknown): e is RegulatorGatewayError {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { isGatewayError?: unknown }).isGatewayError === true &&
    typeof (e as { dependencyFailure?: unknown }).dependencyFailure === "boolean" &&
    typeof (e as { regulatorFailure?: unknown }).regulatorFailure === "string"
  );
}

/**
 * The one mapping from a regulator failure to the public error (spec §7.11 and the tables of §7.5,
 * §7.6, §7.10). `authenticate` and `getEntity` are "regulator verification" (§7.6, onboarding and
 * reverification): their unavailability is retryable with the same idempotency key, and an unusable
 * integration (circuit open, deployment credentials rejected, a route the regulator does not serve) is
 * GW_REG_VERIFICATION_UNAVAILABLE. Every other operation is an "ordinary" call (§7.10, §7.11).
 * See docs/regulator-client.md for the full table.
 */
export function mapRegulatorFailure(failure: RegulatorFailure, operation: RegulatorOperation): RegulatorGatewayError {
  const verification = operation === "authenticate" || operation === "getEntity";
  const err = _mapped(failure, operation, verification);
  const counts = regulatorFailureCounts(failure);
  const marks: RegulatorErrorMarks = {
    dependencyFailure: counts,
    ...(counts ? { failureClass: regulatorFailureClass(failure) } : {}),
    regulatorFailure: failure.kind,
  };
  return Object.assign(err, marks);
}

// --- Internal helpers ---

function _mapped(failure: RegulatorFailure, operation: RegulatorOperation, verification: boolean): GatewayError {
  switch (failure.kind) {
    case "not_configured":
      return gwError("GW_REGULATOR_UNAVAILABLE", { detail: "No regulator is configured for the business's state." });
    case "circuit_open":
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is temporarily unavailable." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator is temporarily unavailable." });
    case "credentials_rejected":
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is unavailable." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator is unavailable." });
    case "timeout":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: "The regulator did not answer in time." })
        : gwError("GW_UPSTREAM_TIMEOUT", { detail: "The regulator did not answer in time." });
    case "transport":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: "The regulator could not be reached." })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: "The regulator could not be reached." });
    case "server_error":
      return verification
        ? gwError("GW_REG_AUTH_UNAVAILABLE", { detail: `The regulator failed (HTTP ${failure.upstreamStatus}).` })
        : gwError("GW_UPSTREAM_UNAVAILABLE", { detail: `The regulator failed (HTTP ${failure.upstreamStatus}).` });
    case "rate_limited":
      return gwError("GW_RATE_LIMIT_EXCEEDED", {
        detail: "The regulator is throttling requests; wait before retrying.",
        retryAfterSeconds: failure.retryAfterSeconds,
      });
    case "route_not_found":
      // The integration calls a path the regulator does not serve: verification is unusable (§7.6),
      // an ordinary call got an answer it cannot use (§7.10).
      return verification
        ? gwError("GW_REG_VERIFICATION_UNAVAILABLE", { detail: "Regulator verification is unavailable." })
        : gwError("GW_UPSTREAM_RESPONSE_INVALID", { detail: "The regulator's answer could not be used." });
    case "redirect":
    case "invalid_response": {
      const detail = "The regulator's answer could not be used.";
      if (operation === "authenticate") return gwError("GW_REG_AUTH_RESPONSE_INVALID", { detail });
      if (operation === "getEntity") return gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail });
      return gwError("GW_UPSTREAM_RESPONSE_INVALID", { detail });
    }
    case "entity_metadata":
      return failure.problem === "unsupported"
        ? gwError("GW_REG_ENTITY_METADATA_UNSUPPORTED", { detail: "The regulator's entity details exceed the accepted limits." })
        : gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail: "The regulator's business metadata is missing or malformed." });
    case "rejected":
      return _rejection(failure, operation);
  }
}

function _rejection(r: RegulatorRejection, operation: RegulatorOperation): GatewayError {
  const reason = r.reason;
  if (operation === "authenticate") {
    // The taxpayer login (§7.6): 401 wrong password, 403 application not linked, anything else
    // (400 validation, 404 unknown user) a refusal of the taxpayer's credentials.
    if (reason === "unauthorized") return gwError("GW_REG_LOGIN_INVALID");
    if (reason === "forbidden") return gwError("GW_REG_APPLICATION_NOT_LINKED");
    return gwError("GW_REG_CREDENTIALS_REJECTED");
  }
  if (operation === "getEntity") {
    // 404, and the real 400 "validation failed" for an entity id it cannot read (e.g. "invalid UUID length"):
    // no usable entity under the id the login returned.
    if (reason === "not_found" || reason === "bad_request") {
      return gwError("GW_REG_ENTITY_NOT_FOUND", { detail: "The regulator has no usable taxpayer entity for this login." });
    }
    return gwError("GW_REG_BUSINESS_METADATA_INVALID", { detail: "The regulator refused the entity read." });
  }
  switch (reason) {
    case "webhook_not_configured":
      return gwError("GW_INVOICE_NOT_TRANSMITTABLE", {
        detail: "The regulator refused the transmission: the business's webhook URL is not set up at the regulator.",
      });
    case "not_found":
      return gwError("GW_INVOICE_NOT_FOUND", { detail: "The regulator has no invoice (or business) for this request." });
    case "conflict":
      return gwError("GW_INVOICE_STATE_CONFLICT", { detail: "The regulator refused the change in the invoice's current state." });
    case "payload_too_large":
      return gwError("GW_REQUEST_BODY_TOO_LARGE");
    default:
      return operation === "validateIrn"
        ? gwError("GW_INVOICE_IRN_INVALID", { detail: "The regulator rejected the IRN." })
        : gwError("GW_REQUEST_VALIDATION_FAILED", { detail: `The regulator rejected the request (HTTP ${r.status}).` });
  }
}
