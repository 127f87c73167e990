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
 *
 * The port's vocabulary lives in ./port-types/ (inputs, results, failures, the public mapping) and is
 * re-exported here: this file is the one other folders import.
 */
import type { IrnValidationRequest, InvoiceDocument, RegulatorCallContext, RegulatorState, RelayRequest, TaxpayerLogin } from "./port-types/inputs.ts";
import type {
  InvoiceConfirmation,
  RegulatorAuthResult,
  RegulatorEntity,
  RegulatorResponse,
  RegulatorTargetInfo,
  SignOutcome,
  TransmitOutcome,
  ValidationOutcome,
} from "./port-types/results.ts";

export { REGULATOR_ADAPTERS, REGULATOR_ADAPTER_VERSIONS, REGULATOR_CONTRACT_VERSION, REGULATOR_RESOURCES, REGULATOR_STATES } from "./port-types/inputs.ts";
export type {
  InvoiceDocument,
  IrnValidationRequest,
  RegulatorCallContext,
  RegulatorState,
  RelayMethod,
  RelayQueryValue,
  RelayRequest,
  TaxpayerLogin,
} from "./port-types/inputs.ts";
export { ENTITY_LIMITS } from "./port-types/results.ts";
export type {
  AmbiguousReason,
  InvoiceConfirmation,
  RegulatorAmbiguity,
  RegulatorAuthResult,
  RegulatorBusiness,
  RegulatorEntity,
  RegulatorRejection,
  RegulatorResponse,
  RegulatorTargetInfo,
  RejectionReason,
  SignOutcome,
  TransmitOutcome,
  ValidationOutcome,
} from "./port-types/results.ts";
export { isRegulatorGatewayError, regulatorFailureClass, regulatorFailureCounts } from "./port-types/failures.ts";
export type {
  InvalidResponseReason,
  RegulatorErrorMarks,
  RegulatorFailure,
  RegulatorFailureClass,
  RegulatorGatewayError,
  RegulatorOperation,
} from "./port-types/failures.ts";
export { mapRegulatorFailure } from "./port-types/failure-mapping.ts";
export { regulatorViolations } from "./port-types/violations.ts";

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
