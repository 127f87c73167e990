/**
 * Shared set-up of the collections tests: a gateway composed as production composes it, with the
 * collections plugin on a controllable clock and the real ports — the document-store webhook
 * outbox, the folder e-mail sender and the sandbox payment processor — plus a webhook receiver
 * over real HTTP for the business that configures an endpoint.
 */
import { readdirSync, readFileSync } from "node:fs";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createSqliteDocumentStore } from "../../../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore } from "../../../../adapters/ports.ts";
import { createFolderEmailSender, type FolderEmailSender } from "../../../../adapters/email/folder.ts";
import { createSandboxPaymentProcessor, type SandboxPaymentProcessor } from "../../../../adapters/payments/sandbox.ts";
import { createWebhookOutbox, type DocumentStoreWebhookOutbox, type WebhookRecord } from "../../../../adapters/webhooks/outbox.ts";
import { verifyWebhook } from "../../../../client/webhooks.ts";
import { createCollectionsPlugin, type CollectionsPluginOptions } from "../../../../plugins/collections/plugin.ts";
import { health } from "../../../../plugins/health/plugin.ts";
import { BEARER_DEMO, DEMO_RAW, startTestGateway, type TestGateway } from "../../../support/gateway.ts";
import { tempDir } from "../../../support/temp.ts";

export { BEARER_DEMO, BEARER_OTHER } from "../../../support/gateway.ts";
export const BEARER_HOOKED = "sk_test_hooked_0001";
export const BEARER_LIVE = "sk_live_shop_0001";
export const HOOK_SECRET = `whsec_${Buffer.from("collections-test-signing-key-0001").toString("base64")}`;
export const HOST = "localhost";
export const MINUTE = 60_000;

export interface Clock {
  now: () => number;
  advance(ms: number): void;
  set(ms: number): void;
}

export function createClock(start = Date.now()): Clock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}

export interface Receiver {
  url: string;
  received: Array<{ headers: Record<string, string>; body: string; valid: boolean }>;
  close(): Promise<void>;
}

