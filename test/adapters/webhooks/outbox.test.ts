import { createHopMarker } from "../../../core/http/hop.ts";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMongoDocumentStore } from "../../../adapters/document-store/mongodb.ts";
import { createSqliteDocumentStore } from "../../../adapters/document-store/sqlite/store.ts";
import type { DocumentStore, WebhookMessage } from "../../../adapters/ports.ts";
import { DEFAULT_WEBHOOK_SCHEDULE, createWebhookOutbox, type WebhookOutboxOptions } from "../../../adapters/webhooks/outbox.ts";
import { verifyWebhook } from "../../../client/webhooks.ts";
import { createLogger, type LogFields } from "../../../core/log.ts";
import { isMongoSkip, startMongoServer } from "../../support/mongo-server.ts";

const SECRET = `whsec_${Buffer.from("merchant-signing-key-0123456789ab").toString("base64")}`;
const PAYLOAD_MARKER = "PAYLOAD-MARKER-7f3a9c";
const IDEM_MARKER = "idem-marker-55e1";
/** Every log record of every test, scanned at the end for leaks. */
const allLogs: LogFields[] = [];

// --- helpers ---

interface Received {
  id: string;
  timestamp: string;
  valid: boolean;
  body: string;
  contentType: string;
  hop: string | undefined;
}

type Reply = number | "hang";

interface Receiver {
  url: string;
  received: Received[];
  /** Replies for the next requests, in order; afterwards 200. */
  replies: Reply[];
  /** Resolves once `n` requests have arrived. */
  waitFor(n: number): Promise<void>;
  /** Milliseconds each answer is held back (to make concurrent deliveries overlap). */
  delayMs: number;
  close(): Promise<void>;
}

