/**
 * X-Service-Gateway-Hop: the marker the gateway sets on every outbound call (regulator, webhook
 * deliveries, chat alerts), so a request that comes back to it (a routing loop) is recognised by the
 * routing-loop stage (508).
 *
 * The gateway's own marker is signed, so that no outsider can pass one off as ours (and page the
 * operator with the routing-loop alert): `1.<unix seconds>.<base64url HMAC-SHA256>` over the time
 * and the host the call went to, keyed by an HMAC key derived from the deployment secret
 * (core/keyed-hash.ts `deriveKey`). A marker is the deployment's own when its MAC verifies for the
 * host the request arrived on and its time is within `MARKER_MAX_AGE_SECONDS`: a marker a receiver
 * saw (a webhook endpoint, the regulator) is bound to that receiver's host and expires, so it cannot
 * be replayed on one of our hosts later. Any other non-zero value is still refused (508), without
 * the alert.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { deriveKey } from "../keyed-hash.ts";
import { canonicalize } from "./host.ts";

export const HOP_HEADER = "x-service-gateway-hop";

/** What the gateway's own marker looks like (the edge passes only this shape on: deploy/nginx.conf). */
export const HOP_MARKER_PATTERN = /^1\.[0-9]{1,12}\.[A-Za-z0-9_-]{43}$/;

/** How long a marker stays the gateway's own after it was made (a loop comes back within a call's deadline). */
export const MARKER_MAX_AGE_SECONDS = 300;

/** The deployment's hop markers: made for outbound calls, recognised on inbound requests. */
export interface HopMarker {
  /** The marker for a call to `url` (bound to its host). */
  forUrl(url: string | URL): string;
  /** The marker for a call to `host` (any Host form: case, port and a trailing dot do not matter). */
  forHost(host: string): string;
  /** True when `value` is a marker this deployment made for `host`, recently (constant-time MAC check). */
  isOwn(value: string, host: string): boolean;
}

/** The hop markers of the deployment whose secret is `deploymentSecret` (config `regulator.apiSecret`). */
export function createHopMarker(deploymentSecret: string, now: () => number = Date.now): HopMarker {
  const key = deriveKey(deploymentSecret, "gateway-hop-v1");
  const recent = new Map<string, { seconds: number; value: string }>();
  const forHost = (host: string): string => {
    const canonical = canonicalize(host);
    const seconds = Math.floor(now() / 1000);
    const cached = recent.get(canonical);
    if (cached?.seconds === seconds) return cached.value;
    const value = `1.${seconds}.${_mac(key, seconds, canonical).toString("base64url")}`;
    if (recent.size >= RECENT_HOSTS) recent.clear();
    recent.set(canonical, { seconds, value });
    return value;
  };
  return {
    forHost,
    forUrl: (url) => forHost(typeof url === "string" ? _hostOf(url) : url.host),
    isOwn: (value, host) => _isOwn(key, now, value, host),
  };
}

// --- Internal helpers ---

/** Hosts whose marker of the current second is kept (outbound calls go to a handful of hosts). */
const RECENT_HOSTS = 256;
/** A marker made up to this far ahead of this process's clock still counts (clocks of one deployment differ a little). */
const CLOCK_SKEW_SECONDS = 60;

function _mac(key: Buffer, seconds: number, host: string): Buffer {
  return createHmac("sha256", key).update(`${seconds}\n${host}`).digest();
}

function _isOwn(key: Buffer, now: () => number, value: string, host: string): boolean {
  if (!HOP_MARKER_PATTERN.test(value)) return false;
  const [, time, mac] = value.split(".") as [string, string, string];
  const seconds = Number(time);
  const age = Math.floor(now() / 1000) - seconds;
  if (age > MARKER_MAX_AGE_SECONDS || age < -CLOCK_SKEW_SECONDS) return false;
  const given = Buffer.from(mac, "base64url");
  // The pattern admits 43 characters whose last one may carry stray bits: only the canonical text is ours.
  if (given.length !== 32 || given.toString("base64url") !== mac) return false;
  return timingSafeEqual(given, _mac(key, seconds, canonicalize(host)));
}

function _hostOf(url: string): string {
  return URL.canParse(url) ? new URL(url).host : "";
}
