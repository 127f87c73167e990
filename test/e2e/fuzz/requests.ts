/**
 * The fuzz suite's request model and generators (fast-check). A case is one raw HTTP exchange on a
 * fresh connection: a method (valid, unusual or malformed), a request target built from a route of
 * the route table (parameters: real identifiers, placeholders or arbitrary text; query names of the
 * route's schema among others) or garbage, a Host of a known kind (gateway
 * domain, collections host, unknown, malformed, absent), headers (credentials right or wrong,
 * server-managed names, arbitrary values), a body (a plausible document for the route, arbitrary
 * JSON, deep, wide, huge numbers, prototype keys, control characters, non-JSON bytes) and its
 * framing (exact, short, long, chunked, malformed chunks, conflicting framing headers), optionally
 * followed by stray bytes. `toBytes` is the exact wire form; `describe` prints a reproduction.
 */
import * as fc from "fast-check";
import { ADMIN_KEY, BEARER_DEMO, BEARER_OTHER, DEMO_KEY, OTHER, OTHER_KEY, PASSTHROUGH, STORED } from "../../support/gateway.ts";
import { demoInvoice as invoice } from "../../adapters/regulator/simulator/simulator-helpers.ts";

/** Put into every secret-bearing value a case sends: it must never come back in an error or reach a log. */
export const MARKER = "Zq9Sekr1t";

export type HostKind = "gateway" | "collections" | "unknown" | "missing";

export interface OpenApiRoute {
  method: string;
  /** OpenAPI template: /sub-businesses/{gatewaySubBusinessId} */
  template: string;
  service: "gateway" | "collections";
  hosts: "gateway" | "collections" | "any";
  auth: "apiKey" | "bearer" | "admin" | "none";
  /** Query parameter names the route's schema declares (none: the route takes no query of its own). */
  query?: readonly string[];
}

export interface FuzzContext {
  routes: readonly OpenApiRoute[];
  gatewayHosts: readonly string[];
  collectionsHosts: readonly string[];
  apiKeys: readonly string[];
  bearerKeys: readonly string[];
  adminKeys: readonly string[];
  subBusinessId: string;
  /** Real identifiers per path-parameter name (test/e2e/fuzz/identifiers.ts); others get a placeholder. */
  identifiers?: Readonly<Record<string, readonly string[]>>;
  /** A plausible body for a route (a valid document the handler accepts), or null. */
  plausibleBody(route: OpenApiRoute, n: number): unknown;
}

export interface FuzzCase {
  route: OpenApiRoute;
  method: string;
  target: string;
  version: string;
  hostKind: HostKind;
  /** The Host header value, absent when hostKind is "missing". */
  host: string | null;
  headers: Array<[string, string]>;
  /** The body bytes (latin1 text), or null for none. */
  body: string | null;
  framing: "length" | "short" | "long" | "chunked" | "bad-chunk" | "te-and-length" | "double-length" | "none";
  /** Bytes written after the request (a second, possibly broken, request). */
  trailer: string;
  /** Half-close after writing (the server then knows nothing more will come). */
  halfClose: boolean;
}

