/**
 * The regulator simulator: a standalone `node:http` server that answers like the regulator's MBS
 * e-invoicing API, with fixtures from a file and per-route fault injection. Tests, the demo and the
 * bench reach "the regulator" through it, over real HTTP.
 *
 * It answers in the real shapes (docs/regulator-simulator.md has the table, with sources):
 * - success `{ code, data }` with HTTP status = code;
 * - errors `{ code, data: null, message: "error has occurred", error: { id, handler, details?,
 *   public_message } }`: `id` a fresh UUID per request, `details` free text, often absent;
 * - a deployment key/secret it cannot validate: HTTP 400, public_message "unable to validate api key";
 * - an unknown path (or method): the router's un-enveloped 404 `{ code: 404, data: null, message }`;
 * - `GET /api` (health, no credentials): `{ "healthy": true }`; resource lists need no credentials.
 * There is one mode, realistic: everything the real API enforces is enforced (the documented invoice
 * schema, invoice type and currency codes, payment statuses incl. CANCELED, the transmit webhook
 * precondition). Tests change behaviour only through fixtures and named faults.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseFixtures } from "./fixtures.ts";
import type { FixtureBusiness, FixtureEntity, FixtureTaxpayer } from "./fixtures.ts";
import {
  HANDLER_OF,
  NO_ROUTE_BODY,
  SIMULATOR_ROUTES,
  VALIDATION_FAILED,
  createFaultController,
  credentialsRejectedBody,
  errorEnvelope,
  isFaultSpecError,
  isSimulatorRoute,
  parseFaultSpec,
  renderFault,
} from "./faults.ts";
import type { Fault, FaultAction, FaultController, SimulatorRoute } from "./faults.ts";
import { INBOUND_CONTROL_PATH, handleInboundPush } from "./inbound.ts";
import { PAYMENT_STATUSES, createInvoiceChecker, detailsText, isRealDate, uuidProblem } from "./invoice-schema.ts";
import { RESOURCES } from "./resources.ts";
import type { PartyRecord, PaymentStatus, RegulatorSimulatorOptions, SignedInvoiceRecord, SimulatorState } from "./types.ts";

export type { PartyRecord, PaymentStatus, RegulatorSimulatorOptions, SignedInvoiceRecord, SimulatorState } from "./types.ts";

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

export interface RegulatorSimulatorHandler {
  /** The request listener (for `http.createServer`). */
  handle(req: IncomingMessage, res: ServerResponse): void;
  faults: FaultController;
  state: SimulatorState;
  /** Forget signed/transmitted invoices, parties, call counts and faults. */
  reset(): void;
  /** Zero the call counts only. */
  resetCalls(): void;
  /** Cancel pending latency timers and drop held (timeout) answers. */
  dispose(): void;
}

export interface RegulatorSimulator {
  /** e.g. "http://127.0.0.1:41234" (no trailing slash). */
  url: string;
  host: string;
  port: number;
  faults: FaultController;
  state: SimulatorState;
  reset(): void;
  resetCalls(): void;
  /** Stop listening and destroy every connection (held timeout answers included). Idempotent. */
  close(): Promise<void>;
}

// ---------------------------------------------------------------------------
// Server
// ---------------------------------------------------------------------------

