/**
 * Helpers of the dashboard's data-screen tests: a gateway with a LIVE business beside the demo's
 * TEST ones, team members of any business (signed in on its own host or a collections host),
 * Stored invoices, represented businesses and sign records written straight into the store (with
 * hostile strings where a test wants them), and collections resources made through the API.
 */
import { generateKeyPairSync, randomUUID } from "node:crypto";
import type { DocumentStore } from "../../../adapters/ports.ts";
import { hashPassword } from "../../../plugins/dashboard/passwords.ts";
import { createUserStore } from "../../../plugins/dashboard/users.ts";
import { openRepresentedBusinesses, subKeyOf, type CryptoMaterial, type SubBusinessDoc } from "../../../plugins/invoice/represented-businesses.ts";
import { openSignAttempts, type SignRecord } from "../../../plugins/invoice/sign-attempts.ts";
import { openStoredInvoices, type InvoiceDoc, type InvoiceStatus } from "../../../plugins/invoice/stored-invoices.ts";
import { BEARER_DEMO, BEARER_OTHER, DEMO_RAW, type TestGateway } from "../../support/gateway.ts";
import { dashboardClient, type DashboardClient } from "./dashboard-helpers.ts";

export { BEARER_DEMO, BEARER_OTHER };
export const BEARER_LIVE = "sk_live_dash_0001";
export const COLLECTIONS_HOST = "localhost";
export const HOSTILE = `<script>alert("x")</script>&'"\``;

/** The demo config plus a LIVE business with a collections key (and the demo business's collections webhook at `hookUrl`). */
export function livePatch(hook?: { url: string; secret: string }): Record<string, unknown> {
  const businesses = structuredClone(DEMO_RAW.businesses) as Array<Record<string, any>>;
  if (hook) {
    const demo = businesses.find((b) => b.id === "demo")!;
    demo.collections = { ...demo.collections, webhook: hook };
  }
  businesses.push({ id: "live-shop", name: "Live Shop Ltd", state: "LIVE", collections: { apiKeys: [{ id: "live-dash-collections", key: BEARER_LIVE, demoOnly: true }] } });
  return { businesses };
}

export function storeOf(tg: TestGateway): DocumentStore {
  return tg.gateway.kit.ports.documentStore;
}

let users = 0;

/** A new team member of `businessId` with `role`, signed in (password and code) on `host`. */
export async function member(tg: TestGateway, businessId: string, role: "owner" | "developer" | "viewer", host = COLLECTIONS_HOST): Promise<DashboardClient> {
  const n = ++users;
  const email = `${role}${n}.${businessId}@example.test`;
  const password = `correct horse ${n} battery`;
  const totpSecret = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
  await createUserStore(storeOf(tg), Date.now).create({ businessId, email, name: `${role} ${n}`, role, status: "active", password: await hashPassword(password), invitedBy: null, totpSecret });
  const c = dashboardClient(tg, host);
  const res = await c.signIn(email, password, totpSecret);
  if (res.status !== 303 || res.headers.get("location") !== "/dashboard") throw new Error(`sign-in of ${email} answered ${res.status} ${res.headers.get("location")}`);
  return c;
}

/** A Stored invoice written into the store (outbound, TEST, pending unless told). */
export async function putInvoice(tg: TestGateway, businessId: string, fields: Partial<InvoiceDoc> & { status?: InvoiceStatus } = {}): Promise<InvoiceDoc> {
  const now = Date.now();
  const at = new Date(now).toISOString();
  const status = fields.status ?? "pending";
  const doc: InvoiceDoc = {
    _id: randomUUID(),
    businessId,
    state: "TEST",
    domain: "stored.demo.localhost",
    subBusinessId: "sub-1",
    direction: "outbound",
    irn: `INV${now % 100000}-ABCD1234-20240611`,
    status,
    statusHistory: status === "pending" ? [{ status: "pending", at }] : [{ status: "pending", at }, { status: "validated", at }, { status: "signing", at }, { status, at }],
    attempts: 1,
    budgetLeft: 3,
    budget: 3,
    lastError: null,
    operationId: randomUUID(),
    createdAt: at,
    updatedAt: at,
    createdAtMs: now,
    document: { irn: "x", note: HOSTILE },
    feeKobo: 5_000,
    rev: 1,
    dueAt: null,
    step: "done",
    signAttempt: 1,
    outages: 0,
    billDoubt: false,
    settle: false,
    reverseFor: null,
    events: [],
    ...fields,
  };
  await openStoredInvoices(storeOf(tg)).insert(doc);
  return doc;
}

