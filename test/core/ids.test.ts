/**
 * core/ids.ts: operation ids are version-7 UUIDs that carry the time they were made and sort in the
 * order they were made (what keeps the indexes on them growing at one end).
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { newId } from "../../core/ids.ts";
import { requestIdTime } from "../../core/request-id.ts";
import { UUID_V7 } from "../support/assertions.ts";

test("an id is a version-7 UUID holding the millisecond it was made at", () => {
  const before = Date.now();
  const id = newId();
  const after = Date.now();
  assert.match(id, UUID_V7);
  const at = requestIdTime(id);
  assert.ok(at !== null && at >= before && at <= after, `time in the id ${at} within [${before}, ${after}]`);
});

test("ids made one after another are distinct and sort in the order they were made, within a millisecond too", () => {
  const ids = Array.from({ length: 20_000 }, () => newId());
  assert.is(new Set(ids).size, ids.length, "no id twice");
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! < ids[i]!, `id ${i} sorts after id ${i - 1}: ${ids[i - 1]} < ${ids[i]}`);
});

test.run();
