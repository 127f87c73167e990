/**
 * The dashboard's team members, per top-level business, in the document store: collection
 * `dashboard_users` (an e-mail is unique within its business; looked up by e-mail across
 * businesses on the collections hosts) and `dashboard_links` (invitation and password-reset links:
 * only the token's hash is stored, with its expiry; used once). Passwords are scrypt hashes
 * (passwords.ts); the TOTP secret is stored for code checks, recovery codes only as hashes.
 */
import { randomBytes } from "node:crypto";
import type { Collection, Doc, DocumentStore } from "../../adapters/ports.ts";
import type { PasswordHash } from "./passwords.ts";

export type UserStatus = "invited" | "active" | "removed";

export interface DashboardUser extends Doc {
  /** "usr_" + random; audited as "dashboard:<id>". */
  _id: string;
  businessId: string;
  /** Lower-case. */
  email: string;
  name: string;
  role: "owner" | "developer" | "viewer";
  status: UserStatus;
  password: PasswordHash | null;
  /** Enrolled two-factor: the base32 secret and the last time step accepted (a code is used once). */
  totp: { secret: string; enabledAt: string; lastStep: number } | null;
  /** A secret being enrolled (shown as a QR code until a first code confirms it). */
  totpPending: { secret: string; createdAt: string } | null;
  /** SHA-256 hashes of the unused recovery codes (hash → true; a used one is unset). */
  recoveryCodes: Record<string, true>;
  /** Epoch ms until which sign-in is refused (too many failures), or null. */
  lockedUntil: number | null;
  /** Sessions issued before this epoch ms are no longer accepted (password reset, removal). */
  sessionsValidAfter: number;
  invitedBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface LinkDoc extends Doc {
  /** The token's hash. */
  _id: string;
  kind: "invitation" | "reset";
  userId: string;
  businessId: string;
  expiresAt: number;
  usedAt: string | null;
}

export interface NewUser {
  businessId: string;
  email: string;
  name: string;
  role: DashboardUser["role"];
  status: UserStatus;
  password: PasswordHash | null;
  invitedBy: string | null;
  /** A fixed id (the demo owner); default a random one. */
  id?: string;
  totpSecret?: string;
}

/** The team store every dashboard screen uses. */
export interface UserStore {
  readonly users: Collection<DashboardUser>;
  readonly links: Collection<LinkDoc>;
  get(id: string): Promise<DashboardUser | null>;
  byEmail(businessId: string, email: string): Promise<DashboardUser | null>;
  /** Users with this e-mail in any business (sign-in on a collections host). */
  everyWithEmail(email: string): Promise<DashboardUser[]>;
  team(businessId: string): Promise<DashboardUser[]>;
  /** Inserts; throws DuplicateKeyError when the e-mail is taken in that business. */
  create(u: NewUser): Promise<DashboardUser>;
  update(id: string, set: Partial<DashboardUser>, unset?: string[]): Promise<DashboardUser | null>;
}

export const USERS_COLLECTION = "dashboard_users";
export const LINKS_COLLECTION = "dashboard_links";

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A plausible address (the e-mail port decides deliverability). */
export function isEmail(email: string): boolean {
  return email.length <= 254 && /^[^\s@<>"',;]+@[^\s@<>"',;]+\.[^\s@<>"',;]+$/.test(email);
}

export function createUserStore(store: DocumentStore, now: () => number): UserStore {
  const users = store.collection<DashboardUser>(USERS_COLLECTION, {
    indexes: [{ fields: ["businessId", "email"], unique: true }, { fields: ["email"] }],
  });
  const links = store.collection<LinkDoc>(LINKS_COLLECTION, { indexes: [{ fields: ["userId"] }], ttlField: "expiresAt" });
  return {
    users,
    links,
    get: (id) => users.get(id),
    byEmail: (businessId, email) => users.findOne({ businessId, email: normalizeEmail(email) }),
    everyWithEmail: async (email) => (await users.find({ email: normalizeEmail(email) }, { limit: 20 })).items,
    team: async (businessId) => (await users.find({ businessId, status: { $ne: "removed" } }, { sort: [{ field: "createdAt", direction: 1 }], limit: 500 })).items,
    create: (u) => users.insert(_newUserDoc(u, new Date(now()).toISOString())),
    update: (id, set, unset) => users.findOneAndUpdate({ _id: id }, { $set: { ...set, updatedAt: new Date(now()).toISOString() }, ...(unset ? { $unset: unset } : {}) }),
  };
}

// --- Internal helpers ---

function _newUserDoc(u: NewUser, at: string): DashboardUser {
  return {
    _id: u.id ?? `usr_${randomBytes(12).toString("base64url")}`,
    businessId: u.businessId,
    email: normalizeEmail(u.email),
    name: u.name,
    role: u.role,
    status: u.status,
    password: u.password,
    totp: u.totpSecret ? { secret: u.totpSecret, enabledAt: at, lastStep: 0 } : null,
    totpPending: null,
    recoveryCodes: {},
    lockedUntil: null,
    sessionsValidAfter: 0,
    invitedBy: u.invitedBy,
    createdAt: at,
    updatedAt: at,
  };
}