export async function startRegulatorSimulator(options: RegulatorSimulatorOptions): Promise<RegulatorSimulator> {
  const handler = createRegulatorSimulatorHandler(options);
  const host = options.host ?? "127.0.0.1";
  const server = createServer({ noDelay: true }, handler.handle);
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;

  await new Promise<void>((resolve, reject) => {
    const onError = (e: Error) => reject(e);
    server.once("error", onError);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", onError);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  let closing: Promise<void> | undefined;
  return {
    url,
    host,
    port,
    faults: handler.faults,
    state: handler.state,
    reset: handler.reset,
    resetCalls: handler.resetCalls,
    close() {
      closing ??= new Promise<void>((resolve) => {
        handler.dispose();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

// ---------------------------------------------------------------------------
// Handler
// ---------------------------------------------------------------------------

export function createRegulatorSimulatorHandler(options: RegulatorSimulatorOptions): RegulatorSimulatorHandler {
  const fixtures = parseFixtures(options.fixtures, "options.fixtures");
  const { apiKey, apiSecret } = options.credentials;
  const controlApi = options.controlApi ?? true;
  const bodyLimit = options.bodyLimitBytes ?? 2 * 1024 * 1024;
  const log = options.log;

  // --- Fixture indexes and pre-serialised answers (built once) ---
  const taxpayers = new Map<string, FixtureTaxpayer>();
  for (const t of fixtures.taxpayers) taxpayers.set(t.email.toLowerCase(), t);
  const entityAnswers = new Map<string, string>();
  const entityViews: Record<string, unknown>[] = [];
  const businesses = new Map<string, BusinessRecord>();
  const businessesByTin = new Map<string, BusinessRecord>();
  for (const entity of fixtures.entities) {
    const view = _entityView(entity);
    entityViews.push(view);
    entityAnswers.set(entity.id, JSON.stringify({ code: 200, data: view }));
    for (const business of entity.businesses) {
      const template = typeof business.irn_template === "string" && business.irn_template !== "" ? _compileTemplate(business.irn_template) : null;
      const record: BusinessRecord = { business, entity, template };
      businesses.set(business.id, record);
      if (!businessesByTin.has(business.tin)) businessesByTin.set(business.tin, record);
    }
  }
  const resources: Record<string, readonly unknown[]> = { ...RESOURCES, ...(fixtures.resources ?? {}) };
  const resourceAnswers = new Map<string, string>();
  for (const [name, list] of Object.entries(resources)) resourceAnswers.set(name, JSON.stringify({ code: 200, data: list }));
  const checkInvoice = createInvoiceChecker({
    invoiceTypeCodes: _codes(resources["invoice-types"]),
    currencyCodes: _codes(resources.currencies),
  });

  // --- Mutable state ---
  const faults = createFaultController();
  const signed = new Map<string, SignedInvoiceRecord>();
  const parties = new Map<string, PartyRecord>();
  const postalAddresses = new Set<string>();
  let calls = _zeroCalls();
  const timers = new Set<NodeJS.Timeout>();
  const held = new Set<ServerResponse>();

  const state: SimulatorState = {
    signedIrns: () => [...signed.keys()],
    transmittedIrns: () => [...signed.values()].filter((r) => r.transmitted_at !== null).map((r) => r.irn),
    isSigned: (irn) => signed.has(irn),
    isTransmitted: (irn) => (signed.get(irn)?.transmitted_at ?? null) !== null,
    isReceiptConfirmed: (irn) => (signed.get(irn)?.receipt_confirmed_at ?? null) !== null,
    invoice: (irn) => {
      const r = signed.get(irn);
      return r ? { ...r } : undefined;
    },
    parties: () => [...parties.values()].map((p) => ({ ...p })),
    calls: (route) => calls[route],
    callCounts: () => ({ ...calls }),
    totalCalls: () => Object.values(calls).reduce((a, b) => a + b, 0),
  };

  function handle(req: IncomingMessage, res: ServerResponse): void {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const path = q === -1 ? url : url.slice(0, q);
    const query = q === -1 ? "" : url.slice(q + 1);
    const method = req.method ?? "GET";

    if (controlApi && path.startsWith("/__sim/")) {
      void _control(req, res, method, path, query);
      return;
    }
    const m = _match(method, path);
    if (m === null) {
      // The real router: the same un-enveloped 404 for an unknown path and an unserved method.
      _send(res, NO_ROUTE);
      return;
    }
    calls[m.route] += 1;
    const call: Call = { req, route: m.route, param: m.param, by: m.by, query };
    const fault = faults.take(m.route);
    if (log) {
      const started = performance.now();
      res.once("close", () =>
        log("regulator_sim_request", {
          route: m.route,
          method,
          status: res.headersSent ? res.statusCode : null,
          fault: fault?.kind ?? null,
          ms: Math.round(performance.now() - started),
        }),
      );
    }
    if (fault === undefined) {
      const answer = _process(call);
      if (answer instanceof Promise) void answer.then((a) => _send(res, a), () => _send(res, _internal(m.route)));
      else _send(res, answer);
      return;
    }
    void _serveWithFault(res, call, fault).catch(() => _send(res, _internal(m.route)));
  }

  async function _serveWithFault(res: ServerResponse, call: Call, fault: Fault): Promise<void> {
    if (fault.afterProcessing !== true) {
      const action = renderFault(fault, { route: call.route });
      if (action.type !== "delay") return _perform(call.req, res, action);
      await _delay(action.ms);
      if (_gone(res)) return;
      return _send(res, await _process(call));
    }
    const answer = await _process(call);
    const action = renderFault(fault, { route: call.route, processedData: _dataOf(answer) });
    if (action.type !== "delay") return _perform(call.req, res, action);
    await _delay(action.ms);
    if (!_gone(res)) _send(res, answer);
  }

  function _perform(req: IncomingMessage, res: ServerResponse, action: Exclude<FaultAction, { type: "delay" }>): void {
    switch (action.type) {
      case "hold":
        held.add(res);
        res.once("close", () => held.delete(res));
        return;
      case "reset": {
        const socket = req.socket;
        try {
          socket.resetAndDestroy();
        } catch {
          socket.destroy();
        }
        return;
      }
      case "respond":
        if (_gone(res)) return;
        res.writeHead(action.status, { "cache-control": "private", ...action.headers, "content-length": Buffer.byteLength(action.body) });
        res.end(action.body);
    }
  }

  function _delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        timers.delete(t);
        resolve();
      }, ms);
      timers.add(t);
    });
  }

  // --- Processing (credentials, body, route logic) ---

  function _process(call: Call): Answer | Promise<Answer> {
    const { req, route, param } = call;
    if (route === "health") return HEALTH;
    if (route === "resources") {
      // Public at the regulator (the documented curls carry no credentials); an unknown list is no route.
      const raw = resourceAnswers.get(param);
      return raw ? { status: 200, raw } : NO_ROUTE;
    }
    if (req.headers["x-api-key"] !== apiKey || req.headers["x-api-secret"] !== apiSecret) {
      return { status: 400, raw: credentialsRejectedBody() };
    }
    switch (route) {
      case "entity":
        return _entity(param);
      case "entity-search":
        return _entitySearch(new URLSearchParams(call.query));
      case "confirm":
        return _confirm(param, false);
      case "download":
        return _confirm(param, true);
      case "transmit-lookup":
        return _lookup(call.by ?? "irn", param);
      case "self-health-check":
        return OK_200;
      case "pull":
        return _pull(new URLSearchParams(call.query));
      case "party-search":
        return _partySearch(param, new URLSearchParams(call.query));
      case "invoice-search":
        return _invoiceSearch(param, new URLSearchParams(call.query));
      case "transmit":
        // The body ("" in the documented curl, `{}` from the gateway) is ignored, but read so the
        // connection stays reusable.
        return _withBody(req, route, () => _transmit(param), true);
      case "confirm-receipt":
        return _withBody(req, route, () => _confirmReceipt(param), true);
      case "authenticate":
        return _withBody(req, route, _authenticate);
      case "verify-tin":
        return _withBody(req, route, _verifyTin);
      case "irn-validate":
        return _withBody(req, route, _irnValidate);
      case "validate":
        return _withBody(req, route, (body) => _invoice(body, "validate"));
      case "sign":
        return _withBody(req, route, (body) => _invoice(body, "sign"));
      case "party-create":
        return _withBody(req, route, _createParty);
      case "update":
        return _withBody(req, route, (body) => _update(param, body));
    }
  }

  async function _withBody(req: IncomingMessage, route: SimulatorRoute, fn: (body: unknown) => Answer, optional = false): Promise<Answer> {
    const read = await _readBody(req, bodyLimit);
    if (read.kind === "too_large") {
      return { ..._err(413, route, "request entity too large", `request body exceeds ${bodyLimit} bytes`), headers: { connection: "close" } };
    }
    if (read.kind === "aborted") return _err(400, route, VALIDATION_FAILED, "request body was not received");
    if (read.text.trim() === "") return optional ? fn(undefined) : _err(400, route, VALIDATION_FAILED, "unexpected end of JSON input");
    let body: unknown;
    try {
      body = JSON.parse(read.text);
    } catch {
      return optional ? fn(undefined) : _err(400, route, VALIDATION_FAILED, "request body is not valid JSON");
    }
    return fn(body);
  }

  function _authenticate(body: unknown): Answer {
    const route = "authenticate";
    if (!_isObject(body)) return _err(400, route, VALIDATION_FAILED, "request body must be a JSON object");
    const email = body.email;
    const password = body.password;
    if (typeof email !== "string" || email === "" || typeof password !== "string" || password === "") {
      return _err(400, route, VALIDATION_FAILED, "email and password are required");
    }
    const taxpayer = taxpayers.get(email.toLowerCase());
    if (!taxpayer) return _err(404, route, "user not found");
    if (taxpayer.password !== password) return _err(401, route, "invalid email or password");
    if (taxpayer.app_linked === false) {
      return _err(403, route, "the taxpayer has not linked this application as an access point provider");
    }
    // The documented 200 sample (AuthenticateTaxPayer).
    return {
      status: 200,
      body: {
        code: 200,
        data: { entity_id: taxpayer.entity_id, id: randomUUID(), message: "User logged in", received_at: new Date().toISOString(), status: "200 OK" },
      },
    };
  }

  function _verifyTin(body: unknown): Answer {
    const route = "verify-tin";
    const tin = _isObject(body) ? body.tin : undefined;
    if (typeof tin !== "string" || tin === "") return _err(400, route, VALIDATION_FAILED, "tin is required");
    const found = businessesByTin.get(tin);
    if (!found) return _err(404, route, "tin not found");
    // The documented 200 sample (VerifyTin), filled from the fixture business.
    return {
      status: 200,
      body: {
        code: 200,
        data: {
          address: "",
          email: "",
          id: found.business.id,
          jtb_tin: "",
          message: "TIN Information",
          phone: "",
          rc_number: "",
          status: "200 OK",
          taxofficer_id: "",
          taxofficer_name: "",
          taxpayer_name: found.business.name,
          taxpayer_type: "C",
          tin,
        },
      },
    };
  }

  function _entity(id: string): Answer {
    const bad = uuidProblem(id);
    if (bad) return _err(400, "entity", VALIDATION_FAILED, bad);
    const raw = entityAnswers.get(id);
    return raw ? { status: 200, raw } : _err(404, "entity", "entity not found");
  }

  /** SearchEntity: `size`, `page`, `sort_by`, `sort_direction_desc`, `reference` (documented); the page shape is modelled. */
  function _entitySearch(q: URLSearchParams): Answer {
    const reference = q.get("reference") ?? "";
    return _page(reference === "" ? entityViews : entityViews.filter((e) => e.reference === reference), q, "entity-search", "created_at");
  }

  function _irnValidate(body: unknown): Answer {
    const route = "irn-validate";
    if (!_isObject(body)) return _err(400, route, VALIDATION_FAILED, "request body must be a JSON object");
    const reference = body.invoice_reference;
    const businessId = body.business_id;
    const irn = body.irn;
    if (typeof reference !== "string" || reference === "" || typeof businessId !== "string" || businessId === "" || typeof irn !== "string" || irn === "") {
      return _err(400, route, VALIDATION_FAILED, "invoice_reference, business_id and irn are required");
    }
    const found = _business(businessId, route);
    if ("status" in found) return found;
    const problem = _irnProblem(irn, found) ?? (irn.split("-")[0] === reference ? null : "invoice_reference differs from the invoice number in the irn");
    return problem ? _err(400, route, VALIDATION_FAILED, `irn validation failed: ${problem}`) : OK_200;
  }

  function _invoice(body: unknown, route: "validate" | "sign"): Answer {
    if (!_isObject(body)) return _err(400, route, VALIDATION_FAILED, "request body must be a JSON object");
    const problems = checkInvoice(body);
    if (problems.length > 0) return _err(400, route, VALIDATION_FAILED, detailsText(problems));
    const irn = body.irn as string;
    const found = _business(body.business_id as string, route);
    if ("status" in found) return found;
    const cross: string[] = [];
    const irnProblem = _irnProblem(irn, found);
    if (irnProblem) cross.push(`irn validation failed: ${irnProblem}`);
    const supplier = body.accounting_supplier_party as Record<string, unknown>;
    if (supplier.tin !== found.business.tin) cross.push("accounting_supplier_party.tin does not match the business's tin");
    for (const side of ["accounting_supplier_party", "accounting_customer_party"] as const) {
      const party = body[side];
      if (!_isObject(party)) continue;
      if (typeof party.id === "string" && !parties.has(party.id)) cross.push(`${side}.id party not found`);
      if (typeof party.postal_address_id === "string" && !postalAddresses.has(party.postal_address_id)) {
        cross.push(`${side}.postal_address_id postal address not found`);
      }
    }
    if (cross.length > 0) return _err(400, route, VALIDATION_FAILED, cross.join("; "));
    if (route === "validate") return OK_200;
    // The real API folds a duplicate into its validation refusal ("… also confirm this is not a duplicate request").
    if (signed.has(irn)) return _err(400, route, VALIDATION_FAILED, "an invoice with this irn already exists");
    const now = new Date().toISOString();
    signed.set(irn, {
      irn,
      business_id: found.business.id,
      entity_id: found.entity.id,
      status: "SIGNED",
      payment_status: typeof body.payment_status === "string" ? (body.payment_status as PaymentStatus) : "PENDING",
      payment_reference: null,
      signed_at: now,
      transmitted_at: null,
      receipt_confirmed_at: null,
      updated_at: now,
      invoice: body,
    });
    return OK_201;
  }

  function _transmit(irn: string): Answer {
    const route = "transmit";
    const rec = signed.get(irn);
    if (!rec) return _err(404, route, "invoice not found");
    const webhook = businesses.get(rec.business_id)?.business.webhook_url;
    if (typeof webhook !== "string" || webhook === "") return _err(400, route, "webhook url is not setup");
    if (rec.transmitted_at !== null) return _err(409, route, "invoice has already been transmitted");
    const now = new Date().toISOString();
    rec.transmitted_at = now;
    rec.updated_at = now;
    rec.status = "TRANSMITTED";
    return OK_201;
  }

  function _confirmReceipt(irn: string): Answer {
    const rec = signed.get(irn);
    if (!rec || rec.transmitted_at === null) return _err(404, "confirm-receipt", "invoice not found");
    const now = new Date().toISOString();
    rec.receipt_confirmed_at ??= now;
    rec.updated_at = now;
    return OK_200;
  }

  function _lookup(by: LookupKey, value: string): Answer {
    if (by === "irn") {
      const rec = signed.get(value);
      if (!rec || rec.transmitted_at === null) return _err(404, "transmit-lookup", "invoice not found");
      return { status: 200, body: { code: 200, data: _exchangeView(rec) } };
    }
    const out: Record<string, unknown>[] = [];
    for (const rec of signed.values()) {
      if (rec.transmitted_at === null) continue;
      const key = by === "tin" ? "tin" : "id";
      if (_partyField(rec, "accounting_supplier_party", key) === value || _partyField(rec, "accounting_customer_party", key) === value) {
        out.push(_exchangeView(rec));
      }
    }
    return { status: 200, body: { code: 200, data: out } };
  }

  function _pull(q: URLSearchParams): Answer {
    const confirmed = q.get("confirmed");
    const from = q.get("from");
    const to = q.get("to");
    for (const [name, value] of [["from", from], ["to", to]] as const) {
      if (value !== null && !_isIsoDate(value)) return _err(400, "pull", VALIDATION_FAILED, `${name} must be a date YYYY-MM-DD`);
    }
    const out: Record<string, unknown>[] = [];
    for (const rec of signed.values()) {
      if (rec.transmitted_at === null) continue;
      const day = rec.transmitted_at.slice(0, 10);
      if (from !== null && day < from) continue;
      if (to !== null && day > to) continue;
      if (confirmed !== null && (rec.receipt_confirmed_at !== null) !== (confirmed === "true")) continue;
      out.push(_exchangeView(rec));
    }
    return { status: 200, body: { code: 200, data: out } };
  }

  function _createParty(body: unknown): Answer {
    const route = "party-create";
    if (!_isObject(body)) return _err(400, route, VALIDATION_FAILED, "request body must be a JSON object");
    const problems: string[] = [];
    const str = (key: string, required: boolean): string | null => {
      const v = body[key];
      if (v === undefined || v === null || v === "") {
        if (required) problems.push(`${key} is required`);
        return null;
      }
      if (typeof v !== "string") {
        problems.push(`${key} must be a string`);
        return null;
      }
      return v;
    };
    const businessId = str("business_id", true);
    const partyName = str("party_name", true);
    const tin = str("tin", true);
    const email = str("email", true);
    const telephone = str("telephone", false);
    const description = str("business_description", false);
    let addressId = str("postal_address_id", false);
    const address = body.postal_address;
    if (telephone !== null && !telephone.startsWith("+")) problems.push("telephone must start with + (country code)");
    if (addressId !== null && !postalAddresses.has(addressId)) problems.push("postal_address_id postal address not found");
    if (addressId === null) {
      if (!_isObject(address)) problems.push("postal_address or postal_address_id is required");
      else for (const k of ["street_name", "city_name", "postal_zone", "country"]) if (typeof address[k] !== "string" || address[k] === "") problems.push(`postal_address.${k} is required`);
    }
    if (problems.length > 0 || businessId === null || partyName === null || tin === null || email === null) {
      return _err(400, route, VALIDATION_FAILED, problems.join("; "));
    }
    const bad = uuidProblem(businessId);
    if (bad) return _err(400, route, VALIDATION_FAILED, bad);
    if (!businesses.has(businessId)) return _err(404, route, "business not found");
    if (addressId === null) {
      addressId = randomUUID();
      postalAddresses.add(addressId);
    }
    const party: PartyRecord = {
      id: randomUUID(),
      business_id: businessId,
      party_name: partyName,
      tin,
      email,
      telephone,
      business_description: description,
      postal_address_id: addressId,
      postal_address: _isObject(address) ? { ...address } : null,
      created_at: new Date().toISOString(),
    };
    parties.set(party.id, party);
    return { status: 201, body: { code: 201, data: party } };
  }

  function _partySearch(businessId: string, q: URLSearchParams): Answer {
    const route = "party-search";
    const bad = uuidProblem(businessId);
    if (bad) return _err(400, route, VALIDATION_FAILED, bad);
    if (!businesses.has(businessId)) return _err(404, route, "business not found");
    const name = q.get("party_name")?.toLowerCase() ?? "";
    const items = [...parties.values()].filter((p) => p.business_id === businessId && (name === "" || p.party_name.toLowerCase().includes(name)));
    return _page(items, q, route, "created_at");
  }

  function _invoiceSearch(businessId: string, q: URLSearchParams): Answer {
    const route = "invoice-search";
    const bad = uuidProblem(businessId);
    if (bad) return _err(400, route, VALIDATION_FAILED, bad);
    if (!businesses.has(businessId)) return _err(404, route, "business not found");
    const filters = INVOICE_FILTERS.flatMap((k) => {
      const v = q.get(k);
      return v === null || v === "" ? [] : [[k, v] as const];
    });
    const items: Record<string, unknown>[] = [];
    for (const rec of signed.values()) {
      if (rec.business_id !== businessId) continue;
      const view = _invoiceView(rec);
      if (filters.every(([k, v]) => view[k] === v)) items.push(view);
    }
    return _page(items, q, route, "signed_at");
  }

  function _confirm(irn: string, withInvoice: boolean): Answer {
    const rec = signed.get(irn);
    const route = withInvoice ? "download" : "confirm";
    if (!rec) return _err(404, route, "invoice not found");
    const data: Record<string, unknown> = {
      irn: rec.irn,
      business_id: rec.business_id,
      status: rec.status,
      payment_status: rec.payment_status,
      signed_at: rec.signed_at,
      transmitted_at: rec.transmitted_at,
      updated_at: rec.updated_at,
    };
    if (withInvoice) data.invoice = rec.invoice;
    return { status: 200, body: { code: 200, data } };
  }

  function _update(irn: string, body: unknown): Answer {
    const route = "update";
    const rec = signed.get(irn);
    if (!rec) return _err(404, route, "invoice not found");
    if (!_isObject(body)) return _err(400, route, VALIDATION_FAILED, "request body must be a JSON object");
    const status = body.payment_status;
    if (typeof status !== "string" || !PAYMENT_STATUSES.has(status)) {
      return _err(400, route, VALIDATION_FAILED, "payment_status must be one of PENDING, PAID, CANCELED");
    }
    const reference = body.reference;
    if (reference !== undefined && reference !== null && typeof reference !== "string") {
      return _err(400, route, VALIDATION_FAILED, "reference must be a string");
    }
    rec.payment_status = status as PaymentStatus;
    if (typeof reference === "string") rec.payment_reference = reference;
    rec.updated_at = new Date().toISOString();
    return OK_200;
  }

  function _business(id: string, route: SimulatorRoute): BusinessRecord | Answer {
    const bad = uuidProblem(id);
    if (bad) return _err(400, route, VALIDATION_FAILED, bad);
    const found = businesses.get(id);
    if (!found) return _err(404, route, "business not found");
    if (!found.business.is_active || !found.entity.is_active) return _err(400, route, VALIDATION_FAILED, "business is not active");
    if (found.template === null) return _err(400, route, VALIDATION_FAILED, "business has no irn template");
    return found;
  }

  // --- Control API (/__sim/*, no credentials) ---

  async function _control(req: IncomingMessage, res: ServerResponse, method: string, path: string, query: string): Promise<void> {
    const reply = (status: number, body: unknown) => _send(res, { status, body });
    if (path === "/__sim/faults" || path.startsWith("/__sim/faults/")) {
      const named = path.length > "/__sim/faults/".length ? _decode(path.slice("/__sim/faults/".length)) : undefined;
      const route = named ?? new URLSearchParams(query).get("route") ?? undefined;
      if (method === "GET" && named === undefined) return reply(200, { faults: faults.list() });
      if (method === "DELETE") {
        if (route !== undefined && route !== "*" && !isSimulatorRoute(route)) {
          return reply(404, { ok: false, error: "unknown_route", routes: SIMULATOR_ROUTES });
        }
        faults.clear(route as SimulatorRoute | "*" | undefined);
        return reply(200, { ok: true, faults: faults.list() });
      }
      if (method === "POST" && named === undefined) {
        const read = await _readBody(req, 64 * 1024);
        let body: unknown;
        try {
          body = read.kind === "ok" ? JSON.parse(read.text) : undefined;
        } catch {
          return reply(400, { ok: false, error: "invalid_json", problems: ["body is not valid JSON"] });
        }
        try {
          const spec = parseFaultSpec(body);
          faults.set(spec.route, spec.fault);
          return reply(201, { ok: true, route: spec.route, fault: spec.fault });
        } catch (e) {
          if (isFaultSpecError(e)) return reply(400, { ok: false, error: "invalid_fault", problems: e.problems });
          throw e;
        }
      }
      return reply(405, { ok: false, error: "method_not_allowed" });
    }
    if (path === "/__sim/state" && method === "GET") {
      return reply(200, {
        signed: state.signedIrns(),
        transmitted: state.transmittedIrns(),
        parties: parties.size,
        calls: state.callCounts(),
        totalCalls: state.totalCalls(),
        faults: faults.list(),
      });
    }
    if (path === INBOUND_CONTROL_PATH) {
      const pushed = await handleInboundPush(req, method, { secret: apiSecret, signedInvoice: (irn) => signed.get(irn)?.invoice });
      return reply(pushed.status, pushed.body);
    }
    if (path === "/__sim/reset" && method === "POST") {
      reset();
      return reply(200, { ok: true });
    }
    return reply(404, { ok: false, error: "not_found" });
  }

  function reset(): void {
    signed.clear();
    parties.clear();
    postalAddresses.clear();
    faults.clear();
    calls = _zeroCalls();
  }

  return {
    handle,
    faults,
    state,
    reset,
    resetCalls() {
      calls = _zeroCalls();
    },
    dispose() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const res of held) res.destroy();
      held.clear();
    },
  };
}

