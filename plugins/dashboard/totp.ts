/**
 * Two-factor authentication with TOTP (RFC 6238: SHA-1, 6 digits, 30 s) through the `otpauth`
 * library, the enrolment QR code as an SVG string drawn on the server by `qrcode` (no script, no
 * external image), and recovery codes (random, shown once, stored as SHA-256 hashes, each usable
 * once). A code is accepted one step either side of now, and only for a time step later than the
 * last one the user spent (so an overheard code cannot be replayed).
 */
import { createHash, randomBytes } from "node:crypto";
import { Secret, TOTP } from "otpauth";
import QRCode from "qrcode";

const PERIOD = 30;
const DIGITS = 6;
export const RECOVERY_CODE_COUNT = 10;

/** A new random secret (160 bits), base32. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app reads from the QR code. */
export function totpUri(secretBase32: string, account: string, issuer: string): string {
  return _totp(secretBase32, account, issuer).toString();
}

/** The URI as a QR code, an SVG document fragment (trusted: drawn by the library from our own URI). */
export async function qrSvg(uri: string): Promise<string> {
  return QRCode.toString(uri, { type: "svg", margin: 1, errorCorrectionLevel: "M", width: 220 });
}

/** The time step a valid `code` belongs to (within one step of `now`), or null. */
export function codeStep(secretBase32: string, code: string, now: number): number | null {
  const token = code.replace(/\s+/g, "");
  if (!/^\d{6}$/.test(token)) return null;
  const delta = _totp(secretBase32, "", "").validate({ token, timestamp: now, window: 1 });
  return delta === null ? null : Math.floor(now / 1000 / PERIOD) + delta;
}

/** The code for `now` (the demo's banner and tests use it through otpauth directly; kept for the seed check). */
export function currentCode(secretBase32: string, now: number): string {
  return _totp(secretBase32, "", "").generate({ timestamp: now });
}

/** Fresh recovery codes ("abcd-efgh-ijkl") and their hashes. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const s = randomBytes(9).toString("base64url").toLowerCase().replace(/[^a-z0-9]/g, "x").slice(0, 12);
    return `${s.slice(0, 4)}-${s.slice(4, 8)}-${s.slice(8, 12)}`;
  });
  return { codes, hashes: codes.map(recoveryHash) };
}

export function recoveryHash(code: string): string {
  return createHash("sha256").update(`dashboard-recovery\u0000${code.trim().toLowerCase()}`).digest("base64url");
}

/** Whether the input looks like a recovery code rather than a 6-digit code. */
export function isRecoveryCodeShape(input: string): boolean {
  return /^[a-z0-9]{4}-[a-z0-9]{4}-[a-z0-9]{4}$/i.test(input.trim());
}

// --- Internal helpers ---

function _totp(secretBase32: string, label: string, issuer: string): TOTP {
  return new TOTP({ issuer, label, algorithm: "SHA1", digits: DIGITS, period: PERIOD, secret: Secret.fromBase32(secretBase32) });
}
