/**
 * The dashboard's request log over HTTP (docs/dashboard.md "Request log"): the demo owner finds the business's
 * API requests (newest first, filtered by status, code and route), opens one by its request ID, and
 * never sees another business's: its request ID answers 404 on the detail page and "no request" in
 * the search, and it is not in the list. Hostile strings stored in a record come out escaped.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_KEY, STORED, gatewayTracker, type TestGateway } from "../../support/gateway.ts";
import { callOverHttp } from "../../support/over-http.ts";
import { demoOwner } from "./dashboard-helpers.ts";

const { start, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("the owner lists, filters and opens the business's requests; another business's request ID is 404 and not listed; a caller's own ID is named as not the gateway's", async () => {
  const tg = await start({ patch: { requestLog: { flushMs: 3_600_000 } } });
  await callOverHttp(tg);
  const ok = await _send(tg, "/sub-businesses", DEMO_KEY);
  const missing = await _send(tg, "/no-such-route/%3Cscript%3Ealert(1)%3C%2Fscript%3E", DEMO_KEY);
  const unauth = await _send(tg, "/sub-businesses", "gw_wrong_key_123456");
  const others = await _send(tg, "/sub-businesses", DEMO_KEY, STORED);
  await tg.gateway.requestLog!.flush();
  const owner = await demoOwner(tg);

  const list = await owner.html("/dashboard/requests");
  assert.match(list, /<h1>Requests<\/h1>/);
  assert.match(list, /data-environment="TEST"/);
  for (const id of [ok.id, missing.id, unauth.id]) assert.ok(list.includes(id), `listed: ${id}`);
  assert.not.ok(list.includes(others.id), "another business's request is not listed");
  assert.ok(list.indexOf(unauth.id) < list.indexOf(missing.id) && list.indexOf(missing.id) < list.indexOf(ok.id), "newest first");
  assert.not.ok(list.includes("<script>alert(1)"), "a hostile path comes out escaped");

  const failed = await owner.html("/dashboard/requests?status=4xx");
  assert.ok(failed.includes(missing.id) && failed.includes(unauth.id) && !failed.includes(ok.id), "status class filter");
  const byCode = await owner.html("/dashboard/requests?code=GW_API_KEY_INVALID");
  assert.ok(byCode.includes(unauth.id) && !byCode.includes(missing.id), "code filter");
  const byRoute = await owner.html("/dashboard/requests?route=unmatched");
  assert.ok(byRoute.includes(missing.id) && !byRoute.includes(ok.id), "route filter");
  assert.match(await owner.html("/dashboard/requests?status=abc"), /Ignored: status must be/);

  const found = await owner.get(`/dashboard/requests?requestId=${unauth.id}`);
  assert.is(found.status, 303, "a request ID of this business opens its page");
  assert.is(found.headers.get("location"), `/dashboard/requests/${unauth.id}`);
  const detail = await owner.html(`/dashboard/requests/${unauth.id}`);
  for (const s of [unauth.id, "GW_API_KEY_INVALID", "401", "/sub-businesses", "passthrough.demo.localhost"]) assert.ok(detail.includes(s), s);
  assert.not.ok(detail.includes("gw_wrong_key_123456"), "never the key");

  assert.is((await owner.get(`/dashboard/requests/${others.id}`)).status, 404, "another business's request ID is 404");
  assert.is((await owner.get("/dashboard/requests/not-a-request")).status, 404);
  const search = await owner.get(`/dashboard/requests?requestId=${others.id}`);
  assert.is(search.status, 200);
  assert.match(await search.text(), /No request <code>[^<]+<\/code> in this business's log/);
  const callers = await owner.html("/dashboard/requests?requestId=my-own-correlation-id-42");
  assert.match(callers, /<code>my-own-correlation-id-42<\/code> is not a Gatehouse request ID/, "a caller's own ID is named as such");
});

test.run();

// --- Internal helpers ---

async function _send(tg: TestGateway, path: string, key: string, host?: string): Promise<{ id: string; status: number }> {
  const res = await tg.call(path, { headers: { "x-api-key": key }, ...(host ? { host } : {}) });
  await res.arrayBuffer();
  return { id: res.headers.get("x-request-id")!, status: res.status };
}
