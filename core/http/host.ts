/**
 * Host parsing of the core: the canonical form of a Host value, what a raw Host names at the
 * socket level (for answers written before any request could be parsed), and client addresses.
 */
import { isIP } from "node:net";
import type { HostKind } from "../context.ts";
import type { TenantDirectory } from "../directory.ts";

/**
 * "API.Example.ng.:8443" → "api.example.ng"; IPv6 literals keep their brackets off. Anything that
 * is not a hostname or an IP literal of at most 253 characters (userinfo, spaces, control
 * characters, a 5 000-character value) canonicalises to "": no domain, and nothing unbounded in
 * logs or per-host counters.
 */
export function canonicalize(hostHeader: string): string {
  if (hostHeader.length > MAX_HOST_HEADER) return "";
  let h = hostHeader.trim().toLowerCase();
  if (h.startsWith("[")) {
    const end = h.indexOf("]");
    h = end > 0 ? h.slice(1, end) : "";
    return IPV6_LITERAL.test(h) ? h : "";
  }
  const colon = h.indexOf(":");
  if (colon >= 0) {
    if (!PORT.test(h.slice(colon + 1))) return ""; // "user:pw@host" is userinfo, not a port
    h = h.slice(0, colon);
  }
  while (h.endsWith(".")) h = h.slice(0, -1);
  return HOSTNAME.test(h) ? h : "";
}

/**
 * What a raw Host value names, without the edge checks (answers written at the socket level,
 * before any request could be parsed): the canonical host and whose contract shape it answers in.
 */
export function resolveHostKind(directory: TenantDirectory, hostHeader: string | null): { host: string; kind: HostKind } {
  const host = canonicalize(hostHeader ?? "");
  if (host === "") return { host, kind: "unknown" };
  if (directory.isCollectionsHost(host)) return { host, kind: "collections" };
  // Only the cached record is consulted (no store read at the socket level); an uncached gateway
  // domain stays "unknown", which answers in the same problem+json shape.
  return { host, kind: directory.cachedDomain(host) ? "gateway" : "unknown" };
}

/** "::ffff:10.0.0.1" → "10.0.0.1". */
export function normalizeAddress(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

// --- Internal helpers ---

/** A port and brackets may surround a 253-character name. */
const MAX_HOST_HEADER = 272;
const HOSTNAME = /^[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_])?$/;
const IPV6_LITERAL = /^[0-9a-f:.]{2,45}$/;
const PORT = /^[0-9]{0,5}$/;