async function startReceiver(clock: () => number): Promise<Receiver> {
  const received: Received[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const hung: ServerResponse[] = [];
  const r: Receiver = {
    url: "",
    received,
    replies: [],
    delayMs: 0,
    waitFor: (n) => (received.length >= n ? Promise.resolve() : new Promise((resolve) => waiters.push({ n, resolve }))),
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      received.push({
        id: String(req.headers["webhook-id"]),
        timestamp: String(req.headers["webhook-timestamp"]),
        valid: verifyWebhook(SECRET, req.headers, body, { now: clock() }),
        body,
        contentType: String(req.headers["content-type"]),
        hop: req.headers["x-service-gateway-hop"] as string | undefined,
      });
      for (const w of waiters.filter((w) => received.length >= w.n)) w.resolve();
      const reply = r.replies.shift() ?? 200;
      if (reply === "hang") {
        hung.push(res);
        return;
      }
      const answer = (): void => {
        res.writeHead(reply, { "content-type": "text/plain" });
        res.end(`receiver says ${reply}: RESPONSE-BODY-MARKER`);
      };
      if (r.delayMs > 0) setTimeout(answer, r.delayMs);
      else answer();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks?token=abc`;
  return r;
}

async function closedPortUrl(): Promise<string> {
  const s = createServer();
  s.listen(0, "127.0.0.1");
  await once(s, "listening");
  const port = (s.address() as AddressInfo).port;
  s.close();
  await once(s, "close");
  return `http://127.0.0.1:${port}/hooks`;
}

interface Setup {
  store: DocumentStore;
  clock: () => number;
  advance(ms: number): void;
  logs: LogFields[];
  outbox(extra?: Partial<WebhookOutboxOptions>): ReturnType<typeof createWebhookOutbox>;
  receiver: Receiver;
  cleanup(): Promise<void>;
}

async function setup(): Promise<Setup> {
  let now = Date.UTC(2025, 0, 15, 12, 0, 0);
  const clock = (): number => now;
  const store = await createSqliteDocumentStore({ file: ":memory:", clock });
  const logs: LogFields[] = [];
  const log = createLogger({
    level: "debug",
    sink: (rec) => {
      logs.push(rec);
      allLogs.push(rec);
    },
  });
  const receiver = await startReceiver(clock);
  const made: Array<ReturnType<typeof createWebhookOutbox>> = [];
  return {
    store,
    clock,
    advance: (ms) => {
      now += ms;
    },
    logs,
    receiver,
    outbox: (extra = {}) => {
      const o = createWebhookOutbox({ store, log, clock, schedule: [1000, 2000, 4000], timeoutMs: 2000, ...extra });
      made.push(o);
      return o;
    },
    cleanup: async () => {
      for (const o of made) await o.worker.stop();
      await receiver.close();
      await store.close();
    },
  };
}

function message(n: number | string, businessId = "biz_1"): WebhookMessage {
  return {
    businessId,
    eventType: "CHECKOUT_COMPLETED",
    payload: { event_type: "CHECKOUT_COMPLETED", data: { reference: `ref-${n}`, amount: 1500, note: `${PAYLOAD_MARKER} ₦` } },
    idempotencyKey: `${IDEM_MARKER}-${n}`,
  };
}

async function rejects(fn: () => Promise<unknown>, what: string): Promise<void> {
  try {
    await fn();
  } catch {
    return;
  }
  assert.unreachable(`${what} should have been rejected`);
}

// --- tests ---

test("default schedule: 30 s doubling, capped at 1 h, within 24 h", () => {
  assert.is(DEFAULT_WEBHOOK_SCHEDULE[0], 30_000);
  assert.is(DEFAULT_WEBHOOK_SCHEDULE[1], 60_000);
  assert.is(DEFAULT_WEBHOOK_SCHEDULE[6], 32 * 60_000);
  assert.ok(DEFAULT_WEBHOOK_SCHEDULE.every((d) => d <= 3_600_000));
  assert.is(DEFAULT_WEBHOOK_SCHEDULE[7], 3_600_000);
  const total = DEFAULT_WEBHOOK_SCHEDULE.reduce((a, b) => a + b, 0);
  assert.ok(total <= 24 * 3_600_000);
  assert.ok(total + 3_600_000 > 24 * 3_600_000, "one more hourly retry would pass 24 h");
  assert.is(DEFAULT_WEBHOOK_SCHEDULE.length, 29);
});

test("delivers the stored body once with valid Standard Webhooks headers", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    const msg = message(1);
    const { webhookId, created } = await outbox.enqueue(msg, { url: s.receiver.url, secret: SECRET });
    assert.ok(created);
    assert.match(webhookId, /^msg_[0-9a-f]{24}$/);
    const pending = await outbox.get(webhookId);
    assert.is(pending?.status, "pending");
    assert.is(pending?.body, JSON.stringify(msg.payload));

    assert.is(await outbox.deliverDue(), 1);
    assert.is(s.receiver.received.length, 1);
    const got = s.receiver.received[0]!;
    assert.is(got.id, webhookId);
    assert.ok(got.valid, "signature verifies");
    assert.is(got.body, JSON.stringify(msg.payload));
    assert.is(got.contentType, "application/json");
    assert.is(got.timestamp, String(Math.floor(s.clock() / 1000)));

    const rec = await outbox.get(webhookId);
    assert.is(rec?.status, "delivered");
    assert.is(rec?.attempts, 1);
    assert.is(rec?.deliveredAt, s.clock());
    assert.is(rec?.lastStatusCode, 200);
    assert.is(rec?.lastError, null);
    assert.not.ok("secret" in (rec as object), "records never expose the secret");

    assert.is(await outbox.deliverDue(), 0, "nothing left to deliver");
    assert.is(s.receiver.received.length, 1);
  } finally {
    await s.cleanup();
  }
});

test("with the deployment's hop markers, every attempt carries the marker for its endpoint's host", async () => {
  const s = await setup();
  try {
    const markers = createHopMarker("deployment-secret", s.clock);
    const outbox = s.outbox({ hopMarker: markers });
    await outbox.enqueue(message(1), { url: s.receiver.url, secret: SECRET });
    assert.is(await outbox.deliverDue(), 1);
    const hop = s.receiver.received[0]!.hop!;
    assert.ok(markers.isOwn(hop, new URL(s.receiver.url).host), "the deployment's own marker, bound to the receiver's host");
    assert.not.ok(markers.isOwn(hop, "passthrough.demo.localhost"), "worth nothing on any other host");
  } finally {
    await s.cleanup();
  }
});

test("a duplicate enqueue stores one message and delivers once", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    const ep = { url: s.receiver.url, secret: SECRET };
    const first = await outbox.enqueue(message(2), ep);
    const again = await outbox.enqueue(message(2), ep);
    const [c1, c2] = await Promise.all([outbox.enqueue(message(2), ep), outbox.enqueue(message(2), ep)]);
    assert.ok(first.created);
    for (const r of [again, c1, c2]) {
      assert.is(r.webhookId, first.webhookId);
      assert.is(r.created, false);
    }
    // Same key under another business is a different message.
    const other = await outbox.enqueue(message(2, "biz_2"), ep);
    assert.ok(other.created);
    assert.is.not(other.webhookId, first.webhookId);

    assert.is(await outbox.deliverDue(), 2);
    assert.is(s.receiver.received.filter((r) => r.id === first.webhookId).length, 1);
    assert.is((await outbox.list({ businessId: "biz_1" })).length, 1);
  } finally {
    await s.cleanup();
  }
});