// --- Internal helpers ---

interface BusinessRecord {
  business: FixtureBusiness;
  entity: FixtureEntity;
  /** Compiled IRN template, or null when the business has none. */
  template: RegExp | null;
}

/** An answer: `raw` (pre-serialised JSON) wins over `body`. */
interface Answer {
  status: number;
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
}

type LookupKey = "irn" | "tin" | "party";

interface Call {
  req: IncomingMessage;
  route: SimulatorRoute;
  param: string;
  /** transmit-lookup: what `param` is. */
  by?: LookupKey;
  query: string;
}

interface RouteMatch {
  route: SimulatorRoute;
  param: string;
  by?: LookupKey;
}

const JSON_TYPE = "application/json; charset=utf-8";
/** The recorded health answer (content-length 16). */
const HEALTH: Answer = { status: 200, raw: JSON.stringify({ healthy: true }) };
const NO_ROUTE: Answer = { status: 404, raw: NO_ROUTE_BODY };
const OK_200: Answer = { status: 200, raw: JSON.stringify({ code: 200, data: { ok: true } }) };
const OK_201: Answer = { status: 201, raw: JSON.stringify({ code: 201, data: { ok: true } }) };
const INVOICE_FILTERS = ["irn", "payment_status", "invoice_type_code", "issue_date", "due_date", "tax_currency_code", "document_currency_code"] as const;
const DEFAULT_PAGE_SIZE = 20;
const MAX_PAGE_SIZE = 100;

