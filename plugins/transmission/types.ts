/**
 * The transmission service as its route sees it, and what its use case shares: the caller and the
 * service's dependencies (its collections, the regulator, timings).
 */
import type { AlertChannel, Collection, DocumentStore } from "../../adapters/ports.ts";
import type { RegulatorClient, RegulatorResponse, RegulatorState } from "../../adapters/regulator/port.ts";
import type { Logger } from "../../core/log.ts";
import type { SubBusinessDoc } from "../invoice/represented-businesses.ts";
import type { ClaimDoc } from "../invoice/transmission-claims.ts";

export interface TransmitCaller {
  requestId: string;
  businessId: string;
  state: RegulatorState;
}

export interface TransmissionService {
  /** Transmits the IRN of the caller's represented business once (key: the optional x-idempotency-key). */
  transmit(caller: TransmitCaller, subBusinessId: string, irn: string, key: string | null): Promise<RegulatorResponse>;
}

export interface TransmissionOptions {
  store: DocumentStore;
  regulator: RegulatorClient;
  log: Logger;
  deploymentSecret: string;
  now: () => number;
  /** An in_progress claim older than this is presumed dead: unknown. */
  staleAfterMs: number;
  /** Immediate operator signals (spec §6): an unprovable transmission. */
  alerts?: AlertChannel;
  /** How long a same-key retry waits for its own claim still in progress (finished or withdrawn). */
  waitMs: number;
  pollMs: number;
}

/** The options, with the collections opened and the HMAC key derived once. */
export interface TransmissionDeps extends TransmissionOptions {
  claims: Collection<ClaimDoc>;
  subs: Collection<SubBusinessDoc>;
  secret: Buffer;
}