/** The wire form of a case. */
export function toBytes(c: FuzzCase): Buffer {
  const lines = [`${c.method} ${c.target} ${c.version}`];
  if (c.host !== null) lines.push(`Host: ${c.host}`);
  for (const [name, value] of c.headers) lines.push(`${name}: ${value}`);
  const body = c.body === null ? null : Buffer.from(c.body, "utf8");
  let payload = Buffer.alloc(0);
  if (body !== null) {
    switch (c.framing) {
      case "length":
        lines.push(`Content-Length: ${body.length}`);
        payload = body;
        break;
      case "short":
        lines.push(`Content-Length: ${body.length + 7}`);
        payload = body;
        break;
      case "long":
        lines.push(`Content-Length: ${Math.max(0, body.length - 3)}`);
        payload = body;
        break;
      case "chunked":
        lines.push("Transfer-Encoding: chunked");
        payload = Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from("\r\n0\r\n\r\n")]);
        break;
      case "bad-chunk":
        lines.push("Transfer-Encoding: chunked");
        payload = Buffer.concat([Buffer.from(`3\r\n${body.subarray(0, 3).toString("latin1")}\r\nzz\r\n`, "latin1"), body]);
        break;
      case "te-and-length":
        lines.push("Transfer-Encoding: chunked", `Content-Length: ${body.length}`);
        payload = body;
        break;
      case "double-length":
        lines.push(`Content-Length: ${body.length}`, `Content-Length: ${body.length + 1}`);
        payload = body;
        break;
      case "none":
        payload = body;
        break;
    }
  }
  return Buffer.concat([Buffer.from(lines.join("\r\n") + "\r\n\r\n", "utf8"), payload, Buffer.from(c.trailer, "latin1")]);
}

/** A reproduction: the bytes (JSON-escaped) and a one-line Node command that sends them. */
export function describe(c: FuzzCase, port: number | string = "$PORT"): string {
  const bytes = toBytes(c).toString("latin1");
  const shown = bytes.length > 1_500 ? `${JSON.stringify(bytes.slice(0, 1_500))} … (${bytes.length} bytes in all)` : JSON.stringify(bytes);
  return [
    `route ${c.route.method} ${c.route.template} (${c.route.service}), host kind ${c.hostKind}, framing ${c.framing}, half-close ${c.halfClose}`,
    `bytes: ${shown}`,
    bytes.length > 1_500
      ? "send: the replay command above sends the whole case"
      : `send: node -e 'const s=require("net").connect(${port},"127.0.0.1",()=>{s.write(Buffer.from(${JSON.stringify(bytes)},"latin1"));${c.halfClose ? "s.end();" : ""}});s.pipe(process.stdout)'`,
  ].join("\n");
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

/**
 * Half the cases are well-formed requests a client could send (the route's method, its natural
 * host, right credentials, exact framing) whose parameters, query and body vary, so they reach the
 * handlers and the money paths; the other half vary everything.
 */
export function fuzzCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc.oneof(wellFormedCase(ctx), anyCase(ctx));
}

function wellFormedCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...ctx.routes).chain((r) =>
    fc
      .record({
        target: targetOf(r, ctx, true),
        hostChoice: naturalHostOf(r, ctx),
        headers: headersOf(r, ctx, true),
        body: bodyOf(r, ctx),
      })
      .map(({ hostChoice, ...c }): FuzzCase => ({
        route: r,
        method: r.method,
        version: "HTTP/1.1",
        framing: "length",
        trailer: "",
        halfClose: true,
        ...c,
        hostKind: hostChoice.kind,
        host: hostChoice.host,
      })),
  );
}

function anyCase(ctx: FuzzContext): fc.Arbitrary<FuzzCase> {
  const route = fc.constantFrom(...ctx.routes);
  return route.chain((r) =>
    fc
      .record({
        method: methodOf(r),
        target: targetOf(r, ctx),
        version: fc.oneof({ arbitrary: fc.constant("HTTP/1.1"), weight: 18 }, { arbitrary: fc.constantFrom("HTTP/1.0", "HTTP/9.9", "HTTP/1.1x", "http/1.1"), weight: 1 }),
        hostChoice: hostOf(r, ctx),
        headers: headersOf(r, ctx),
        body: bodyOf(r, ctx),
        framing: fc.oneof(
          { arbitrary: fc.constant("length" as const), weight: 14 },
          { arbitrary: fc.constantFrom("chunked" as const, "short" as const, "long" as const), weight: 3 },
          { arbitrary: fc.constantFrom("bad-chunk" as const, "te-and-length" as const, "double-length" as const, "none" as const), weight: 2 },
        ),
        trailer: fc.oneof(
          { arbitrary: fc.constant(""), weight: 12 },
          { arbitrary: fc.constantFrom("X", "\r\n", "GET /health HTTP/1.1\r\nHost: localhost\r\n\r\n", "BROKEN\r\n\r\n", "\u0000\u00ff"), weight: 2 },
        ),
        halfClose: fc.oneof({ arbitrary: fc.constant(true), weight: 6 }, { arbitrary: fc.constant(false), weight: 1 }),
      })
      .map(({ hostChoice, ...c }): FuzzCase => ({ route: r, ...c, hostKind: hostChoice.kind, host: hostChoice.host })),
  );
}

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"];

