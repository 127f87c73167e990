/**
 * Password hashes with node:crypto scrypt: a random 16-byte salt per hash and the cost parameters
 * stored beside it, so they can be raised later without invalidating existing hashes. Checks compare
 * in constant time. Also the random tokens e-mailed links carry (stored only as their SHA-256).
 */
import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";

export interface PasswordHash {
  alg: "scrypt";
  N: number;
  r: number;
  p: number;
  /** base64 */
  salt: string;
  /** base64, 32 bytes */
  hash: string;
}

/** N = 2^14, r = 8, p = 1 (the scrypt paper's interactive-login cost): 16 MiB and ~0.1 s per check here. */
const COST = { N: 1 << 14, r: 8, p: 1 } as const;
const KEY_LENGTH = 32;
export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

export async function hashPassword(password: string): Promise<PasswordHash> {
  const salt = randomBytes(16);
  const hash = await _scrypt(password, salt, COST);
  return { alg: "scrypt", ...COST, salt: salt.toString("base64"), hash: hash.toString("base64") };
}

export async function verifyPassword(password: string, stored: PasswordHash | null): Promise<boolean> {
  // Without a stored hash the same work is done against a dummy, so timing does not tell whether the account exists.
  const h = stored ?? DUMMY;
  const expected = Buffer.from(h.hash, "base64");
  const actual = await _scrypt(password.slice(0, PASSWORD_MAX), Buffer.from(h.salt, "base64"), { N: h.N, r: h.r, p: h.p });
  return stored !== null && actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** Why a new password is refused, or null. */
export function passwordProblem(password: string): string | null {
  if (password.length < PASSWORD_MIN) return `use at least ${PASSWORD_MIN} characters`;
  if (password.length > PASSWORD_MAX) return `use at most ${PASSWORD_MAX} characters`;
  return null;
}

/** A random URL-safe token for an e-mailed link, and the hash that is stored. */
export function newLinkToken(): { token: string; hash: string } {
  const token = randomBytes(24).toString("base64url");
  return { token, hash: tokenHash(token) };
}

export function tokenHash(token: string): string {
  return createHash("sha256").update(`dashboard-link\u0000${token}`).digest("base64url");
}

// --- Internal helpers ---

const DUMMY: PasswordHash = { alg: "scrypt", ...COST, salt: Buffer.alloc(16).toString("base64"), hash: Buffer.alloc(KEY_LENGTH).toString("base64") };

function _scrypt(password: string, salt: Buffer, cost: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...cost, maxmem: 256 * cost.N * cost.r };
  return new Promise((resolve, reject) => scrypt(password, salt, KEY_LENGTH, options, (e, key) => (e ? reject(e) : resolve(key))));
}
