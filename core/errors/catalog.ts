/**
 * THE error catalog: every public GW_* code of the invoice-gateway spec §7.4–§7.10, as data.
 * Code raises by code (`gwError("GW_RATE_LIMIT_EXCEEDED", {...})`); core/errors/render.ts turns a row
 * into problem+json. test/core/errors/catalog.test.ts checks every row against the spec's tables.
 * A code, once published, is never reused or renumbered. Internal failures (boot, config) never get
 * a public code: they stop startup instead.
 */

export type RetryStrategy =
  | "DO_NOT_RETRY"
  | "AFTER_CORRECTION"
  | "BACKOFF"
  | "SAME_IDEMPOTENCY_KEY"
  | "POLL_OPERATION"
  | "CONTACT_SUPPORT";

export interface CatalogEntry {
  readonly status: number;
  readonly title: string;
  readonly strategy: RetryStrategy;
  readonly sameIdempotencyKey: boolean;
  /** Fixed retry.afterSeconds; a raise may supply its own (quota windows). */
  readonly afterSeconds?: number;
  /** action.code: what the caller should do. */
  readonly action: string;
  /** action.description: the spec's meaning-and-action text. */
  readonly description: string;
}

export const CATALOG = {
  // --- §7.4 Request, protocol and routing codes ---
  GW_REQUEST_INVALID_JSON: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Invalid JSON body", description: "Body is not parseable JSON; fix syntax." },
  GW_REQUEST_BODY_INCOMPLETE: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: true, action: "CORRECT_REQUEST", title: "Request body incomplete", description: "Incomplete body; resend unchanged with same key." },
  GW_REQUEST_VALIDATION_FAILED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Request validation failed", description: "Invalid values listed in errors." },
  GW_REQUEST_PATH_PARAMETER_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Invalid path parameter", description: "Path parameter format." },
  GW_REQUEST_HEADER_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Invalid header", description: "Header format." },
  GW_REQUEST_SERVER_FIELD_SUPPLIED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "A server-managed field was sent", description: "A server-managed field was sent; remove it." },
  GW_REQUEST_BODY_TOO_LARGE: { status: 413, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "REDUCE_BODY_SIZE", title: "Request body too large", description: "Over the endpoint limit; do not split one invoice." },
  GW_REQUEST_URI_TOO_LONG: { status: 414, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Request URI too long", description: "Path or query too long." },
  GW_REQUEST_MEDIA_TYPE_UNSUPPORTED: { status: 415, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "SEND_JSON", title: "Unsupported media type", description: "Send application/json or the documented type." },
  GW_ROUTE_NOT_FOUND: { status: 404, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "CHECK_ENDPOINT", title: "Route not found", description: "No such public endpoint." },
  GW_METHOD_NOT_ALLOWED: { status: 405, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "USE_ALLOWED_METHOD", title: "Method not allowed", description: "Use a method from the Allow header." },
  GW_RATE_LIMIT_EXCEEDED: { status: 429, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Rate limit exceeded", description: "Rate above limit (also regulator throttling of a child-bound call); wait Retry-After." },
  GW_REQUEST_BODY_TIMEOUT: { status: 408, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Request body timeout", description: "Body not fully received before read deadline; resend promptly, same key and content." },
  GW_GATEWAY_CAPACITY_EXCEEDED: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, afterSeconds: 1, action: "RETRY_WITH_BACKOFF", title: "Gateway at capacity", description: "At capacity; Retry-After supplied; keep key and content." },
  GW_ROUTING_LOOP_DETECTED: { status: 508, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Routing loop detected", description: "A request returned to the gateway carrying a non-zero hop marker; rejected at once; do not retry until the route is fixed." },
  // --- §7.5 Entry point, authentication, domain, mode, regulator ---
  GW_EDGE_VERIFICATION_FAILED: { status: 403, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Edge verification failed", description: "Not via the public entry point or approved hostname." },
  GW_AUTH_API_KEY_REQUIRED: { status: 401, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "PROVIDE_API_KEY", title: "API key required", description: "X-api-key missing." },
  GW_API_KEY_INVALID: { status: 401, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "ROTATE_API_KEY", title: "API key invalid", description: "Key not authenticated; create or rotate key." },
  GW_AUTH_TENANT_FORBIDDEN: { status: 403, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "USE_HOSTNAME_API_KEY", title: "API key not of this hostname's business", description: "Key not of the hostname's business." },
  GW_AUTH_CONTEXT_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Authorization cannot be verified", description: "Authorization cannot be verified." },
  GW_ADMIN_AUTHENTICATION_FAILED: { status: 401, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Administrator authentication failed", description: "Operator-only administrator authentication." },
  GW_DOMAIN_NOT_PROVISIONED: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "USE_APPROVED_HOSTNAME", title: "Domain not provisioned", description: "Hostname not an approved domain." },
  GW_DOMAIN_REGISTRY_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Domain configuration cannot be loaded", description: "Domain configuration cannot be loaded; regulator not called." },
  GW_TENANT_AUTHORIZATION_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Authorization service gave no valid result", description: "Authorization service gave no valid result; no fallback to earlier result; regulator not called." },
  GW_DOMAIN_APPROVAL_STATE_CHANGED: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Domain configuration changed after authorization", description: "Domain configuration changed after authorization." },
  GW_TENANT_MODE_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Domain mode unavailable", description: "Mode cannot be determined." },
  GW_OPERATION_MODE_CONFLICT: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "USE_ROUTE_OF_DOMAIN_MODE", title: "Operation not available in this mode", description: "Endpoint not available in the domain's mode." },
  GW_REGULATOR_UNAVAILABLE: { status: 503, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No usable regulator configuration for the business", description: "No usable regulator configuration for the business." },
  GW_INVOICE_OPERATION_UNAVAILABLE: { status: 503, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Operation cannot be served", description: "Operation cannot be served; inbound download and acknowledgement always return it." },
  // --- §7.6 Onboarding and regulator verification ---
  GW_ONBOARDING_NOT_RESUMABLE: { status: 409, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Earlier onboarding for the key expired or cannot complete", description: "Earlier onboarding for the key expired or cannot complete; stop; no new key until confirmed." },
  GW_REG_CREDENTIALS_REQUIRED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: true, action: "PROVIDE_REGULATOR_CREDENTIALS", title: "RegulatorCredentials fields missing", description: "RegulatorCredentials fields missing; resend with every field, same key." },
  GW_ATTESTATION_SERVICE_UNAVAILABLE: { status: 503, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Signed attestation unavailable", description: "Signed attestation unavailable." },
  GW_REG_VERIFICATION_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Regulator verification integration unusable", description: "Regulator verification integration unusable." },
  GW_REG_LOGIN_INVALID: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Taxpayer regulator login invalid", description: "Taxpayer regulator login invalid." },
  GW_REG_APPLICATION_NOT_LINKED: { status: 403, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "LINK_ACCESS_POINT_PROVIDER", title: "The service is not linked as access point provider", description: "The service is not linked as access point provider." },
  GW_REG_CREDENTIALS_REJECTED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Regulator rejected taxpayer credentials", description: "Regulator rejected taxpayer credentials." },
  GW_REG_AUTH_RESPONSE_INVALID: { status: 502, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Unexpected regulator authentication response", description: "Unexpected regulator authentication response." },
  GW_REG_AUTH_UNAVAILABLE: { status: 502, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Regulator authentication did not complete", description: "Regulator authentication did not complete." },
  GW_REG_ENTITY_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Taxpayer entity absent at regulator", description: "Taxpayer entity absent at regulator." },
  GW_REG_ENTITY_INACTIVE: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Entity inactive", description: "Entity inactive." },
  GW_REG_ENTITY_METADATA_UNSUPPORTED: { status: 502, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Entity details exceed accepted limits", description: "Entity details exceed accepted limits." },
  GW_REG_ACTIVE_BUSINESS_NOT_FOUND: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Entity has no active business", description: "Entity has no active business." },
  GW_REG_BUSINESS_INACTIVE: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Selected business inactive", description: "Selected business inactive." },
  GW_REG_BUSINESS_TIN_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No business matches the TIN", description: "No business matches the TIN." },
  GW_REG_BUSINESS_SELECTION_AMBIGUOUS: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Several active businesses match", description: "Several active businesses match; supply a TIN identifying exactly one." },
  GW_REG_BUSINESS_METADATA_INVALID: { status: 502, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Business metadata missing or malformed", description: "Business metadata missing or malformed." },
  GW_REG_IRN_TEMPLATE_MISSING: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Business has no IRN template", description: "Business has no IRN template." },
  GW_ONBOARDING_SERVICE_INVALID_RESPONSE: { status: 503, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Onboarding service gave an invalid response", description: "Onboarding service gave an invalid response." },
  GW_CRYPTO_MATERIAL_SERVICE_INVALID_RESPONSE: { status: 503, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "QR-material rotation service gave an invalid response", description: "QR-material rotation service gave an invalid response; response says same key, but never retry automatically (exception 1 of 7.2)." },
  // --- §7.7 Represented business and invoice identity ---
  GW_SUB_BUSINESS_ID_REQUIRED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "x-sub-business-id required", description: "X-sub-business-id missing." },
  GW_SUB_BUSINESS_ID_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Empty, wrong format or length", description: "Empty, wrong format or length." },
  GW_SUB_BUSINESS_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No approved represented business with that ID under the business", description: "No approved represented business with that ID under the business." },
  GW_SUB_BUSINESS_FORBIDDEN: { status: 403, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Belongs to another top-level business", description: "Belongs to another top-level business." },
  GW_INVOICE_IRN_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "IRN missing or malformed", description: "IRN missing or malformed." },
  GW_INVOICE_IRN_FORBIDDEN: { status: 403, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "IRN not bound to the represented business", description: "IRN not bound to the represented business." },
  GW_INVOICE_BUSINESS_MISMATCH: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Business_id differs from the current externalBusinessId", description: "Business_id differs from the current externalBusinessId." },
  GW_INVOICE_SUPPLIER_TIN_MISMATCH: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Supplier TIN differs from stored identity", description: "Supplier TIN differs from stored identity." },
  GW_INVOICE_REFERENCE_MISMATCH: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Header, path and body references not identical", description: "Header, path and body references not identical." },
  GW_INVOICE_TRANSMIT_BODY_NOT_EMPTY: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Pass-through transmit body must be {}", description: "Pass-through transmit body must be {}." },
  // --- §7.8 Identity reverification and review ---
  GW_IDENTITY_REVIEW_CONFLICT: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "READ_IDENTITY_VERSIONS", title: "Another change awaits review or the review is decided", description: "Another change awaits review or the review is decided; read identity-versions first." },
  GW_IDENTITY_PROTECTED_MIGRATION_REQUIRED: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "REQUEST_OPERATOR_MIGRATION", title: "Entity ID, business ID or TIN changed", description: "Entity ID, business ID or TIN changed; public route cannot apply it; operator approval needed; do not submit invoices or onboard a duplicate meanwhile." },
  GW_IDENTITY_REVIEW_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No review with that ID for the business", description: "No review with that ID for the business." },
  GW_IDENTITY_SERVICE_INVALID_RESPONSE: { status: 502, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Invalid identity service response", description: "Invalid identity service response; do not repeat the decision." },
  // --- §7.9 Idempotency, billing, signing, transmission ---
  GW_IDEMPOTENCY_KEY_REQUIRED: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "PROVIDE_IDEMPOTENCY_KEY", title: "x-idempotency-key required", description: "X-idempotency-key missing." },
  GW_IDEMPOTENCY_KEY_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Key format wrong", description: "Key format wrong; nothing was accepted." },
  GW_IDEMPOTENCY_CONTENT_CONFLICT: { status: 409, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Key used before with different content", description: "Key used before with different content; never reuse for different content (see exception 2 of 7.2)." },
  GW_ATTEMPT_NUMBER_INVALID: { status: 400, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Invalid x-attempt-number", description: "X-attempt-number not a positive integer." },
  GW_BILLING_WALLET_DECLINED: { status: 402, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "FUND_WALLET", title: "Wallet could not fund the operation", description: "Wallet could not fund the operation." },
  GW_BILLING_ATTEMPT_CONFLICT: { status: 409, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Billing identity conflicts with an existing attempt", description: "Billing identity conflicts with an existing attempt." },
  GW_BILLING_REQUEST_REJECTED: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "A recognized billing rule rejected the request", description: "A recognized billing rule rejected the request." },
  GW_BILLING_SERVICE_UNAVAILABLE: { status: 503, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Cannot confirm whether the fee was charged", description: "Cannot confirm whether the fee was charged; regulator not called." },
  GW_SIGN_ATTEMPT_ALREADY_PROCESSED: { status: 409, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Key and attempt number already processed", description: "Key and attempt number already processed." },
  GW_SIGN_RECOVERY_UNAVAILABLE: { status: 503, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Wallet charged but settlement steps incomplete", description: "Wallet charged but settlement steps incomplete." },
  GW_SIGN_REJECTED: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "NEW_ATTEMPT_WITH_NEW_KEY", title: "Regulator rejected signing", description: "Regulator rejected signing; reversal confirmed." },
  GW_SIGN_REVERSAL_UNCONFIRMED: { status: 503, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Rejected but reversal unconfirmed", description: "Rejected but reversal unconfirmed." },
  GW_SIGN_OUTCOME_UNCONFIRMED: { status: 502, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Signing may have occurred", description: "Signing may have occurred; no new key." },
  GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED: { status: 409, strategy: "DO_NOT_RETRY", sameIdempotencyKey: false, action: "DO_NOT_RETRY", title: "Matching transmission in progress or recorded", description: "Matching transmission in progress or recorded; returns operationId." },
  GW_TRANSMIT_OUTCOME_UNCONFIRMED: { status: 502, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "May already be transmitted", description: "May already be transmitted; returns operationId." },
  GW_OPERATION_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No operation for that public identifier", description: "No operation for that public identifier." },
  // --- §7.10 Stored invoices, management, upstream, internal ---
  GW_INVOICE_INTAKE_UNAVAILABLE: { status: 503, strategy: "SAME_IDEMPOTENCY_KEY", sameIdempotencyKey: true, action: "RETRY_SAME_IDEMPOTENCY_KEY", title: "Cannot confirm intake accepted the invoice", description: "Cannot confirm intake accepted the invoice." },
  GW_INVOICE_NOT_FOUND: { status: 404, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "No invoice with that ID under the business in the current state", description: "No invoice with that ID under the business in the current state." },
  GW_INVOICE_STATE_CONFLICT: { status: 409, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "Status does not permit the transition", description: "Status does not permit the transition." },
  GW_INVOICE_NOT_TRANSMITTABLE: { status: 422, strategy: "AFTER_CORRECTION", sameIdempotencyKey: false, action: "CORRECT_REQUEST", title: "A transmission prerequisite is incomplete", description: "A transmission prerequisite is incomplete." },
  GW_MANAGEMENT_SERVICE_UNAVAILABLE: { status: 503, strategy: "BACKOFF", sameIdempotencyKey: true, action: "RETRY_WITH_BACKOFF", title: "Management service failed", description: "Management service failed; reads retry with backoff, mutations only with same key." },
  GW_UPSTREAM_RESPONSE_INVALID: { status: 502, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Invalid response from a relied-on service", description: "Invalid response from a relied-on service; do not resubmit a mutation." },
  GW_UPSTREAM_TIMEOUT: { status: 504, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Upstream did not respond in time", description: "Upstream did not respond in time; never resubmit a mutation; read retry only when the route documents it as safe." },
  GW_UPSTREAM_UNAVAILABLE: { status: 502, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Upstream transport failure or 5xx on an ordinary route", description: "Upstream transport failure or 5xx on an ordinary route." },
  GW_INTERNAL_ERROR: { status: 500, strategy: "CONTACT_SUPPORT", sameIdempotencyKey: false, action: "CONTACT_SUPPORT", title: "Internal error", description: "Unexpected error; do not resubmit a mutation." },
} as const satisfies Record<`GW_${string}`, CatalogEntry>;

export type GwCode = keyof typeof CATALOG;

export function isGwCode(code: string): code is GwCode {
  return Object.hasOwn(CATALOG, code);
}

/**
 * The wait a BACKOFF answer advertises when neither its row nor its raise names one: every BACKOFF
 * 429/503 carries `Retry-After` and `retry.afterSeconds` (spec §7.2), so a client never has to guess.
 */
export const DEFAULT_BACKOFF_AFTER_SECONDS = 2;

/**
 * The retry wait of an answer: the raise's own (quota windows, drains), else the row's fixed one,
 * else the BACKOFF default. Undefined for strategies that carry no wait.
 */
export function retryAfterSecondsOf(row: CatalogEntry, raised?: number): number | undefined {
  if (raised !== undefined) return raised;
  if (row.afterSeconds !== undefined) return row.afterSeconds;
  return row.strategy === "BACKOFF" ? DEFAULT_BACKOFF_AFTER_SECONDS : undefined;
}

/** Base address of the per-code documentation (problem `type` and `action.documentation`). */
export const ERROR_DOCS_BASE = "https://docs.gatehouse.ng/errors/";

export function docsUrl(code: GwCode): string {
  return ERROR_DOCS_BASE + code.toLowerCase().replaceAll("_", "-");
}