/** A webhook endpoint that records each delivery and whether its signature verifies. */
export async function startReceiver(): Promise<Receiver> {
  const received: Receiver["received"] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
      received.push({ headers, body, valid: verifyWebhook(HOOK_SECRET, headers, body) });
      res.writeHead(204).end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

export interface CollectionsHarness {
  tg: TestGateway;
  clock: Clock;
  store: DocumentStore;
  outbox: DocumentStoreWebhookOutbox;
  payments: SandboxPaymentProcessor;
  email: FolderEmailSender;
  mailDir: string;
  /** Bearer API call on the collections host; objects are sent as JSON. */
  api(path: string, init?: { method?: string; body?: unknown; key?: string | null; headers?: Record<string, string> }): Promise<Response>;
  /** Public page call on the collections host. */
  page(path: string, init?: { method?: string; form?: Record<string, string> }): Promise<Response>;
  /** Creates a link for the business of `key` (default demo) and answers its `data`. */
  createLink(body: Record<string, unknown>, key?: string): Promise<LinkData>;
  /** Opens the checkout page and submits its form with `fields` (the page's token included). */
  pay(reference: string, fields: Record<string, string>): Promise<Response>;
  /** Webhook messages of a business, oldest first. */
  webhooks(businessId: string): Promise<WebhookRecord[]>;
  /** E-mails written so far (raw .eml text). */
  mails(): string[];
  close(): Promise<void>;
}

export interface LinkData {
  id: string;
  reference: string;
  sourceReference: string;
  linkName: string;
  linkUrl: string;
  amount: number | null;
  currency: string;
  status: string;
  [k: string]: unknown;
}

export interface HarnessOptions extends CollectionsPluginOptions {
  delayReportMs?: number;
  /** A webhook endpoint for business "hooked". */
  webhookUrl?: string;
  /** Extra config patch (merged after the test defaults). */
  patch?: Record<string, unknown>;
  /** E-mail folder (default: a fresh temporary folder). */
  mailDir?: string;
  /** The document store (default: SQLite in memory on the harness clock). */
  store?: (clock: () => number) => Promise<DocumentStore>;
}

let sourceCounter = 0;
/** A fresh source_reference. */
export function sourceRef(prefix = "src"): string {
  sourceCounter++;
  return `${prefix}-${process.pid}-${sourceCounter}`;
}

export async function startCollections(options: HarnessOptions = {}): Promise<CollectionsHarness> {
  const clock = createClock();
  const store = options.store ? await options.store(clock.now) : await createSqliteDocumentStore({ file: ":memory:", clock: clock.now });
  const outbox = createWebhookOutbox({ store, clock: clock.now, schedule: [1000], timeoutMs: 2000 });
  const mailDir = options.mailDir ?? tempDir("mail");
  const email = createFolderEmailSender({ dir: mailDir, clock: clock.now });
  const payments = createSandboxPaymentProcessor({ clock: clock.now, delayReportMs: options.delayReportMs ?? 0 });
  const plugin = createCollectionsPlugin({
    clock: options.clock ?? clock.now,
    payTimeoutMs: options.payTimeoutMs,
    sweepIntervalMs: options.sweepIntervalMs ?? 3_600_000,
  });

  const businesses = structuredClone(DEMO_RAW.businesses) as Array<Record<string, unknown>>;
  businesses.push({
    id: "hooked",
    name: "Hooked Goods & Sons <Ltd>",
    state: "TEST",
    collections: {
      apiKeys: [{ id: "hooked-collections", key: BEARER_HOOKED, demoOnly: true }],
      feeBearerDefault: "CUSTOMER",
      ...(options.webhookUrl ? { webhook: { url: options.webhookUrl, secret: HOOK_SECRET } } : {}),
    },
  });
  businesses.push({
    id: "live-shop",
    name: "Live Shop Ltd",
    state: "LIVE",
    collections: { apiKeys: [{ id: "live-collections", key: BEARER_LIVE, demoOnly: true }] },
  });
  const tg = await startTestGateway({
    plugins: [health, plugin],
    patch: {
      businesses,
      server: { publicBaseUrl: "https://pay.example.test" },
      limits: { quotas: { default: { limit: 1_000_000, windowSeconds: 60 } }, admission: { perClient: 1_000_000 } },
      ...options.patch,
    },
    ports: { documentStore: store, webhooks: outbox, email, payments },
  });

  const api: CollectionsHarness["api"] = (path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? BEARER_DEMO : init.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    return tg.call(path, { method: init.method ?? (init.body === undefined ? "GET" : "POST"), host: HOST, headers, body: init.body });
  };
  const page: CollectionsHarness["page"] = (path, init = {}) => {
    if (!init.form) return tg.call(path, { method: init.method ?? "GET", host: HOST });
    return tg.call(path, {
      method: init.method ?? "POST",
      host: HOST,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(init.form).toString(),
    });
  };

  return {
    tg,
    clock,
    store,
    outbox,
    payments,
    email,
    mailDir,
    api,
    page,
    async createLink(body, key) {
      const res = await api("/api/v1/payment-link", { body: { fee_bearer: "MERCHANT", narration: "Order", source_reference: sourceRef(), ...body }, key });
      const json = (await res.json()) as { data: LinkData; errors?: unknown };
      if (res.status !== 201) throw new Error(`create failed: ${res.status} ${JSON.stringify(json)}`);
      return json.data;
    },
    async pay(reference, fields) {
      const form = await page(`/pay/${reference}`);
      const html = await form.text();
      const token = /name="checkout_token" value="([^"]+)"/.exec(html)?.[1] ?? "";
      return page(`/pay/${reference}`, { form: { checkout_token: token, ...fields } });
    },
    async webhooks(businessId) {
      return (await outbox.list({ businessId, limit: 1000 })).sort((a, b) => a.createdAt - b.createdAt || (a.webhookId < b.webhookId ? -1 : 1));
    },
    mails() {
      try {
        return readdirSync(mailDir)
          .filter((f) => f.endsWith(".eml"))
          .sort()
          .map((f) => readFileSync(join(mailDir, f), "utf8"));
      } catch {
        return [];
      }
    },
    async close() {
      await tg.close();
      payments.dispose();
    },
  };
}

/** The `data` of an envelope response. */
export async function dataOf<T = Record<string, unknown>>(res: Response): Promise<T> {
  return ((await res.json()) as { data: T }).data;
}

/** Waits until `check` is true (polling), or fails after `ms`. */
export async function eventually(check: () => boolean | Promise<boolean>, ms = 3_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
