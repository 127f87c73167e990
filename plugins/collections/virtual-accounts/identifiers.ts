/**
 * The identifiers of a virtual account: its NUBAN-shaped account number (10 digits with the check
 * digit at the sandbox bank), the generated source reference of a dedicated account, and the
 * resource's `businessId` and `walletId` (name-based UUIDs, stable without storing anything).
 */
import { createHash, randomInt } from "node:crypto";
import { newReference } from "../shared/common.ts";

/** `providerName` of every account: the sandbox bank behind Gatehouse's accounts. */
export const PROVIDER_NAME = "Gatehouse Sandbox Bank";
/** The (fictional) 3-digit bank code the NUBAN check digit is computed with. */
export const SANDBOX_BANK_CODE = "999";
/** Namespace of Gatehouse's name-based (v5) UUIDs: businessId and walletId of the resource. */
export const GATEHOUSE_UUID_NAMESPACE = "3f1c7c4e-5b0a-4e55-9a53-0c6f2d1b8e47";

/**
 * The resource's `businessId`: a name-based UUID (RFC 4122 version 5, SHA-1) of the configured
 * business id, so it is stable across restarts and processes without storing anything.
 */
export function businessUuid(businessId: string): string {
  return businessResourceIds(businessId).business;
}

/** The resource's `walletId`: the business collection wallet, one per business (UUID v5). */
export function walletUuid(businessId: string): string {
  return businessResourceIds(businessId).wallet;
}

/**
 * Both resource ids of a business, remembered by business id: a list view carries two per account,
 * and a SHA-1 each was most of the cost of listing 1 000 accounts (docs/bench.md). Business ids are few.
 */
export function businessResourceIds(businessId: string): { business: string; wallet: string } {
  let ids = _ids.get(businessId);
  if (ids === undefined) {
    ids = {
      business: uuidV5(GATEHOUSE_UUID_NAMESPACE, `business:${businessId}`),
      wallet: uuidV5(GATEHOUSE_UUID_NAMESPACE, `collection-wallet:${businessId}`),
    };
    if (_ids.size >= 10_000) _ids.clear();
    _ids.set(businessId, ids);
  }
  return ids;
}


/** RFC 4122 §4.3 name-based UUID, version 5. */
export function uuidV5(namespace: string, name: string): string {
  const ns = Buffer.from(namespace.replaceAll("-", ""), "hex");
  if (ns.length !== 16) throw new RangeError("the namespace must be a UUID");
  const h = createHash("sha1").update(ns).update(name, "utf8").digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

/** The NUBAN check digit of a 9-digit serial at a 3-digit bank code. */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  const digits = bankCode + serial;
  if (!/^\d{12}$/.test(digits)) throw new RangeError("a 3-digit bank code and a 9-digit serial");
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(digits[i]) * _NUBAN_WEIGHTS[i]!;
  const r = sum % 10;
  return r === 0 ? 0 : 10 - r;
}

/** True for a 10-digit number whose last digit is the NUBAN check digit at `bankCode`. */
export function isNuban(accountNumber: string, bankCode: string = SANDBOX_BANK_CODE): boolean {
  return /^\d{10}$/.test(accountNumber) && nubanCheckDigit(bankCode, accountNumber.slice(0, 9)) === Number(accountNumber[9]);
}

/** A random NUBAN-shaped account number: 9 random digits + the check digit at the sandbox bank. */
export function newAccountNumber(): string {
  const serial = String(randomInt(0, 1_000_000_000)).padStart(9, "0");
  return serial + String(nubanCheckDigit(SANDBOX_BANK_CODE, serial));
}

/** The generated source reference of a customer's dedicated account. */
export function dedicatedSourceReference(): string {
  return newReference("DVA-");
}

// --- Internal helpers ---

const _ids = new Map<string, { business: string; wallet: string }>();

const _NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];