test("500, 500, then 200: delivered on the 3rd attempt with the same webhook-id", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    s.receiver.replies.push(500, 500);
    const { webhookId } = await outbox.enqueue(message(3), { url: s.receiver.url, secret: SECRET });

    assert.is(await outbox.deliverDue(), 1);
    let rec = await outbox.get(webhookId);
    assert.is(rec?.status, "pending");
    assert.is(rec?.attempts, 1);
    assert.is(rec?.lastStatusCode, 500);
    assert.is(rec?.lastError, "http_500");
    // Jitter only shortens a delay: the retry is due within [0.9 × 1000, 1000] ms.
    const wait = rec!.nextAttemptAt! - s.clock();
    assert.ok(wait >= 900 && wait <= 1000, `first retry in ${wait} ms`);

    assert.is(await outbox.deliverDue(), 0, "not due before the backoff");
    s.advance(1000);
    assert.is(await outbox.deliverDue(), 1);
    rec = await outbox.get(webhookId);
    assert.is(rec?.attempts, 2);
    assert.is(rec?.status, "pending");
    const wait2 = rec!.nextAttemptAt! - s.clock();
    assert.ok(wait2 >= 1800 && wait2 <= 2000, `second retry in ${wait2} ms`);
    s.advance(2000);
    assert.is(await outbox.deliverDue(), 1);

    rec = await outbox.get(webhookId);
    assert.is(rec?.status, "delivered");
    assert.is(rec?.attempts, 3);
    assert.is(s.receiver.received.length, 3);
    assert.ok(s.receiver.received.every((r) => r.id === webhookId && r.valid));
    assert.is(new Set(s.receiver.received.map((r) => r.body)).size, 1, "same body bytes every time");
    assert.is(new Set(s.receiver.received.map((r) => r.timestamp)).size, 3, "fresh timestamp per attempt");
    const attempts = s.logs.filter((l) => l.event === "webhook_delivery_attempt");
    assert.equal(attempts.map((l) => l.statusCode), [500, 500, 200]);
    assert.equal(attempts.map((l) => l.attempt), [1, 2, 3]);
    assert.equal(attempts.map((l) => l.outcome), ["retry", "retry", "delivered"]);
    assert.ok(attempts.every((l) => l.webhookId === webhookId && l.businessId === "biz_1" && l.eventType === "CHECKOUT_COMPLETED"));
    assert.ok(attempts.every((l) => typeof l.latencyMs === "number"));
  } finally {
    await s.cleanup();
  }
});

test("receiver down: retried through the schedule, then dead and listed", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    const url = await closedPortUrl();
    const { webhookId } = await outbox.enqueue(message(4), { url, secret: SECRET });
    const delivered = await outbox.enqueue(message(5), { url: s.receiver.url, secret: SECRET });
    assert.is(await outbox.deliverDue(), 2);
    for (const delay of [1000, 2000, 4000]) {
      assert.is((await outbox.get(webhookId))?.status, "pending");
      s.advance(delay);
      assert.is(await outbox.deliverDue(), 1);
    }
    const rec = await outbox.get(webhookId);
    assert.is(rec?.status, "dead");
    assert.is(rec?.attempts, 4, "first attempt + 3 retries");
    assert.is(rec?.lastError, "ECONNREFUSED");
    assert.is(rec?.lastStatusCode, null);
    assert.is(rec?.deadAt, s.clock());
    assert.is(rec?.nextAttemptAt, null);

    const dead = await outbox.list({ status: "dead" });
    assert.equal(dead.map((d) => d.webhookId), [webhookId]);
    assert.equal((await outbox.list({ status: "delivered" })).map((d) => d.webhookId), [delivered.webhookId]);
    s.advance(24 * 3_600_000);
    assert.is(await outbox.deliverDue(), 0, "dead letters are never retried automatically");

    const deadLog = s.logs.filter((l) => l.event === "webhook_dead_lettered");
    assert.is(deadLog.length, 1);
    assert.is(deadLog[0]!.level, "warn");
    assert.is(deadLog[0]!.webhookId, webhookId);
  } finally {
    await s.cleanup();
  }
});