function methodOf(r: OpenApiRoute): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constant(r.method), weight: 14 },
    { arbitrary: fc.constantFrom(...METHODS), weight: 4 },
    { arbitrary: fc.constantFrom(r.method.toLowerCase(), "CONNECT", "TRACE", "FOO", "G ET", "PRI", "M-SEARCH"), weight: 1 },
  );
}

/** A path segment: mostly printable, sometimes encoded unicode, traversal, bad escapes or very long. */
const segment = fc.oneof(
  { arbitrary: fc.stringMatching(/^[A-Za-z0-9._~-]{1,40}$/), weight: 8 },
  { arbitrary: fc.string({ unit: "grapheme", minLength: 1, maxLength: 20 }).map(encodeURIComponent), weight: 3 },
  { arbitrary: fc.constantFrom("..", "%2e%2e", "%zz", "%", "%00", "%C0%AF", "a%2Fb", "__proto__", "constructor", "-", "*"), weight: 2 },
  { arbitrary: fc.integer({ min: 256, max: 9_000 }).map((n) => "s".repeat(n)), weight: 1 },
);

function targetOf(r: OpenApiRoute, ctx: FuzzContext, wellFormed = false): fc.Arbitrary<string> {
  const params = [...r.template.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const fixed = (name: string): string | null => (name === "gatewaySubBusinessId" ? ctx.subBusinessId : name === "irn" ? "INV001-94ND90NR-20240611" : name === "name" ? "currencies" : null);
  // A real identifier of this parameter's name when the gateway listed one, else a fixed value or a placeholder.
  const known = (name: string): fc.Arbitrary<string> => {
    const real = [...(ctx.identifiers?.[name] ?? [])].map(encodeURIComponent);
    const fallback = fixed(name) ?? "missing-ref-0001";
    return real.length > 0 ? fc.oneof({ arbitrary: fc.constantFrom(...real), weight: 4 }, { arbitrary: fc.constant(fallback), weight: 1 }) : fc.constant(fallback);
  };
  const path = fc
    .tuple(...params.map((p) => fc.oneof({ arbitrary: known(p), weight: wellFormed ? 8 : 3 }, { arbitrary: segment, weight: 2 })))
    .map((values) => params.reduce((t, p, i) => t.replace(`{${p}}`, values[i]!), r.template));
  const query = fc.oneof(
    { arbitrary: fc.constant(""), weight: 10 },
    {
      arbitrary: fc
        .array(
          fc.tuple(
            fc.constantFrom(...new Set([...(r.query ?? []), "page", "limit", "cursor", "status", "search", "mode", "Wallet", "signFee", "business_state", "__proto__", "reference", "sort", "x"])),
            fc.oneof(
              fc.constant(MARKER),
              fc.stringMatching(/^[A-Za-z0-9]{0,12}$/),
              fc.constantFrom("-1", "0", "1e309", "%zz", "1".repeat(400), "AAAA", "eyJ2IjpbMV19", "2024-13-45", "inbound"),
            ),
          ),
          { minLength: 1, maxLength: 4 },
        )
        .map((pairs) => "?" + pairs.map(([k, v]) => `${k}=${v}`).join("&")),
      weight: 3,
    },
  );
  if (wellFormed) return fc.oneof({ arbitrary: path, weight: 4 }, { arbitrary: fc.tuple(path, query).map(([p, q]) => p + q), weight: 1 });
  return fc.oneof(
    { arbitrary: fc.tuple(path, query).map(([p, q]) => p + q), weight: 16 },
    { arbitrary: fc.tuple(path, segment).map(([p, s]) => `${p}/${s}`), weight: 2 },
    { arbitrary: fc.constantFrom("*", "/", "//", "http://localhost/health", "ftp://x/y", "x:443", "/%", "/\u00e9t\u00e9", "/a b"), weight: 1 },
  );
}

// Case, a port, a trailing dot and surrounding spaces do not change which host it is.
function knownHost(hosts: readonly string[], kind: HostKind): fc.Arbitrary<{ kind: HostKind; host: string | null }> {
  const dresses = [(h: string) => h, (h: string) => h.toUpperCase(), (h: string) => `${h}:3000`, (h: string) => `${h}.`, (h: string) => ` ${h} `];
  return fc.tuple(fc.constantFrom(...hosts), fc.constantFrom(...dresses)).map(([h, dress]) => ({ kind, host: dress(h) }));
}

/** The host a route is served on: its service's hosts (any-host routes: either). */
function naturalHostOf(r: OpenApiRoute, ctx: FuzzContext): fc.Arbitrary<{ kind: HostKind; host: string | null }> {
  const gateway = knownHost(ctx.gatewayHosts.slice(0, 1), "gateway");
  const collections = knownHost(ctx.collectionsHosts, "collections");
  return r.hosts === "collections" ? collections : r.hosts === "gateway" ? gateway : fc.oneof(gateway, collections);
}

function hostOf(r: OpenApiRoute, ctx: FuzzContext): fc.Arbitrary<{ kind: HostKind; host: string | null }> {
  const gateway = knownHost(ctx.gatewayHosts, "gateway");
  const collections = knownHost(ctx.collectionsHosts, "collections");
  const natural = naturalHostOf(r, ctx);
  return fc.oneof(
    { arbitrary: natural, weight: 12 },
    { arbitrary: gateway, weight: 2 },
    { arbitrary: collections, weight: 2 },
    {
      arbitrary: fc
        .constantFrom("unknown.example", "user:pw@localhost", `${"h".repeat(300)}.example`, "local host", "[::1]", "evil.example@passthrough.demo.localhost", "localhost:abc", "")
        .map((host) => ({ kind: "unknown" as const, host })),
      weight: 2,
    },
    { arbitrary: fc.constant({ kind: "missing" as const, host: null }), weight: 1 },
  );
}

/** A header value that is not secret (identifiers, correlation ids): never the marker. */
const plainValue = fc.oneof(
  { arbitrary: fc.stringMatching(/^[\x21-\x7e]{0,40}$/).filter((v) => !v.includes(MARKER)), weight: 6 },
  { arbitrary: fc.string({ unit: "binary-ascii", maxLength: 30 }).map((s) => s.replace(/[\r\n]/g, "")), weight: 1 },
  { arbitrary: fc.integer({ min: 1_000, max: 12_000 }).map((n) => "v".repeat(n)), weight: 1 },
);
/** Any header value, the marker included. */
const headerValue = fc.oneof({ arbitrary: plainValue, weight: 4 }, { arbitrary: fc.constant(MARKER), weight: 1 });
/** Headers whose values are logged as identifiers or correlation metadata: plain values only. */
const LOGGED_HEADERS = new Set(["x-request-id", "x-sub-business-id", "x-attempt-number", "host"]);

function headersOf(r: OpenApiRoute, ctx: FuzzContext, wellFormed = false): fc.Arbitrary<Array<[string, string]>> {
  const credential = (() => {
    switch (r.auth) {
      case "apiKey":
        if (wellFormed) return fc.constant<[string, string]>(["x-api-key", ctx.apiKeys[0]!]);
        return fc.oneof(
          { arbitrary: fc.constantFrom(...ctx.apiKeys).map((k): [string, string] => ["x-api-key", k]), weight: 6 },
          { arbitrary: fc.constant<[string, string]>(["x-api-key", `gw_${MARKER}_bad`]), weight: 1 },
        );
      case "bearer":
        return fc.oneof(
          { arbitrary: fc.constantFrom(...ctx.bearerKeys).map((k): [string, string] => ["Authorization", `Bearer ${k}`]), weight: 6 },
          { arbitrary: fc.constantFrom<[string, string]>(["Authorization", `Bearer sk_test_${MARKER}`], ["Authorization", `Basic ${MARKER}`], ["Authorization", "Bearer"]), weight: 1 },
        );
      case "admin":
        return fc.oneof(
          { arbitrary: fc.constantFrom(...ctx.adminKeys).map((k): [string, string] => ["x-admin-api-key", k]), weight: 5 },
          { arbitrary: fc.constant<[string, string]>(["x-admin-api-key", `admin_${MARKER}`]), weight: 1 },
        );
      default:
        return fc.constant<[string, string]>(["Accept", "*/*"]);
    }
  })();
  const invoiceHeaders = fc.record({
    sub: fc.oneof({ arbitrary: fc.constant(ctx.subBusinessId), weight: 6 }, { arbitrary: plainValue, weight: 1 }),
    key: fc.oneof({ arbitrary: fc.stringMatching(/^[A-Za-z0-9]{12}$/).map((k) => `fz-${k}-${MARKER}`), weight: 6 }, { arbitrary: headerValue, weight: 1 }),
    attempt: fc.oneof({ arbitrary: fc.constantFrom("1", "2"), weight: 5 }, { arbitrary: fc.constantFrom("0", "-1", "1.5", "99999999999", "one"), weight: 1 }),
  });
  const contentType = fc.oneof(
    { arbitrary: fc.constant("application/json"), weight: 12 },
    { arbitrary: fc.constantFrom("application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "application/json\u0000"), weight: 2 },
  );
  const extra = fc.array(
    fc.tuple(
      fc.oneof(
        { arbitrary: fc.constantFrom("x-request-id", "x-wallet", "X-Sign-Fee", "mode", "x-business-state", "x-forwarded-for", "x-service-gateway-hop", "expect", "connection", "upgrade", "cookie", "x-custom"), weight: 4 },
        { arbitrary: fc.stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/), weight: 2 },
        { arbitrary: fc.constantFrom("Bad Name", "x:y", "\u00e9t\u00e9"), weight: 1 },
      ),
      fc.tuple(headerValue, plainValue),
    ).map(([name, [value, plain]]): [string, string] => [name, LOGGED_HEADERS.has(name.toLowerCase()) ? plain : value]),
    { maxLength: 4 },
  );
  if (wellFormed)
    return fc.tuple(credential, invoiceHeaders).map(([cred, inv]) => {
      const out: Array<[string, string]> = [cred];
      if (r.service === "gateway") out.push(["x-sub-business-id", inv.sub], ["x-idempotency-key", inv.key], ["x-attempt-number", inv.attempt]);
      else if (r.method !== "GET") out.push(["x-idempotency-key", inv.key]);
      if (r.method !== "GET") out.push(["Content-Type", r.template.startsWith("/pay/") ? "application/x-www-form-urlencoded" : "application/json"]);
      return out;
    });
  return fc.tuple(credential, invoiceHeaders, contentType, extra, fc.boolean()).map(([cred, inv, type, more, withInvoice]) => {
    const out: Array<[string, string]> = [cred];
    if (r.service === "gateway" && (withInvoice || r.template.includes("invoice"))) out.push(["x-sub-business-id", inv.sub], ["x-idempotency-key", inv.key], ["x-attempt-number", inv.attempt]);
    else if (r.method !== "GET") out.push(["x-idempotency-key", inv.key]);
    if (type !== "") out.push(["Content-Type", r.template.startsWith("/pay/") && r.method === "POST" && type === "application/json" ? "application/x-www-form-urlencoded" : type]);
    return [...out, ...more];
  });
}

/** JSON values that stress parsers and validators. */
const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.jsonValue({ maxDepth: 4 }), weight: 5 },
  { arbitrary: fc.constantFrom(1e308, -0, 9007199254740993, 1e-320, Number.MAX_SAFE_INTEGER + 2, "", "\u0000\u001f\u007f\u2028", MARKER), weight: 2 },
  { arbitrary: fc.dictionary(fc.constantFrom("__proto__", "constructor", "prototype", "toString", "hasOwnProperty"), fc.jsonValue({ maxDepth: 2 }), { minKeys: 1 }), weight: 2 },
  { arbitrary: fc.constantFrom({ mode: "stored" }, { wallet: "w" }, { fee: 0, signFee: "0.00" }, { regulatorCredentials: { email: "a@b.ng", password: MARKER } }), weight: 1 },
);

