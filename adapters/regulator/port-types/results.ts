/**
 * The regulator port's results: a passed-through answer, the entity and its businesses (with their
 * size limits), and the classified outcomes of validation, signing, transmission and confirmation.
 * Re-exported by ../port.ts, the one file other folders import.
 */
import type { RegulatorState } from "./inputs.ts";

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
  /**
   * What is wrong with this business's own fields, if anything: only the business an operation
   * selects must be sound (spec §9), so a malformed sibling never blocks it.
   */
  metadataProblem?: "invalid" | "unsupported";
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
