/**
 * The money-critical checkout paths on the MongoDB document store (jongodb, or MONGODB_URI):
 * unique source_reference, duplicate reports → one credit and one webhook, fixed-amount mismatch →
 * refunded, abandonment, search and pagination — the same plugin code the embedded store runs.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createMongoDocumentStore } from "../../../../adapters/document-store/mongodb.ts";
import { isMongoSkip, startMongoServer } from "../../../support/mongo-server.ts";
import { MINUTE, dataOf, sourceRef, startCollections, type LinkData } from "./collections-helpers.ts";

const server = await startMongoServer();
if (isMongoSkip(server)) {
  test.skip(`MongoDB checkout paths (${server.skip})`, () => {});
  test.run();
} else {
  const h = await startCollections({
    delayReportMs: 0,
    store: (clock) => createMongoDocumentStore({ uri: server.uri, dbName: server.dbName(), clock }),
  });
  interface Tx {
    id: string;
    status: string;
    reference: string;
    netAmount: number;
  }
  const txOf = async (link: LinkData, q = "") =>
    (await (await h.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions${q}`)).json()) as { data: Tx[]; meta: Record<string, number> };
  const credits = async (filter: Record<string, unknown>) => (await h.store.collection<{ _id: string; amountKobo: number }>("collections_wallet_entries").find(filter)).items;

  test("409 on a reused source_reference (unique index on MongoDB)", async () => {
    const ref = sourceRef("m");
    await h.createLink({ link_name: "One", source_reference: ref });
    const again = await h.api("/api/v1/payment-link", { body: { link_name: "Two", narration: "n", fee_bearer: "MERCHANT", source_reference: ref } });
    assert.is(again.status, 409);
  });

  test("duplicate report → one credit, one CHECKOUT_COMPLETED", async () => {
    const link = await h.createLink({ link_name: "Mongo dup", amount: 1000 });
    const res = await h.pay(link.reference, { email: "m@example.com", outcome: "duplicate_report" });
    assert.is(res.status, 303);
    const sessionId = /\/success\/(.+)$/.exec(res.headers.get("location")!)![1]!;
    await h.payments.idle();
    h.payments.redeliver(sessionId, 10);
    await h.payments.idle();
    assert.equal((await credits({ sourceId: sessionId })).map((c) => c.amountKobo), [100_000 - 1_500]);
    const hooks = (await h.webhooks("demo")).filter((w) => w.idempotencyKey.endsWith(sessionId));
    assert.equal(hooks.map((w) => w.eventType), ["CHECKOUT_COMPLETED"]);
  });

  test("fixed amount mismatch → refunded, never credited", async () => {
    const link = await h.createLink({ link_name: "Mongo fixed", amount: 2000 });
    const res = await h.pay(link.reference, { email: "m@example.com", amount: "1999.99" });
    assert.is(res.status, 402);
    await h.payments.idle();
    const tx = (await txOf(link)).data;
    assert.is(tx[0]!.status, "refunded");
    assert.equal(await credits({ sourceId: tx[0]!.id }), []);
  });

  test("abandonment after 30 minutes; list filters and search", async () => {
    const slow = await startCollections({
      delayReportMs: 60_000,
      payTimeoutMs: 20,
      store: (clock) => createMongoDocumentStore({ uri: server.uri, dbName: server.dbName(), clock }),
    });
    try {
      const link = await slow.createLink({ link_name: "Mongo slow" });
      await slow.pay(link.reference, { email: "m@example.com", amount: "100" });
      slow.clock.advance(31 * MINUTE);
      const tx = await dataOf<Tx[]>(await slow.api(`/api/v1/payment-link/find-by-reference/${link.reference}/transactions`));
      assert.is(tx[0]!.status, "abandoned");
      const list = (await (await slow.api("/api/v1/payment-link?search=mongo%20SLOW")).json()) as { data: LinkData[]; meta: Record<string, number> };
      assert.equal(list.data.map((l) => l.reference), [link.reference]);
      assert.is(list.meta.total, 1);
    } finally {
      await slow.close();
    }
  });

  test.after(async () => {
    await h.close();
    await server.stop();
  });
  test.run();
}