/** Method + path → route (the documented endpoint list, FIRS-MBS Endpoints 1.0.md), or null: no route. */
function _match(method: string, path: string): RouteMatch | null {
  if (path === "/api") return method === "GET" ? { route: "health", param: "" } : null;
  if (!path.startsWith("/api/v1/")) return null;
  const s = path.slice(8).split("/");
  const [a, b, c, d, e] = s;
  const only = (allowed: string, route: SimulatorRoute, param = "", by?: LookupKey): RouteMatch | null =>
    method === allowed ? { route, param, ...(by ? { by } : {}) } : null;
  if (a === "utilities" && s.length === 2 && b === "authenticate") return only("POST", "authenticate");
  // Documented with a trailing slash: /api/v1/utilities/verify-tin/
  if (a === "utilities" && b === "verify-tin" && (s.length === 2 || (s.length === 3 && c === ""))) return only("POST", "verify-tin");
  if (a === "entity" && s.length === 1) return only("GET", "entity-search");
  if (a === "entity" && s.length === 2 && b) return only("GET", "entity", _decode(b));
  if (a !== "invoice" || !b) return null;
  if (s.length === 2) {
    if (method === "GET") return { route: "invoice-search", param: _decode(b) };
    if (b === "validate") return only("POST", "validate");
    if (b === "sign") return only("POST", "sign");
    if (b === "party") return only("POST", "party-create");
    return null;
  }
  if (!c) return null;
  if (s.length === 3) {
    switch (b) {
      case "irn":
        return c === "validate" ? only("POST", "irn-validate") : null;
      case "party":
        return only("GET", "party-search", _decode(c));
      case "transmit":
        if (c === "self-health-check") return only("GET", "self-health-check");
        if (c === "pull") return only("GET", "pull");
        if (method === "PATCH") return { route: "confirm-receipt", param: _decode(c) };
        return only("POST", "transmit", _decode(c));
      case "confirm":
        return only("GET", "confirm", _decode(c));
      case "download":
        return only("GET", "download", _decode(c));
      case "update":
        return only("PATCH", "update", _decode(c));
      case "resources":
        return only("GET", "resources", _decode(c));
      default:
        return null;
    }
  }
  if (b === "transmit" && c === "lookup") {
    if (s.length === 4 && d) return only("GET", "transmit-lookup", _decode(d), "irn");
    if (s.length === 5 && e && (d === "tin" || d === "party")) return only("GET", "transmit-lookup", _decode(e), d);
  }
  return null;
}

