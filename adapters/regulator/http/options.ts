/**
 * What the HTTP regulator client is built from and what it offers beyond the port (re-exported by
 * ../http-client.ts), the options' defaults and checks, and `check`: the RangeError every part of the
 * client throws for a wiring error (a bad option, a call the port does not allow).
 */
import type { PolicyRegistry } from "../../policies.ts";
import type { AlertChannel } from "../../ports.ts";
import type { HopMarker } from "../../../core/http/hop.ts";
import type { Logger } from "../../../core/log.ts";
import type { RegulatorClient, RegulatorTargetInfo } from "../port.ts";

export interface HttpRegulatorClientOptions {
  /** Base URL per state ("https://host[/prefix]"); a state without one is not configured. */
  baseUrls: { TEST?: string; LIVE?: string };
  /** The deployment's own credentials (config `regulator.apiKey` / `regulator.apiSecret`). */
  apiKey: string;
  apiSecret: string;
  /** Where the "regulator:TEST" / "regulator:LIVE" policies are created (or found) and shown in health. */
  policies: PolicyRegistry;
  log: Logger;
  /** Per-call deadline, body included. Default 10 000 ms. */
  timeoutMs?: number;
  /** Connections per origin. Default 128. */
  connections?: number;
  /** Idle keep-alive of pooled sockets when the server sends no hint. Default undici's (4 s). */
  keepAliveTimeoutMs?: number;
  /** TCP/TLS connect deadline (a connect failure is "nothing was sent"). Default min(timeoutMs, 5 000). */
  connectTimeoutMs?: number;
  /** Largest accepted response body; larger is an invalid answer. Default 10 MiB. */
  maxResponseBytes?: number;
  /**
   * The next deployment credentials, staged for a rotation (spec §9). A call the regulator refuses
   * with the credentials in use — credentials rejected: certainly not performed — is sent once more
   * with the other pair, and the pair that worked is used from then on. Nothing else is ever retried
   * with the other pair: a mutation whose first dispatch is uncertain (timeout, lost connection, 5xx,
   * unusable answer) stays uncertain.
   */
  next?: { apiKey: string; apiSecret: string };
  /** Contract adapter version per state (spec §9); each must be one of REGULATOR_ADAPTER_VERSIONS. Default "v1". */
  contractVersions?: { TEST?: string; LIVE?: string };
  /** One report per call made (metrics and alert thresholds); exceptions it throws are ignored. */
  onCall?: (call: RegulatorCallEvent) => void;
  /** Immediate signals (every staged credential rejected). */
  alerts?: AlertChannel;
  /** The deployment's hop markers (X-Service-Gateway-Hop). Default: made from `apiSecret`. */
  hopMarker?: HopMarker;
}

/** What `onCall` receives about one call (never a body, path, query or credential). */
export interface RegulatorCallEvent {
  dependency: string;
  operation: string;
  outcome: "success" | "failure" | "neutral" | "refused";
  failureClass?: string;
  requestId?: string;
}

export interface HttpRegulatorClient extends RegulatorClient {
  /** Closes every pool (shutdown). Calls made afterwards fail as transport errors. */
  close(): Promise<void>;
  describe(): RegulatorTargetInfo[];
}

export const DEFAULT_REGULATOR_TIMEOUT_MS = 10_000;

/** The per-call limits, defaults applied. */
export interface CallLimits {
  timeoutMs: number;
  maxResponseBytes: number;
}

/** Checks the options (a RangeError names the first bad one) and returns the limits, defaults applied. */
export function checkOptions(options: HttpRegulatorClientOptions): CallLimits {
  const { apiKey, apiSecret } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REGULATOR_TIMEOUT_MS;
  const maxResponseBytes = options.maxResponseBytes ?? 10 * 1024 * 1024;
  check(typeof apiKey === "string" && apiKey !== "", "apiKey must be a non-empty string");
  check(typeof apiSecret === "string" && apiSecret !== "", "apiSecret must be a non-empty string");
  check(Number.isFinite(timeoutMs) && timeoutMs > 0, "timeoutMs must be a positive number");
  check(Number.isInteger(maxResponseBytes) && maxResponseBytes > 0, "maxResponseBytes must be a positive integer");
  const next = options.next;
  if (next) check(typeof next.apiKey === "string" && next.apiKey !== "" && typeof next.apiSecret === "string" && next.apiSecret !== "", "next credentials must be non-empty strings");
  return { timeoutMs, maxResponseBytes };
}

/** A wiring error (bad option, a call the port does not allow): RangeError "[regulator] …". */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new RangeError(`[regulator] ${message}`);
}