function bodyOf(r: OpenApiRoute, ctx: FuzzContext): fc.Arbitrary<string | null> {
  const plausible = fc.integer({ min: 1, max: 1_000_000_000 }).map((n) => ctx.plausibleBody(r, n));
  const mutated = fc.tuple(plausible, fc.constantFrom("deep", "wide", "field", "type", "proto", "none"), hostileJson).map(([doc, how, value]) => {
    if (typeof doc !== "object" || doc === null) return JSON.stringify(value);
    const copy = structuredClone(doc) as Record<string, unknown>;
    const keys = Object.keys(copy);
    switch (how) {
      case "deep":
        return JSON.stringify({ ...copy, nested: "D" }).replace('"D"', "[".repeat(70 + (keys.length % 5) * 1_000) + "1" + "]".repeat(70 + (keys.length % 5) * 1_000));
      case "wide":
        return JSON.stringify({ ...copy, extra: Object.fromEntries(Array.from({ length: 1_001 }, (_, i) => [`k${i}`, i])) });
      case "field":
        return JSON.stringify({ ...copy, [keys[0] ?? "x"]: value });
      case "type":
        if (keys[1]) copy[keys[1]] = value;
        return JSON.stringify(copy);
      case "proto":
        return JSON.stringify(copy).replace(/^\{/, '{"__proto__":{"polluted":true},');
      default:
        return JSON.stringify(copy);
    }
  });
  return fc.oneof(
    { arbitrary: fc.constant(null), weight: r.method === "GET" ? 10 : 2 },
    { arbitrary: plausible.map((d) => (d === null ? null : typeof d === "string" ? d : JSON.stringify(d))), weight: 6 },
    { arbitrary: mutated, weight: 5 },
    { arbitrary: hostileJson.map((v) => JSON.stringify(v) ?? "null"), weight: 3 },
    { arbitrary: fc.constantFrom("{", "{\"a\":", "[1,]", "nul", "\u00ff\u00fe", "a=b&c=d", "{\"a\":\"\\ud800\"}", " "), weight: 1 },
  );
}

// ---------------------------------------------------------------------------
// The demo deployment as a fuzz target
// ---------------------------------------------------------------------------

export interface OpenApiDocument {
  paths: Record<string, Record<string, { "x-gatehouse": Record<string, string>; security?: Array<Record<string, unknown>> }>>;
}

/** Every route of a gateway's /openapi.json (bench/edge-memory.ts; the fuzz suite takes the route table: identifiers.ts). */
export function routesOf(openapi: OpenApiDocument): OpenApiRoute[] {
  return Object.entries(openapi.paths).flatMap(([template, ops]) =>
    Object.entries(ops).map(([method, op]) => {
      const scheme = Object.keys(op.security?.[0] ?? {})[0];
      return {
        method: method.toUpperCase(),
        template,
        service: op["x-gatehouse"].service as OpenApiRoute["service"],
        hosts: op["x-gatehouse"].hosts as OpenApiRoute["hosts"],
        auth: scheme === "apiKey" ? "apiKey" : scheme === "bearer" ? "bearer" : scheme === "adminKey" ? "admin" : "none",
      } satisfies OpenApiRoute;
    }),
  );
}

/** The demo config's hosts and keys, with `subBusinessId` onboarded for the demo business. */
export function demoFuzzContext(routes: readonly OpenApiRoute[], subBusinessId: string, identifiers: Readonly<Record<string, readonly string[]>> = {}): FuzzContext {
  return {
    routes,
    gatewayHosts: [PASSTHROUGH, STORED, OTHER],
    collectionsHosts: ["localhost", "127.0.0.1"],
    apiKeys: [DEMO_KEY, OTHER_KEY],
    bearerKeys: [BEARER_DEMO, BEARER_OTHER],
    adminKeys: [ADMIN_KEY],
    subBusinessId,
    identifiers,
    plausibleBody,
  };
}

/** A document the route's handler accepts (fresh references each time), so cases reach the handlers. */
function plausibleBody(r: OpenApiRoute, n: number): unknown {
  const ref = `fz-${n}`;
  switch (`${r.method} ${r.template}`) {
    case "POST /api/v1/invoice/sign":
    case "POST /api/v1/invoice/validate":
      return invoice(`FZ${n}`);
    case "POST /api/v1/invoice/irn/validate":
      return { invoice_reference: `FZ${n}`, business_id: invoice("X").business_id, irn: `FZ${n}-94ND90NR-20240611` };
    case "PATCH /api/v1/invoice/update/{irn}":
      return { payment_status: n % 2 ? "PAID" : "REJECTED" };
    case "POST /api/v1/invoice/transmit/{irn}":
    case "POST /api/v1/customers/{id}/virtual-account":
      return {};
    case "POST /sub-businesses":
    case "POST /sub-businesses/{gatewaySubBusinessId}/identity-reverification":
      return { regulatorCredentials: { email: "taxpayer@demo.ng", password: "demo-password-1" } };
    case "POST /sub-businesses/{gatewaySubBusinessId}/reg-crypto-material":
      return { publicKey: Buffer.from(`pk-${n}`).toString("base64"), certificate: Buffer.from(`cert-${n}`).toString("base64") };
    case "POST /admin/sub-businesses/{gatewaySubBusinessId}/identity-reviews/{reviewId}/decision":
      return { decision: n % 2 ? "approve" : "reject" };
    case "POST /admin/sub-businesses/{gatewaySubBusinessId}/identity-migrations":
      return { reviewId: "00000000-0000-4000-8000-000000000000" };
    case "POST /admin/wallets/{businessId}/credits":
      return { amount: (n % 1000) + 1, reference: ref };
    case "POST /api/v1/payment-link":
      return { link_name: `Fuzz ${n}`, narration: "Order", fee_bearer: n % 2 ? "MERCHANT" : "CUSTOMER", source_reference: ref, amount: 100 + (n % 5000), redirect_link: "https://shop.example.com/thanks" };
    case "POST /api/v1/payment-link/toggle-status":
      return { link_id: ref, activate: n % 2 === 0 };
    case "POST /api/v1/virtual-account":
      return { account_type: "multi_use", account_name: `Fuzz ${n}`, source_reference: ref };
    case "POST /api/v1/virtual-account/toggle-status":
      return { reference: ref, activate: n % 2 === 0 };
    case "POST /api/v1/customers":
      return { first_name: "Ada", last_name: "Fuzz", email: `ada${n}@example.com`, phone: "+2348012345678", has_wallet: n % 2 === 0 };
    case "POST /api/v1/sandbox/virtual-account/deposit":
      return { account_number: "0000000000", amount: 1000, sender_name: "Payer", sender_account_number: "1234567890", sender_bank: "Bank" };
    case "POST /pay/{reference}":
      return new URLSearchParams({ email: `payer${n}@example.com`, amount: "150", outcome: "success" }).toString();
    default:
      return r.method === "GET" ? null : {};
  }
}