function _decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function _send(res: ServerResponse, answer: Answer): void {
  if (_gone(res)) return;
  const text = answer.raw ?? JSON.stringify(answer.body);
  res.writeHead(answer.status, {
    "content-type": JSON_TYPE,
    "cache-control": "private",
    "content-length": Buffer.byteLength(text),
    ...answer.headers,
  });
  res.end(text);
}

function _gone(res: ServerResponse): boolean {
  return res.headersSent || res.destroyed || res.writableEnded;
}

function _err(status: number, route: SimulatorRoute, publicMessage: string, details?: string): Answer {
  return { status, body: errorEnvelope(status, HANDLER_OF[route], publicMessage, details) };
}

function _internal(route: SimulatorRoute): Answer {
  return _err(500, route, "internal server error");
}

function _dataOf(answer: Answer): unknown {
  const body: unknown = answer.raw !== undefined ? JSON.parse(answer.raw) : answer.body;
  return _isObject(body) && "data" in body ? body.data : undefined;
}

function _zeroCalls(): Record<SimulatorRoute, number> {
  const calls = {} as Record<SimulatorRoute, number>;
  for (const r of SIMULATOR_ROUTES) calls[r] = 0;
  return calls;
}

type BodyRead = { kind: "ok"; text: string } | { kind: "too_large" } | { kind: "aborted" };

