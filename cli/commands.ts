/**
 * The CLI's commands over the Admin API: each turns its arguments and flags into one request, and
 * says how a person reads the answer (a table's columns, or one record's fields).
 */

export interface Flags {
  help?: boolean;
  /** The config file of the local storage commands (backup, restore, import). */
  config?: string;
  json?: boolean;
  url?: string;
  "admin-key"?: string;
  "edge-secret"?: string;
  "edge-header"?: string;
  "idempotency-key"?: string;
  timeout?: string;
  business?: string;
  scheme?: string;
  status?: string;
  approval?: string;
  id?: string;
  ip?: string[];
  "expires-at"?: string;
  "old-expires-at"?: string;
  "old-expires-in"?: string;
  mode?: string;
  "sign-fee"?: string;
  "auto-transmit"?: string;
  amount?: string;
  reference?: string;
  decision?: string;
  target?: string;
  action?: string;
  outcome?: string;
  limit?: string;
  cursor?: string;
  /** The regulator simulator `demo reset` clears (default 127.0.0.1:$REGULATOR_SIM_PORT, else :3100). */
  "sim-url"?: string;
}

export interface ApiRequest {
  method: "GET" | "POST" | "PATCH";
  path: string;
  body?: unknown;
}

/** How a person sees the answer: a list as a table, or one record as fields. */
export type View =
  | { kind: "table"; columns: readonly string[]; rows?: (body: any) => readonly Record<string, unknown>[] }
  | { kind: "record"; pick?: (body: any) => Record<string, unknown> };

export interface Command {
  group: string;
  action: string;
  /** Positional arguments after the action. */
  args: readonly string[];
  summary: string;
  /** Flags, for the help text. */
  flags?: string;
  request(args: string[], flags: Flags): ApiRequest;
  view: View;
}

const KEY_COLUMNS = ["id", "scheme", "businessId", "status", "hint", "expiresAt", "rolledTo", "source"] as const;
const DOMAIN_COLUMNS = ["host", "businessId", "mode", "modeVersion", "approval", "pendingMode", "signFee", "autoTransmit"] as const;

