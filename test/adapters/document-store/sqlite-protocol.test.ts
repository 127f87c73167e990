/**
 * The writer's batch text (adapters/document-store/sqlite/protocol.ts): operations come back from
 * `decodeBatch` as they were given to `encodeOp`, documents' JSON text byte for byte (quotes,
 * backslashes, escaped control characters, line separators, astral characters, lone surrogates).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { decodeBatch, encodeBatch, encodeOp, type WriteOp } from "../../../adapters/document-store/sqlite/protocol.ts";

test("a batch decodes to the operations encoded, documents' text byte for byte", () => {
  const doc = { _id: "a", q: 'say "hi" \\ there', ctl: "\u0000\u0001\n\t", seps: "\u2028\u2029", astral: "😀", lone: "\ud800", n: 1e21 };
  const ops: WriteOp[] = [
    { kind: "insert", collection: "c", id: "a", text: JSON.stringify(doc), now: 1 },
    { kind: "update", collection: "c", filter: { _id: "a", q: "\u0001" }, update: { $set: { x: "\u0000" } }, upsert: false, returnDoc: true, now: 2 },
    { kind: "insertMany", collection: "c", text: JSON.stringify([doc, { _id: "b" }]), count: 2, arrays: false, now: 3 },
    { kind: "ping" },
  ];
  const decoded = decodeBatch(encodeBatch(ops.map(encodeOp)));
  assert.equal(decoded, ops);
  assert.is((decoded[0] as { text: string }).text, JSON.stringify(doc));
  assert.equal(decodeBatch(encodeBatch([encodeOp({ kind: "ping" })])), [{ kind: "ping" }]);
});

test.run();