function _readBody(req: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (r: BodyRead) => {
      if (done) return;
      done = true;
      resolve(r);
    };
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > limit) finish({ kind: "too_large" });
      else chunks.push(chunk);
    });
    req.on("end", () => finish({ kind: "ok", text: Buffer.concat(chunks, size).toString("utf8") }));
    req.on("error", () => finish({ kind: "aborted" }));
    req.on("close", () => finish({ kind: "aborted" }));
  });
}

/** A fixed timestamp for fixture records (the answers stay byte-identical from run to run). */
const FIXTURE_TIME = "2025-01-01T00:00:00.000000Z";

/** The real GetEntity answer's shape (docs/regulator-simulator.md lists the fields and defaults). */
function _entityView(entity: FixtureEntity): Record<string, unknown> {
  const view: Record<string, unknown> = {
    id: entity.id,
    reference: entity.reference,
    custom_settings: null,
    created_at: FIXTURE_TIME,
    updated_at: FIXTURE_TIME,
    businesses: entity.businesses.map((b) => {
      const bv: Record<string, unknown> = {
        id: b.id,
        reference: b.reference ?? b.id.slice(0, 8),
        name: b.name,
        custom_settings: null,
        created_at: FIXTURE_TIME,
        updated_at: FIXTURE_TIME,
        tin: b.tin,
        sector: b.sector ?? "General Commerce",
        annual_turnover: b.annual_turnover ?? "1 million - 50 million",
        support_peppol: b.support_peppol ?? false,
        is_realtime_reporting: b.is_realtime_reporting ?? false,
        notification_channels: b.notification_channels ?? "email",
        erp_system: b.erp_system ?? "",
      };
      if (b.irn_template !== undefined) bv.irn_template = b.irn_template;
      bv.is_active = b.is_active;
      return { ...bv, ...(b.overrides ?? {}) };
    }),
    is_active: entity.is_active,
    app_reference: entity.app_reference ?? "gatehouse",
  };
  return { ...view, ...(entity.overrides ?? {}) };
}

