/**
 * The simulator's public data types: its options, the records it keeps of signed invoices and
 * created parties, and the read-only view of its state that tests inspect. `server.ts` re-exports
 * them, so importers keep one path.
 */
import type { SimulatorFixtures } from "./fixtures.ts";
import type { SimulatorRoute } from "./router.ts";

export interface RegulatorSimulatorOptions {
  /** TCP port; 0 (default) picks a free port. */
  port?: number;
  /** Interface to listen on; default "127.0.0.1". */
  host?: string;
  fixtures: SimulatorFixtures;
  /**
   * The deployment's own credentials; every call except `GET /api` and the resource lists must carry
   * them as x-api-key / x-api-secret.
   */
  credentials: { apiKey: string; apiSecret: string };
  /** Serve the fault/state control API under `/__sim/` (no credentials needed). Default true. */
  controlApi?: boolean;
  /** Largest accepted request body; default 2 MiB (larger → 413). */
  bodyLimitBytes?: number;
  /** Optional structured log sink; one "regulator_sim_request" event per answered call. */
  log?: (event: string, fields: Record<string, unknown>) => void;
}

export type PaymentStatus = "PENDING" | "PAID" | "CANCELED";

export interface SignedInvoiceRecord {
  irn: string;
  business_id: string;
  entity_id: string;
  status: "SIGNED" | "TRANSMITTED";
  payment_status: PaymentStatus;
  /** The `reference` of the last payment-status update, if any. */
  payment_reference: string | null;
  signed_at: string;
  transmitted_at: string | null;
  /** When the receiving side confirmed receipt (`PATCH /api/v1/invoice/transmit/{irn}`). */
  receipt_confirmed_at: string | null;
  updated_at: string;
  /** The signed document exactly as received. */
  invoice: Record<string, unknown>;
}

/** A party created with `POST /api/v1/invoice/party`. */
export interface PartyRecord {
  id: string;
  business_id: string;
  party_name: string;
  tin: string;
  email: string;
  telephone: string | null;
  business_description: string | null;
  postal_address_id: string;
  postal_address: Record<string, unknown> | null;
  created_at: string;
}

/** Read-only view of what the simulator has seen and done. */
export interface SimulatorState {
  /** IRNs signed, in order. */
  signedIrns(): string[];
  /** IRNs transmitted, in order of signing. */
  transmittedIrns(): string[];
  isSigned(irn: string): boolean;
  isTransmitted(irn: string): boolean;
  isReceiptConfirmed(irn: string): boolean;
  /** A copy of the stored record of a signed IRN. */
  invoice(irn: string): SignedInvoiceRecord | undefined;
  /** Parties created, in order. */
  parties(): PartyRecord[];
  /** Calls of one route (every call that matched the route, whatever its outcome). */
  calls(route: SimulatorRoute): number;
  callCounts(): Record<SimulatorRoute, number>;
  totalCalls(): number;
}
