/**
 * The signing service as its routes see it, and what its use cases share: the caller, the billed
 * sign request, and the service's dependencies (ports and timings).
 */
import type { AlertChannel, BillingLedger } from "../../adapters/ports.ts";
import type { RegulatorClient, RegulatorResponse, RegulatorState } from "../../adapters/regulator/port.ts";
import type { Logger } from "../../core/log.ts";
import type { IrnValidationInput } from "./schemas.ts";
import type { SigningStore } from "./store.ts";

/** The route id of the billed sign: part of every sign record's `_id`. */
export const SIGN_ROUTE = "POST /api/v1/invoice/sign";

export interface SignCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
  domain: string;
  feeKobo: number;
}

export interface SignRequest {
  subBusinessId: string;
  idempotencyKey: string;
  attemptNumber: number;
  document: Record<string, unknown>;
}

/** What a route answers: a regulator response to pass through (errors are thrown). */
export type PassThrough = RegulatorResponse;

/** A direct regulator route by IRN: confirm, download or the payment-status update. */
export interface IrnCall {
  method: "GET" | "PATCH";
  segment: "confirm" | "download" | "update";
  body?: Record<string, unknown>;
}

export interface SigningService {
  /** The billed sign, idempotent per key (docs/signing-and-transmission.md). */
  sign(caller: SignCaller, r: SignRequest): Promise<PassThrough>;
  /** The regulator's invoice validation, after the gateway's own checks (unbilled). */
  validateInvoice(caller: SignCaller, subBusinessId: string, document: Record<string, unknown>): Promise<PassThrough>;
  /** The regulator's IRN validation, after the gateway's own checks (unbilled). */
  validateIrn(caller: SignCaller, subBusinessId: string, body: IrnValidationInput): Promise<PassThrough>;
  /** confirm / download / update by IRN: the IRN must be the represented business's. */
  byIrn(caller: SignCaller, subBusinessId: string, irn: string, call: IrnCall): Promise<PassThrough>;
  /** A regulator resource list. */
  resource(caller: Pick<SignCaller, "state" | "requestId">, name: string): Promise<PassThrough>;
}

export interface SigningServiceOptions {
  store: SigningStore;
  billing: BillingLedger;
  regulator: RegulatorClient;
  log: Logger;
  secret: Buffer;
  now: () => number;
  /** An in-progress record older than this is stale (holder presumed dead). */
  staleAfterMs: number;
  /** How long a concurrent duplicate waits for the first request's answer. */
  waitMs: number;
  pollMs: number;
  retentionMs: number;
  /** Immediate operator signals (spec §6): unconfirmed sign or reversal, incomplete settlement. */
  alerts?: AlertChannel;
}