/**
 * A template → the regex its IRNs match: `{{invoice_id…}}` letters/digits, `{{YYYYMMDD…}}` 8 digits,
 * the rest literal; a placeholder may carry example text, `{{invoice_id(e.g:INV00XXX)}}`.
 */
function _compileTemplate(template: string): RegExp {
  let src = "^";
  for (const part of template.split(/(\{\{\s*(?:invoice_id|YYYYMMDD)\s*(?:\([^{}()]*\))?\s*\}\})/)) {
    if (/^\{\{\s*invoice_id/.test(part)) src += "[A-Za-z0-9]+";
    else if (/^\{\{\s*YYYYMMDD/.test(part)) src += "\\d{8}";
    else src += part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(src + "$");
}

const IRN_SHAPE = /^[A-Za-z0-9]+-[A-Za-z0-9]{8}-(\d{4})(\d{2})(\d{2})$/;

/** IRN = {InvoiceNo}-{ServiceID}-{YYYYMMDD}, a real date, the business's template; the problem or null. */
function _irnProblem(irn: string, found: BusinessRecord): string | null {
  const m = IRN_SHAPE.exec(irn);
  if (!m) return "irn must be {invoice_id}-{service_id}-{YYYYMMDD}";
  if (!isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) return "the irn's date is not a valid YYYYMMDD date";
  if (found.template !== null && !found.template.test(irn)) return "the irn does not follow the business's irn template";
  return null;
}

function _isIsoDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  return m !== null && isRealDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

function _partyField(rec: SignedInvoiceRecord, side: string, key: string): unknown {
  const party = rec.invoice[side];
  return _isObject(party) ? party[key] : undefined;
}

/** An exchanged (transmitted) invoice, as the lookups and pull list it (modelled: no recorded answer). */
function _exchangeView(rec: SignedInvoiceRecord): Record<string, unknown> {
  return {
    irn: rec.irn,
    business_id: rec.business_id,
    supplier_tin: _partyField(rec, "accounting_supplier_party", "tin") ?? null,
    customer_tin: _partyField(rec, "accounting_customer_party", "tin") ?? null,
    transmitted_at: rec.transmitted_at,
    receipt_confirmed: rec.receipt_confirmed_at !== null,
    receipt_confirmed_at: rec.receipt_confirmed_at,
  };
}

/** An invoice as SearchInvoice lists it: the searchable fields (modelled: no recorded answer). */
function _invoiceView(rec: SignedInvoiceRecord): Record<string, unknown> {
  const doc = rec.invoice;
  return {
    irn: rec.irn,
    business_id: rec.business_id,
    invoice_type_code: doc.invoice_type_code ?? null,
    issue_date: doc.issue_date ?? null,
    due_date: doc.due_date ?? null,
    document_currency_code: doc.document_currency_code ?? null,
    tax_currency_code: doc.tax_currency_code ?? null,
    payment_status: rec.payment_status,
    status: rec.status,
    signed_at: rec.signed_at,
    transmitted_at: rec.transmitted_at,
  };
}

/**
 * `size` / `page` / `sort_by` / `sort_direction_desc` as documented (`sort_by=created_at` sorts by
 * `createdField`, the item's creation time); the page shape is modelled.
 */
function _page<T extends object>(items: readonly T[], q: URLSearchParams, route: SimulatorRoute, createdField: string): Answer {
  const size = q.get("size") === null ? DEFAULT_PAGE_SIZE : Number(q.get("size"));
  const page = q.get("page") === null ? 1 : Number(q.get("page"));
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE_SIZE || !Number.isInteger(page) || page < 1) {
    return _err(400, route, VALIDATION_FAILED, `size must be 1..${MAX_PAGE_SIZE} and page at least 1`);
  }
  const sortBy = q.get("sort_by") ?? "created_at";
  const sortKey = sortBy === "created_at" ? createdField : sortBy;
  const desc = q.get("sort_direction_desc") !== "false";
  const sorted = [...items].sort((x, y) => {
    const a = String((x as Record<string, unknown>)[sortKey] ?? "");
    const b = String((y as Record<string, unknown>)[sortKey] ?? "");
    return desc ? b.localeCompare(a) : a.localeCompare(b);
  });
  const start = (page - 1) * size;
  return {
    status: 200,
    body: {
      code: 200,
      data: {
        items: sorted.slice(start, start + size),
        page: { page, size, hasNextPage: start + size < sorted.length, hasPreviousPage: page > 1, totalCount: sorted.length },
      },
    },
  };
}

function _codes(list: readonly unknown[] | undefined): Set<string> {
  const out = new Set<string>();
  for (const item of list ?? []) {
    if (_isObject(item) && typeof item.code === "string") out.add(item.code);
  }
  return out;
}

function _isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