test("a timeout counts as a failed attempt", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox({ timeoutMs: 1_000 });
    s.receiver.replies.push("hang");
    const { webhookId } = await outbox.enqueue(message(6), { url: s.receiver.url, secret: SECRET });
    const started = Date.now();
    assert.is(await outbox.deliverDue(), 1);
    assert.ok(Date.now() - started < 5_000, "the attempt was cut at its deadline");
    let rec = await outbox.get(webhookId);
    assert.is(rec?.status, "pending");
    assert.is(rec?.attempts, 1);
    assert.is(rec?.lastError, "timeout");
    s.advance(1000);
    assert.is(await outbox.deliverDue(), 1);
    rec = await outbox.get(webhookId);
    assert.is(rec?.status, "delivered");
    assert.is(rec?.attempts, 2);
    assert.equal(s.receiver.received.map((r) => r.id), [webhookId, webhookId]);
  } finally {
    await s.cleanup();
  }
});

test("two outbox instances racing deliverDue() deliver every message exactly once", async () => {
  const s = await setup();
  try {
    const a = s.outbox({ owner: "worker-a", concurrency: 3 });
    const b = s.outbox({ owner: "worker-b", concurrency: 3 });
    s.receiver.delayMs = 5;
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const target = i % 2 === 0 ? a : b;
      ids.push((await target.enqueue(message(`race-${i}`), { url: s.receiver.url, secret: SECRET })).webhookId);
    }
    const [na, nb] = await Promise.all([a.deliverDue(), b.deliverDue()]);
    assert.is(na + nb, 30);
    assert.ok(na > 0 && nb > 0, `both workers took part (${na}/${nb})`);
    assert.is(s.receiver.received.length, 30);
    assert.equal([...s.receiver.received.map((r) => r.id)].sort(), [...ids].sort());
    assert.ok(s.receiver.received.every((r) => r.valid));
    const recs = await a.list({ status: "delivered", limit: 1000 });
    assert.is(recs.length, 30);
    assert.ok(recs.every((r) => r.attempts === 1));
    assert.is(await Promise.all([a.deliverDue(), b.deliverDue()]).then(([x, y]) => x + y), 0);
  } finally {
    await s.cleanup();
  }
});

test("a message leased by a crashed worker waits for the lease to expire", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox({ leaseMs: 60_000 });
    const { webhookId } = await outbox.enqueue(message(7), { url: s.receiver.url, secret: SECRET });
    const claimed = await s.store.collection("webhook_outbox").claim({ _id: webhookId }, "crashed-worker", 60_000);
    assert.ok(claimed);
    assert.is(await outbox.deliverDue(), 0, "leased elsewhere");
    s.advance(60_001);
    assert.is(await outbox.deliverDue(), 1);
    assert.is((await outbox.get(webhookId))?.status, "delivered");
    assert.is(s.receiver.received.length, 1);
  } finally {
    await s.cleanup();
  }
});

test("no_endpoint and unusable endpoints are stored, visible and never sent", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    const none = await outbox.enqueue(message(8), null);
    assert.ok(none.created);
    const again = await outbox.enqueue(message(8), null);
    assert.equal(again, { webhookId: none.webhookId, created: false });
    const bad = await outbox.enqueue(message(9), { url: "ftp://example.com/x", secret: SECRET });
    const noSecret = await outbox.enqueue(message(10), { url: s.receiver.url, secret: "" });

    assert.is(await outbox.deliverDue(), 0);
    s.advance(24 * 3_600_000);
    assert.is(await outbox.deliverDue(), 0);
    assert.is(s.receiver.received.length, 0);

    const rec = await outbox.get(none.webhookId);
    assert.is(rec?.status, "no_endpoint");
    assert.is(rec?.endpointUrl, null);
    assert.is(rec?.attempts, 0);
    assert.equal((await outbox.list({ status: "no_endpoint" })).map((r) => r.webhookId), [none.webhookId]);
    const dead = await outbox.list({ status: "dead" });
    assert.equal(dead.map((r) => r.webhookId).sort(), [bad.webhookId, noSecret.webhookId].sort());
    assert.ok(dead.every((r) => r.lastError === "invalid_endpoint"));
  } finally {
    await s.cleanup();
  }
});

test("a redirect is not followed and counts as a failure", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox({ schedule: [] });
    s.receiver.replies.push(302);
    const { webhookId } = await outbox.enqueue(message(11), { url: s.receiver.url, secret: SECRET });
    assert.is(await outbox.deliverDue(), 1);
    const rec = await outbox.get(webhookId);
    assert.is(rec?.status, "dead", "an empty schedule means one attempt");
    assert.is(rec?.lastError, "http_302");
    assert.is(s.receiver.received.length, 1);
  } finally {
    await s.cleanup();
  }
});

