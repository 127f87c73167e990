/**
 * Driver errors → port errors: E11000 → DuplicateKeyError; network, server selection, pool, topology
 * and raw socket failures → DependencyUnavailableError("mongodb", …, "transport" | "timeout");
 * transient server states (not primary, shutting down) → "server_error". Connection strings are
 * redacted from every message (they may carry credentials).
 */
import {
  MongoClientClosedError,
  MongoNetworkError,
  MongoNetworkTimeoutError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from "mongodb";
import { DependencyUnavailableError, DuplicateKeyError, InvalidQueryError } from "../../ports.ts";

/** The dependency name in DependencyUnavailableError. */
export const DEPENDENCY = "mongodb";

/** True for a unique-index violation. */
export function isDuplicate(e: unknown): boolean {
  return e instanceof MongoServerError && (e.code === 11000 || e.code === 11001 || e.code === 12582);
}

/** The port's error for a driver error (`where`: the collection or operation); other errors unchanged. */
export function mapError(e: unknown, where: string): unknown {
  if (e instanceof DependencyUnavailableError || e instanceof DuplicateKeyError || e instanceof InvalidQueryError) return e;
  if (isDuplicate(e)) {
    const m = /index: (\S+)/.exec((e as Error).message);
    return new DuplicateKeyError(where, m?.[1] ?? "unknown");
  }
  const msg = `${where}: ${_redact((e as Error)?.message ?? String(e))}`;
  if (e instanceof MongoNetworkTimeoutError || e instanceof MongoOperationTimeoutError) return new DependencyUnavailableError(DEPENDENCY, msg, "timeout");
  if (e instanceof MongoServerSelectionError) return new DependencyUnavailableError(DEPENDENCY, msg, /timed out/i.test(msg) ? "timeout" : "transport");
  if (
    e instanceof MongoNetworkError ||
    e instanceof MongoTopologyClosedError ||
    e instanceof MongoNotConnectedError ||
    e instanceof MongoClientClosedError
  ) {
    return new DependencyUnavailableError(DEPENDENCY, msg, "transport");
  }
  // The driver occasionally lets a raw socket error through (EPIPE when the server went away mid-write).
  const sysCode = (e as { code?: unknown })?.code;
  if (typeof sysCode === "string" && _SOCKET_ERROR_CODES.has(sysCode)) {
    return new DependencyUnavailableError(DEPENDENCY, msg, sysCode === "ETIMEDOUT" ? "timeout" : "transport");
  }
  if (e instanceof MongoServerError) {
    if (e.code === 50 || e.code === 262) return new DependencyUnavailableError(DEPENDENCY, msg, "timeout"); // MaxTimeMSExpired, ExceededTimeLimit
    if (typeof e.code === "number" && _TRANSIENT_SERVER_CODES.has(e.code)) return new DependencyUnavailableError(DEPENDENCY, msg, "server_error");
  }
  return e;
}

/** A server's refusal of an update's shape (`$inc` of a non-number, a path through a scalar) is a caller bug. */
export function updateError(e: unknown): unknown {
  if (e instanceof MongoServerError && (e.code === 14 || e.code === 28)) return new InvalidQueryError(`update refused: ${_redact(e.message)}`);
  return e;
}

// --- Internal helpers ---

const _TRANSIENT_SERVER_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

const _SOCKET_ERROR_CODES = new Set([
  "EPIPE",
  "ECONNRESET",
  "ECONNREFUSED",
  "ECONNABORTED",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/** Removes connection strings (they may carry credentials) from driver messages. */
function _redact(message: string): string {
  return message.replace(/mongodb(\+srv)?:\/\/\S+/g, "mongodb://<redacted>");
}
