/**
 * The invoice gateway's client: one typed method per public route (spec §4.2 and DECISIONS.md's
 * paths), each declaring what kind of operation it is so the retry policy (client/retry.ts) treats
 * it right. Construct it per approved domain: `host` is the domain (`passthrough.demo.localhost`),
 * `baseUrl` where it is reached.
 *
 * Left out on purpose: the inbound download and acknowledgement routes (spec §4.2 rule 1: they always
 * answer 503 GW_INVOICE_OPERATION_UNAVAILABLE; "do not call them").
 */
import { isProblemError, type ProblemError } from "./errors.ts";
import { createConnection, path, type CallOptions, type Connection, type ConnectionOptions, type Result } from "./http.ts";
import type { OperationSpec } from "./retry.ts";
import type {
  IdentityVersions,
  IntakeAccepted,
  IntakeDocument,
  InvoiceDocument,
  InvoiceListParams,
  IrnValidationRequest,
  OnboardingRequest,
  PaymentUpdateRequest,
  RegulatorAnswer,
  Reverification,
  ReverificationRequest,
  RotationRequest,
  StoredInvoice,
  StoredInvoicePage,
  SubBusiness,
  SubBusinessListParams,
  SubBusinessPage,
} from "./types.ts";

export interface InvoiceGatewayClientOptions extends ConnectionOptions {
  /** The business's gateway API key (x-api-key). */
  apiKey: string;
}

export interface SignOptions extends CallOptions {
  /** x-attempt-number (spec §4.1); default 1. A new attempt after GW_SIGN_REJECTED: `signWithNextAttempt`. */
  attemptNumber?: number;
}

/** A previous sign attempt: the ProblemError it ended with (its key and attempt number are on it). */
export type RejectedSign = ProblemError;

/** The invoice gateway's client: one group of methods per part of the API. */
export interface InvoiceGatewayClient {
  /** Represented businesses: onboarding, reads, reverification, QR material (docs/onboarding.md). */
  subBusinesses: SubBusinessesApi;
  /** Pass-through domains (docs/signing-and-transmission.md). */
  invoices: InvoicesApi;
  /** Stored domains (docs/stored-mode.md). */
  stored: StoredApi;
}

/** Represented businesses (`/sub-businesses`). */
export interface SubBusinessesApi {
  /**
   * Onboard with transient regulator credentials (201; 200 for a replay of the same key and
   * content). GW_IDEMPOTENCY_CONTENT_CONFLICT is never retried (spec §7.2 exception 2).
   */
  onboard(body: OnboardingRequest, opts?: CallOptions): Promise<Result<SubBusiness>>;
  list(params?: SubBusinessListParams, opts?: CallOptions): Promise<Result<SubBusinessPage>>;
  get(gatewaySubBusinessId: string, opts?: CallOptions): Promise<Result<SubBusiness>>;
  reverify(gatewaySubBusinessId: string, body: ReverificationRequest, opts?: CallOptions): Promise<Result<Reverification>>;
  identityVersions(gatewaySubBusinessId: string, opts?: CallOptions): Promise<Result<IdentityVersions>>;
  /**
   * Replace the QR material (cryptoVersion + 1). Never retried after a timeout, a lost answer or
   * an uncertain 5xx (spec §7.2 exception 1): the error says CONTACT_SUPPORT. Send
   * `expectedCryptoVersion` so a stale rotation is refused instead of applied twice.
   */
  rotateCryptoMaterial(gatewaySubBusinessId: string, body: RotationRequest, opts?: CallOptions): Promise<Result<SubBusiness>>;
}