export const COMMANDS: readonly Command[] = [
  {
    group: "businesses",
    action: "list",
    args: [],
    summary: "list businesses",
    request: (_a, f) => ({ method: "GET", path: "/admin/businesses" + _query({ limit: f.limit, cursor: f.cursor }) }),
    view: { kind: "table", columns: ["id", "name", "state", "invoiceGateway"] },
  },
  {
    group: "keys",
    action: "list",
    args: [],
    summary: "list API keys (ids and hints, never values)",
    flags: "[--business ID] [--scheme gateway|collections|operator] [--status active|revoked|expired]",
    request: (_a, f) => ({
      method: "GET",
      path: "/admin/keys" + _query({ businessId: f.business, scheme: f.scheme, status: f.status, limit: f.limit, cursor: f.cursor }),
    }),
    view: { kind: "table", columns: KEY_COLUMNS },
  },
  {
    group: "keys",
    action: "create",
    args: [],
    summary: "create an API key; its value is shown once",
    flags: "--scheme gateway|collections|operator [--business ID] [--id KEY_ID] [--ip ADDRESS_OR_CIDR]… [--expires-at ISO]",
    request: (_a, f) => ({
      method: "POST",
      path: "/admin/keys",
      body: _defined({ scheme: _required(f.scheme, "--scheme"), businessId: f.business, id: f.id, ipWhitelisted: f.ip, expiresAt: f["expires-at"] }),
    }),
    view: { kind: "record", pick: (b) => ({ ...b.key, plainKey: b.plainKey }) },
  },
  {
    group: "keys",
    action: "roll",
    args: ["KEY_ID"],
    summary: "roll a key: a new key now, the old one valid until a time",
    flags: "(--old-expires-in 24h|90m|7d|now | --old-expires-at ISO)",
    request: ([id], f) => ({ method: "POST", path: `/admin/keys/${encodeURIComponent(id!)}/roll`, body: { oldKeyExpiresAt: _oldKeyDeadline(f) } }),
    view: { kind: "record", pick: (b) => ({ ...b.key, oldKeyExpiresAt: b.previous?.expiresAt, plainKey: b.plainKey }) },
  },
  {
    group: "keys",
    action: "revoke",
    args: ["KEY_ID"],
    summary: "revoke a key (refused by every process from the next request)",
    request: ([id]) => ({ method: "POST", path: `/admin/keys/${encodeURIComponent(id!)}/revoke`, body: {} }),
    view: { kind: "record", pick: (b) => b.key },
  },
  {
    group: "domains",
    action: "list",
    args: [],
    summary: "list domains",
    flags: "[--business ID] [--approval approved|draining|pending_approval]",
    request: (_a, f) => ({ method: "GET", path: "/admin/domains" + _query({ businessId: f.business, approval: f.approval, limit: f.limit, cursor: f.cursor }) }),
    view: { kind: "table", columns: DOMAIN_COLUMNS },
  },
  {
    group: "domains",
    action: "show",
    args: ["HOST"],
    summary: "show one domain",
    request: ([host]) => ({ method: "GET", path: `/admin/domains/${encodeURIComponent(host!)}` }),
    view: { kind: "record" },
  },
  {
    group: "domains",
    action: "set",
    args: ["HOST"],
    summary: "set a domain's sign fee (NGN) and autoTransmit",
    flags: "[--sign-fee 50.00] [--auto-transmit true|false]",
    request: ([host], f) => ({
      method: "PATCH",
      path: `/admin/domains/${encodeURIComponent(host!)}`,
      body: _defined({ signFee: f["sign-fee"] === undefined ? undefined : _number(f["sign-fee"], "--sign-fee"), autoTransmit: _bool(f["auto-transmit"]) }),
    }),
    view: { kind: "record" },
  },
  {
    group: "domains",
    action: "mode-change",
    args: ["HOST"],
    summary: "start a mode change: the domain drains until approved",
    flags: "--mode passthrough|stored",
    request: ([host], f) => ({ method: "POST", path: `/admin/domains/${encodeURIComponent(host!)}/mode-change`, body: { mode: _required(f.mode, "--mode") } }),
    view: { kind: "record" },
  },
  {
    group: "domains",
    action: "approve",
    args: ["HOST"],
    summary: "approve a domain in its new mode (modeVersion + 1)",
    request: ([host]) => ({ method: "POST", path: `/admin/domains/${encodeURIComponent(host!)}/approval`, body: {} }),
    view: { kind: "record" },
  },
  {
    group: "wallet",
    action: "show",
    args: ["BUSINESS_ID"],
    summary: "a business's invoice-gateway wallet and its latest entries",
    request: ([id], f) => ({ method: "GET", path: `/admin/wallets/${encodeURIComponent(id!)}` + _query({ limit: f.limit }) }),
    view: {
      kind: "table",
      columns: ["id", "type", "amount", "reference", "createdAt"],
      rows: (b) => b.entries,
    },
  },
  {
    group: "wallet",
    action: "credit",
    args: ["BUSINESS_ID"],
    summary: "top up a wallet (idempotent on --reference)",
    flags: "--amount 5000.00 --reference REF",
    request: ([id], f) => ({
      method: "POST",
      path: `/admin/wallets/${encodeURIComponent(id!)}/credits`,
      body: { amount: _number(_required(f.amount, "--amount"), "--amount"), reference: _required(f.reference, "--reference") },
    }),
    view: { kind: "record", pick: (b) => ({ businessId: b.businessId, balance: b.balance, currency: b.currency, ...b.credit }) },
  },
  {
    group: "reviews",
    action: "list",
    args: [],
    summary: "identity reviews (pending by default)",
    flags: "[--status pending|approved|rejected|migrated] [--business ID]",
    request: (_a, f) => ({ method: "GET", path: "/admin/identity-reviews" + _query({ status: f.status, businessId: f.business, limit: f.limit, cursor: f.cursor }) }),
    view: { kind: "table", columns: ["reviewId", "gatewaySubBusinessId", "businessId", "status", "driftClass", "changedFields", "requiresProtectedMigration", "createdAt"] },
  },
  {
    group: "reviews",
    action: "decide",
    args: ["SUB_BUSINESS_ID", "REVIEW_ID"],
    summary: "approve or reject an identity review",
    flags: "--decision approve|reject",
    request: ([sub, review], f) => ({
      method: "POST",
      path: `/admin/sub-businesses/${encodeURIComponent(sub!)}/identity-reviews/${encodeURIComponent(review!)}/decision`,
      body: { decision: _required(f.decision, "--decision") },
    }),
    view: { kind: "record", pick: (b) => ({ ...b.review, identityVersion: b.subBusiness?.identityVersion }) },
  },
  {
    group: "invoices",
    action: "frozen",
    args: [],
    summary: "frozen invoice operations (outcome unprovable; resolve by hand)",
    flags: "[--business ID]",
    request: (_a, f) => ({ method: "GET", path: "/admin/invoices/frozen" + _query({ businessId: f.business, limit: f.limit, cursor: f.cursor }) }),
    view: { kind: "table", columns: ["frozenAt", "kind", "operationId", "invoiceId", "businessId", "irn", "attemptNumber", "money", "code"] },
  },
  {
    group: "invoices",
    action: "resolve",
    args: ["INVOICE_ID"],
    summary: "resolve a frozen Stored invoice after checking the regulator",
    flags: "--outcome signed|not_signed|transmitted|not_transmitted",
    request: ([id], f) => ({ method: "POST", path: `/admin/invoices/${encodeURIComponent(id!)}/resolution`, body: { outcome: _required(f.outcome, "--outcome") } }),
    view: { kind: "record", pick: (b) => ({ invoiceId: b.invoiceId, businessId: b.businessId, status: b.status, irn: b.irn, resolution: b.resolution ? `${b.resolution.outcome} by ${b.resolution.by}` : null }) },
  },
  {
    group: "sign-attempts",
    action: "resolve",
    args: ["OPERATION_ID"],
    summary: "settle a held Pass-through sign attempt after checking the regulator",
    flags: "--outcome signed|not_signed",
    request: ([id], f) => ({ method: "POST", path: `/admin/sign-attempts/${encodeURIComponent(id!)}/resolution`, body: { outcome: _required(f.outcome, "--outcome") } }),
    view: { kind: "record", pick: (b) => ({ operationId: b.operationId, businessId: b.businessId, status: b.status, money: b.money, resolution: b.resolution ? `${b.resolution.outcome} by ${b.resolution.by}` : null }) },
  },
  {
    group: "transmissions",
    action: "resolve",
    args: ["OPERATION_ID"],
    summary: "record what happened to a Pass-through transmission whose outcome is unknown",
    flags: "--outcome transmitted|not_transmitted",
    request: ([id], f) => ({ method: "POST", path: `/admin/transmissions/${encodeURIComponent(id!)}/resolution`, body: { outcome: _required(f.outcome, "--outcome") } }),
    view: { kind: "record", pick: (b) => ({ operationId: b.operationId, businessId: b.businessId, claimState: b.claimState, resolution: `${b.resolution.outcome} by ${b.resolution.by}` }) },
  },
  {
    group: "alerts",
    action: "dead-letters",
    args: [],
    summary: "alerts whose chat delivery was exhausted, newest first",
    flags: "[--status dead|replayed]",
    request: (_a, f) => ({ method: "GET", path: "/admin/alerts/dead-letters" + _query({ status: f.status, limit: f.limit, cursor: f.cursor }) }),
    view: {
      kind: "table",
      columns: ["id", "status", "signal", "dependency", "operation", "attempts", "failure", "deadAt"],
      rows: (b) => b.data.map((l: any) => ({ ...l, signal: l.alert.signal, dependency: l.alert.dependency, operation: l.alert.operation, failure: l.lastFailure.failureClass })),
    },
  },
  {
    group: "alerts",
    action: "replay",
    args: ["ALERT_ID"],
    summary: "deliver a dead-lettered alert again (one attempt)",
    request: ([id]) => ({ method: "POST", path: `/admin/alerts/dead-letters/${encodeURIComponent(id!)}/replay`, body: {} }),
    view: { kind: "record", pick: (b) => ({ delivered: b.delivered, id: b.letter.id, status: b.letter.status, signal: b.letter.alert.signal, replayedAt: b.letter.replayedAt }) },
  },
  {
    group: "demo",
    action: "reset",
    args: [],
    summary: "demo only: keys, domain modes, fees and autoTransmit back to the demo config; clears the simulator's faults",
    flags: "[--sim-url URL]",
    request: () => ({ method: "POST", path: "/admin/demo/reset", body: {} }),
    view: { kind: "record" },
  },
  {
    group: "audit",
    action: "list",
    args: [],
    summary: "the directory's audit log, newest first",
    flags: "[--target ID] [--action key.revoke]",
    request: (_a, f) => ({ method: "GET", path: "/admin/audit" + _query({ targetId: f.target, action: f.action, limit: f.limit, cursor: f.cursor }) }),
    view: {
      kind: "table",
      columns: ["at", "actor", "action", "target", "changes"],
      rows: (b) => b.data.map((a: any) => ({ ...a, target: `${a.target.type} ${a.target.id}` })),
    },
  },
];

// --- Internal helpers ---

function _query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

function _defined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function _required(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new Error(`${flag} is required`);
  return value;
}

function _number(value: string, flag: string): number {
  const n = Number(value.replaceAll(",", ""));
  if (!Number.isFinite(n)) throw new Error(`${flag} must be a number`);
  return n;
}

function _bool(value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "true" || value === "false") return value === "true";
  throw new Error("--auto-transmit must be true or false");
}

/** --old-expires-at ISO, or --old-expires-in now|90s|30m|24h|7d → an ISO time. */
function _oldKeyDeadline(f: Flags): string {
  if (f["old-expires-at"] !== undefined) return f["old-expires-at"];
  const span = _required(f["old-expires-in"], "--old-expires-in or --old-expires-at");
  if (span === "now") return new Date().toISOString();
  const m = /^(\d+)(s|m|h|d)$/.exec(span);
  if (!m) throw new Error("--old-expires-in takes now, or a number with s, m, h or d (24h)");
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
  return new Date(Date.now() + Number(m[1]) * unit).toISOString();
}