/** QR material as the regulator gives it: base64 of a PEM public key, and a base64 certificate. */
export function qrMaterial(): Pick<CryptoMaterial, "publicKey" | "certificate"> {
  const { publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = publicKey.export({ type: "spki", format: "pem" }).toString();
  return { publicKey: Buffer.from(pem).toString("base64"), certificate: Buffer.from("regulator-certificate-0001").toString("base64") };
}

/** A represented business written into the store (TEST), with QR material when given. */
export async function putRepresented(tg: TestGateway, businessId: string, id: string, crypto: Pick<CryptoMaterial, "publicKey" | "certificate"> | null = null, name = "Represented Ltd"): Promise<SubBusinessDoc> {
  const at = new Date().toISOString();
  const doc: SubBusinessDoc = {
    _id: subKeyOf("TEST", id),
    gatewaySubBusinessId: id,
    businessId,
    state: "TEST",
    externalBusinessId: `ext-${id}`,
    identityKey: `TEST:ext-${id}`,
    identity: { entityId: "e1", entityReference: "r1", regulatorBusinessId: `ext-${id}`, businessName: name, tin: "12345678-0001", irnTemplate: null, active: true },
    identityVersion: 1,
    cryptoVersion: crypto ? 1 : 0,
    crypto: crypto ? { version: 1, ...crypto, fingerprint: "sha256:00", installedBy: "test", installedAt: at } : null,
    onboardingKey: `onboard-${id}`,
    createdAt: at,
    updatedAt: at,
  };
  await openRepresentedBusinesses(storeOf(tg)).insert(doc);
  return doc;
}

/** A Pass-through sign record written into the store. */
export async function putSignRecord(tg: TestGateway, businessId: string, irn = "INV1-ABCD1234-20240611"): Promise<SignRecord> {
  const now = Date.now();
  const rec: SignRecord = {
    _id: `${businessId}|sign|${randomUUID()}`,
    businessId,
    route: "sign",
    fingerprint: "f",
    attemptKey: `TEST|passthrough.demo.localhost|sub-1|${irn}|1`,
    operationId: randomUUID(),
    status: "completed",
    phase: "done",
    owner: "test",
    startedAtMs: now,
    completedAtMs: now,
    answer: { kind: "error", code: "GW_SIGN_REJECTED", detail: HOSTILE, operationId: null, violations: null },
    money: "reversed",
    expiresAtMs: now + 86_400_000,
  };
  await openSignAttempts(storeOf(tg)).insert(rec);
  return rec;
}

/** A collections API call (the envelope's `data`), with a Bearer key. */
export async function api(tg: TestGateway, bearer: string, path: string, body?: unknown): Promise<Record<string, any>> {
  const res = await tg.call(path, { method: body === undefined ? "GET" : "POST", host: COLLECTIONS_HOST, headers: { authorization: `Bearer ${bearer}` }, body });
  const json = (await res.json()) as { data?: Record<string, any> };
  if (res.status >= 300) throw new Error(`${path} answered ${res.status}: ${JSON.stringify(json)}`);
  return json.data ?? {};
}

export function linkBody(name = "Test link"): Record<string, unknown> {
  return { link_name: name, narration: "A test", fee_bearer: "MERCHANT", source_reference: `src-${randomUUID()}`, amount: 1500 };
}

export function accountBody(name = "Test account"): Record<string, unknown> {
  return { account_type: "multi_use", account_name: name, source_reference: `src-${randomUUID()}` };
}

export function customerBody(first = "Ada"): Record<string, unknown> {
  return { first_name: first, last_name: "Okafor", email: `ada.${randomUUID().slice(0, 8)}@example.test`, phone: "+2348012345678", has_wallet: true };
}