/** Pass-through routes: relayed to the regulator and answered as it answers. */
export interface InvoicesApi {
  /**
   * Billed sign. Resolves only with a confirmed success (HTTP 2xx, body `code` 201, `data.ok`
   * true); anything else throws. Retries only what spec §7 allows, always with the same key,
   * attempt number and bytes.
   */
  sign(subBusinessId: string, document: InvoiceDocument, opts?: SignOptions): Promise<Result<RegulatorAnswer>>;
  /**
   * A new sign attempt after a confirmed rejection (GW_SIGN_REJECTED: the fee was reversed):
   * the next x-attempt-number and a new idempotency key (spec §3.2, §7.2). Refuses any other
   * failure: after an unconfirmed outcome or CONTACT_SUPPORT nothing may be resubmitted.
   */
  signWithNextAttempt(
    subBusinessId: string,
    previous: RejectedSign,
    correctedDocument: InvoiceDocument,
    opts?: Omit<SignOptions, "attemptNumber" | "idempotencyKey">,
  ): Promise<Result<RegulatorAnswer>>;
  /** Unbilled validation of a regulator invoice document at the regulator. */
  validate(subBusinessId: string, document: InvoiceDocument, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
  validateIrn(subBusinessId: string, body: IrnValidationRequest, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
  /**
   * Transmit a signed invoice by IRN (body `{}`). One transmission per claim; a second gets
   * GW_TRANSMIT_ATTEMPT_ALREADY_PROCESSED with the operationId. Never replayed when uncertain.
   */
  transmit(subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
  /** A regulator resource list: currencies, invoice-types, tax-categories, payment-means, … */
  resource(name: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
  confirm(subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
  download(subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer | string>>;
  updatePayment(subBusinessId: string, irn: string, body: PaymentUpdateRequest, opts?: CallOptions): Promise<Result<RegulatorAnswer>>;
}

/** Stored routes: the gateway keeps the invoice and signs and transmits it itself. */
export interface StoredApi {
  /** Hand an invoice over (202 `{ invoiceId, … }`): accepted, not yet signed. The same key and content answer the same invoice. */
  submit(subBusinessId: string, document: IntakeDocument, opts?: CallOptions): Promise<Result<IntakeAccepted>>;
  list(params?: InvoiceListParams, opts?: CallOptions): Promise<Result<StoredInvoicePage>>;
  get(invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>>;
  /** Transmit a signed invoice (202, status transmitting). */
  transmit(invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>>;
  /** Cancel a pending or validated invoice (nothing billed); cancelling again answers the same. */
  cancel(invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>>;
}

/** Operation kinds (client/retry.ts OperationSpec) of every route. */
export const INVOICE_OPERATIONS = {
  onboard: { name: "subBusinesses.onboard", kind: "mutation", replaySafe: true, identityBound: true },
  listSubBusinesses: { name: "subBusinesses.list", kind: "read" },
  getSubBusiness: { name: "subBusinesses.get", kind: "read" },
  reverify: { name: "subBusinesses.reverify", kind: "mutation", replaySafe: true },
  identityVersions: { name: "subBusinesses.identityVersions", kind: "read" },
  rotate: { name: "subBusinesses.rotateCryptoMaterial", kind: "mutation", rotation: true, identityBound: true },
  sign: { name: "invoices.sign", kind: "mutation" },
  // Unbilled checks at the regulator: nothing is created, so they retry like reads.
  validate: { name: "invoices.validate", kind: "read" },
  validateIrn: { name: "invoices.validateIrn", kind: "read" },
  transmit: { name: "invoices.transmit", kind: "mutation" },
  resource: { name: "invoices.resource", kind: "read" },
  confirm: { name: "invoices.confirm", kind: "read" },
  download: { name: "invoices.download", kind: "read" },
  updatePayment: { name: "invoices.updatePayment", kind: "mutation" },
  submit: { name: "stored.submit", kind: "mutation", replaySafe: true },
  listInvoices: { name: "stored.list", kind: "read" },
  getInvoice: { name: "stored.get", kind: "read" },
  transmitStored: { name: "stored.transmit", kind: "mutation" },
  cancel: { name: "stored.cancel", kind: "mutation", replaySafe: true },
} as const satisfies Record<string, OperationSpec>;

const OP = INVOICE_OPERATIONS;

export function createInvoiceGatewayClient(options: InvoiceGatewayClientOptions): InvoiceGatewayClient {
  const { apiKey, ...connection } = options;
  const c = createConnection("gateway", { "x-api-key": apiKey }, connection);
  return { subBusinesses: _subBusinessesApi(c), invoices: _invoicesApi(c), stored: _storedApi(c) };
}

// --- Internal helpers ---

/** The header naming the represented business a route acts for. */
const _sub = (id: string) => ({ "x-sub-business-id": id });

function _subBusinessesApi(c: Connection): SubBusinessesApi {
  return {
    onboard: (body: OnboardingRequest, opts?: CallOptions): Promise<Result<SubBusiness>> =>
      c.call({ op: OP.onboard, method: "POST", path: "/sub-businesses", body, keyed: true }, opts),
    list: (params: SubBusinessListParams = {}, opts?: CallOptions): Promise<Result<SubBusinessPage>> =>
      c.call({ op: OP.listSubBusinesses, method: "GET", path: "/sub-businesses", query: params }, opts),
    get: (gatewaySubBusinessId: string, opts?: CallOptions): Promise<Result<SubBusiness>> =>
      c.call({ op: OP.getSubBusiness, method: "GET", path: path`/sub-businesses/${gatewaySubBusinessId}` }, opts),
    reverify: (gatewaySubBusinessId: string, body: ReverificationRequest, opts?: CallOptions): Promise<Result<Reverification>> =>
      c.call(
        { op: OP.reverify, method: "POST", path: path`/sub-businesses/${gatewaySubBusinessId}/identity-reverification`, body, keyed: true },
        opts,
      ),
    identityVersions: (gatewaySubBusinessId: string, opts?: CallOptions): Promise<Result<IdentityVersions>> =>
      c.call({ op: OP.identityVersions, method: "GET", path: path`/sub-businesses/${gatewaySubBusinessId}/identity-versions` }, opts),
    rotateCryptoMaterial: (gatewaySubBusinessId: string, body: RotationRequest, opts?: CallOptions): Promise<Result<SubBusiness>> =>
      c.call({ op: OP.rotate, method: "POST", path: path`/sub-businesses/${gatewaySubBusinessId}/reg-crypto-material`, body, keyed: true }, opts),
  };
}

function _invoicesApi(c: Connection): InvoicesApi {
  function sign(subBusinessId: string, document: InvoiceDocument, opts: SignOptions = {}): Promise<Result<RegulatorAnswer>> {
    return c.call(
      {
        op: OP.sign,
        method: "POST",
        path: "/api/v1/invoice/sign",
        headers: _sub(subBusinessId),
        body: document,
        keyed: true,
        attemptNumber: opts.attemptNumber ?? 1,
        expect: "relayed",
        check: _signSucceeded,
      },
      opts,
    );
  }

  return {
    sign,
    signWithNextAttempt(
      subBusinessId: string,
      previous: RejectedSign,
      correctedDocument: InvoiceDocument,
      opts: Omit<SignOptions, "attemptNumber" | "idempotencyKey"> = {},
    ): Promise<Result<RegulatorAnswer>> {
      if (!isProblemError(previous) || previous.code !== "GW_SIGN_REJECTED" || previous.operation !== OP.sign.name)
        throw new TypeError("signWithNextAttempt needs the GW_SIGN_REJECTED error of the previous sign attempt (a confirmed rejection)");
      const attemptNumber = (previous.attemptNumber ?? 1) + 1;
      return sign(subBusinessId, correctedDocument, { ...opts, attemptNumber, idempotencyKey: c.newIdempotencyKey() });
    },
    validate: (subBusinessId: string, document: InvoiceDocument, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call({ op: OP.validate, method: "POST", path: "/api/v1/invoice/validate", headers: _sub(subBusinessId), body: document, expect: "relayed" }, opts),
    validateIrn: (subBusinessId: string, body: IrnValidationRequest, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call({ op: OP.validateIrn, method: "POST", path: "/api/v1/invoice/irn/validate", headers: _sub(subBusinessId), body, expect: "relayed" }, opts),
    transmit: (subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call(
        { op: OP.transmit, method: "POST", path: path`/api/v1/invoice/transmit/${irn}`, headers: _sub(subBusinessId), body: {}, keyed: true, expect: "relayed" },
        opts,
      ),
    resource: (name: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call({ op: OP.resource, method: "GET", path: path`/api/v1/invoice/resources/${name}`, expect: "relayed" }, opts),
    confirm: (subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call({ op: OP.confirm, method: "GET", path: path`/api/v1/invoice/confirm/${irn}`, headers: _sub(subBusinessId), expect: "relayed" }, opts),
    download: (subBusinessId: string, irn: string, opts?: CallOptions): Promise<Result<RegulatorAnswer | string>> =>
      c.call({ op: OP.download, method: "GET", path: path`/api/v1/invoice/download/${irn}`, headers: _sub(subBusinessId), expect: "relayed" }, opts),
    updatePayment: (subBusinessId: string, irn: string, body: PaymentUpdateRequest, opts?: CallOptions): Promise<Result<RegulatorAnswer>> =>
      c.call(
        { op: OP.updatePayment, method: "PATCH", path: path`/api/v1/invoice/update/${irn}`, headers: _sub(subBusinessId), body, keyed: true, expect: "relayed" },
        opts,
      ),
  };
}

function _storedApi(c: Connection): StoredApi {
  return {
    submit: (subBusinessId: string, document: IntakeDocument, opts?: CallOptions): Promise<Result<IntakeAccepted>> =>
      c.call({ op: OP.submit, method: "POST", path: "/api/v1/invoice/sign", headers: _sub(subBusinessId), body: document, keyed: true }, opts),
    list: (params: InvoiceListParams = {}, opts?: CallOptions): Promise<Result<StoredInvoicePage>> =>
      c.call({ op: OP.listInvoices, method: "GET", path: "/invoices", query: params }, opts),
    get: (invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>> =>
      c.call({ op: OP.getInvoice, method: "GET", path: path`/invoices/${invoiceId}` }, opts),
    transmit: (invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>> =>
      c.call({ op: OP.transmitStored, method: "POST", path: path`/invoices/${invoiceId}/transmit`, body: {}, keyed: true }, opts),
    cancel: (invoiceId: string, opts?: CallOptions): Promise<Result<StoredInvoice>> =>
      c.call({ op: OP.cancel, method: "POST", path: path`/invoices/${invoiceId}/cancel`, body: {}, keyed: true }, opts),
  };
}

/** Spec §3.2: a sign succeeded only when the body's `code` is 201 and `data.ok` is true. */
function _signSucceeded(data: unknown): string | null {
  const answer = data as RegulatorAnswer | null;
  const ok = typeof answer === "object" && answer !== null && answer.code === 201 && (answer.data as { ok?: unknown } | null)?.ok === true;
  return ok ? null : "the sign answer is not a confirmed success (code 201, data.ok true): outcome unknown";
}
