/**
 * Inputs of the Admin API's directory routes (valibot): path parameters, list queries and the
 * bodies of the mutations. Money is an NGN number with at most two decimals, as in the wallet routes.
 */
import { isIP } from "node:net";
import * as v from "valibot";
import { ngnToKobo } from "../../core/money.ts";
import { LIST_CURSOR, LIST_LIMIT } from "../../core/paging.ts";

const BUSINESS_ID = v.pipe(v.string("must be a string"), v.regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "a business id"));
const HOST = v.pipe(
  v.string("must be a string"),
  v.maxLength(253, "at most 253 characters"),
  v.regex(/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*$/, "a lower-case hostname without port"),
);
const KEY_ID = v.pipe(v.string("must be a string"), v.regex(/^[A-Za-z0-9._:-]{1,64}$/, "1 to 64 of A-Z a-z 0-9 . _ : -"));
const MODE = v.picklist(["passthrough", "stored"], 'one of "passthrough", "stored"');
/** Largest sign fee: NGN 1,000,000.00. */
const MAX_FEE_NGN = 1_000_000;
/** A roll's grace period and a new key's lifetime are bounded: at most this far ahead. */
export const MAX_KEY_DEADLINE_MS = 366 * 24 * 60 * 60 * 1000;

const ISO_TIME = v.pipe(
  v.string("must be a string"),
  v.regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})$/, "an ISO 8601 date-time with a time zone"),
  v.check((s) => Number.isFinite(Date.parse(s)), "an ISO 8601 date-time with a time zone"),
);

export const DEFAULT_LIMIT = 50;

export const BusinessParams = v.object({ businessId: BUSINESS_ID });
export const DomainParams = v.object({ host: HOST });
export const KeyParams = v.object({ keyId: KEY_ID });

export const BusinessListQuery = v.object({ limit: LIST_LIMIT, cursor: LIST_CURSOR });
export const DomainListQuery = v.object({
  businessId: v.optional(BUSINESS_ID),
  approval: v.optional(v.picklist(["approved", "draining", "pending_approval"], 'one of "approved", "draining", "pending_approval"')),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
export const KeyListQuery = v.object({
  businessId: v.optional(BUSINESS_ID),
  scheme: v.optional(v.picklist(["gateway", "collections", "operator"], 'one of "gateway", "collections", "operator"')),
  status: v.optional(v.picklist(["active", "revoked", "expired"], 'one of "active", "revoked", "expired"')),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
export const AuditListQuery = v.object({
  targetId: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(253))),
  action: v.optional(v.pipe(v.string(), v.regex(/^[a-z_]+\.[a-z_]+$/, 'an action such as "key.revoke"'))),
  limit: LIST_LIMIT,
  cursor: LIST_CURSOR,
});
export type ListLimit = { limit?: number; cursor?: string };
export type DomainListInput = v.InferOutput<typeof DomainListQuery>;
export type KeyListInput = v.InferOutput<typeof KeyListQuery>;
export type AuditListInput = v.InferOutput<typeof AuditListQuery>;

/** A key's IP allowlist: addresses or CIDR ranges (empty: any address). */
const IP_ALLOWLIST = v.pipe(
  v.array(v.pipe(v.string("must be a string"), v.maxLength(64, "an address or CIDR range"), v.check(_isAddressOrRange, "an IPv4 or IPv6 address, or a CIDR range such as 10.0.0.0/8"))),
  v.maxLength(100, "at most 100 entries"),
);

export const KeyCreateBody = v.strictObject({
  /** gateway (x-api-key), collections (Authorization: Bearer) or operator (x-admin-api-key). */
  scheme: v.picklist(["gateway", "collections", "operator"], 'one of "gateway", "collections", "operator"'),
  /** The owning business (gateway and collections keys; never for operator keys). */
  businessId: v.optional(BUSINESS_ID),
  /** The key's id (default: generated); unique across every key. */
  id: v.optional(KEY_ID),
  ipWhitelisted: v.optional(IP_ALLOWLIST),
  /** When the key stops working (default: never). */
  expiresAt: v.optional(ISO_TIME),
});
export type KeyCreateInput = v.InferOutput<typeof KeyCreateBody>;

export const KeyRollBody = v.strictObject({
  /** Until when the old key keeps working ("now" or a past time: at once). */
  oldKeyExpiresAt: ISO_TIME,
});
export type KeyRollInput = v.InferOutput<typeof KeyRollBody>;

export const KeyUpdateBody = v.strictObject({
  /** The key's new IP allowlist (replaces the old one; empty: any address). */
  ipWhitelisted: IP_ALLOWLIST,
});
export type KeyUpdateInput = v.InferOutput<typeof KeyUpdateBody>;

export const EmptyBody = v.optional(v.strictObject({}));

export const DomainUpdateBody = v.pipe(
  v.strictObject({
    signFee: v.optional(
      v.pipe(
        v.number("must be a number"),
        v.check((n) => Number.isFinite(n) && n >= 0 && n <= MAX_FEE_NGN, `must be from 0 to ${MAX_FEE_NGN}`),
        v.check((n) => ngnToKobo(n) !== null, "at most two decimals"),
      ),
    ),
    autoTransmit: v.optional(v.boolean("must be a boolean")),
  }),
  v.check((b) => b.signFee !== undefined || b.autoTransmit !== undefined, "send signFee, autoTransmit or both"),
);
export type DomainUpdateInput = v.InferOutput<typeof DomainUpdateBody>;

export const ModeChangeBody = v.strictObject({ mode: MODE });
export type ModeChangeInput = v.InferOutput<typeof ModeChangeBody>;

// --- Internal helpers ---

/** An address node:net reads, or one with a prefix length its family allows ("10.0.0.0/8", "2001:db8::/32"). */
function _isAddressOrRange(entry: string): boolean {
  const [address, bits, extra] = entry.split("/");
  const family = isIP(address ?? "");
  if (family === 0 || extra !== undefined) return false;
  return bits === undefined || (/^[0-9]{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128));
}