test("the worker delivers in the background and stops cleanly", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox({ pollMs: 10 });
    assert.is(outbox.worker.name, "webhook-delivery");
    outbox.worker.start();
    outbox.worker.start(); // idempotent
    const { webhookId } = await outbox.enqueue(message(12), { url: s.receiver.url, secret: SECRET });
    await s.receiver.waitFor(1);
    await outbox.worker.stop();
    assert.is((await outbox.get(webhookId))?.status, "delivered");
    // After stop, a manual pass still works (idle connections were closed, a new pool opens).
    await outbox.enqueue(message(13), { url: s.receiver.url, secret: SECRET });
    assert.is(await outbox.deliverDue(), 1);
  } finally {
    await s.cleanup();
  }
});

test("enqueue rejects malformed messages", async () => {
  const s = await setup();
  try {
    const outbox = s.outbox();
    const ep = { url: s.receiver.url, secret: SECRET };
    await rejects(() => outbox.enqueue({ ...message(14), idempotencyKey: "" }, ep), "empty idempotencyKey");
    await rejects(() => outbox.enqueue({ ...message(14), businessId: "" }, ep), "empty businessId");
    await rejects(() => outbox.enqueue({ ...message(14), payload: null as unknown as Record<string, unknown> }, ep), "null payload");
    assert.is((await outbox.list()).length, 0);
  } finally {
    await s.cleanup();
  }
});

const mongo = await startMongoServer();
const mongoTest = isMongoSkip(mongo) ? test.skip : test;
if (isMongoSkip(mongo)) process.stdout.write(`[skip] MongoDB outbox test: ${mongo.skip}\n`);

mongoTest("MongoDB, two stores (two processes): one enqueue per key, one delivery per message, retries", async () => {
  if (isMongoSkip(mongo)) return;
  let now = Date.UTC(2025, 0, 15, 12, 0, 0);
  const clock = (): number => now;
  const dbName = mongo.dbName();
  const storeA = await createMongoDocumentStore({ uri: mongo.uri, dbName, clock });
  const storeB = await createMongoDocumentStore({ uri: mongo.uri, dbName, clock });
  const receiver = await startReceiver(clock);
  const log = createLogger({ level: "debug", sink: (rec) => allLogs.push(rec) });
  const opts = { log, clock, schedule: [1000], timeoutMs: 2000, concurrency: 3 };
  const a = createWebhookOutbox({ ...opts, store: storeA, owner: "mongo-a" });
  const b = createWebhookOutbox({ ...opts, store: storeB, owner: "mongo-b" });
  try {
    const ep = { url: receiver.url, secret: SECRET };
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const [ra, rb] = await Promise.all([a.enqueue(message(`m-${i}`), ep), b.enqueue(message(`m-${i}`), ep)]);
      assert.is(ra.webhookId, rb.webhookId);
      assert.is(Number(ra.created) + Number(rb.created), 1, "exactly one enqueue stored the message");
      ids.add(ra.webhookId);
    }
    receiver.replies.push(503);
    receiver.delayMs = 5;
    const [na, nb] = await Promise.all([a.deliverDue(), b.deliverDue()]);
    assert.is(na + nb, 12);
    now += 1000;
    assert.is((await a.deliverDue()) + (await b.deliverDue()), 1, "the 503 is retried once");
    assert.is(receiver.received.length, 13);
    const perId = new Map<string, number>();
    for (const r of receiver.received) perId.set(r.id, (perId.get(r.id) ?? 0) + 1);
    assert.equal([...perId.keys()].sort(), [...ids].sort());
    assert.equal([...perId.values()].sort(), [...Array(11).fill(1), 2]);
    assert.ok(receiver.received.every((r) => r.valid));
    assert.is((await b.list({ status: "delivered" })).length, 12);
  } finally {
    await a.worker.stop();
    await b.worker.stop();
    await receiver.close();
    await storeA.close();
    await storeB.close();
    await mongo.stop();
  }
});

test("logs never contain the payload, the secret, the idempotency key or response bodies", () => {
  assert.ok(allLogs.some((l) => l.event === "webhook_delivery_attempt"));
  assert.ok(allLogs.some((l) => l.event === "webhook_dead_lettered"));
  const text = JSON.stringify(allLogs);
  const keyBase64 = SECRET.slice("whsec_".length);
  for (const needle of [PAYLOAD_MARKER, SECRET, keyBase64, IDEM_MARKER, "RESPONSE-BODY-MARKER", "token=abc", "ref-"]) {
    assert.not.ok(text.includes(needle), `logs contain ${needle}`);
  }
});

test.run();
