/**
 * No drift between the console and the Admin API: every Admin API mutation in the route table has
 * a console action (plugins/console/actions.ts) or is listed as not offered yet, and every console
 * action maps to an Admin API mutation or is listed as console-only. Adding an Admin API mutation
 * without deciding its console side fails here.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CONSOLE_ACTIONS, CONSOLE_ONLY, NOT_IN_CONSOLE_YET } from "../../../plugins/console/actions.ts";
import { startTestGateway } from "../../support/gateway.ts";

const tg = await startTestGateway();
test.after(() => tg.close());
const ids = tg.gateway.routes.routes().map((r) => ({ id: r.id, method: r.decl.method, auth: r.decl.auth }));

test("every Admin API mutation has a console action or is listed as not offered yet", () => {
  const mutations = ids.filter((r) => r.auth === "admin" && r.method !== "GET" && r.id.includes(" /admin/")).map((r) => r.id);
  assert.ok(mutations.length >= 10, "the Admin API's mutations are in the route table");
  const undecided = mutations.filter((id) => !(id in CONSOLE_ACTIONS) && !(id in NOT_IN_CONSOLE_YET));
  assert.equal(undecided, [], "decide each one's console side in plugins/console/actions.ts");
  const stale = [...Object.keys(CONSOLE_ACTIONS), ...Object.keys(NOT_IN_CONSOLE_YET)].filter((id) => !mutations.includes(id));
  assert.equal(stale, [], "listed Admin API routes that no longer exist");
  const both = Object.keys(CONSOLE_ACTIONS).filter((id) => id in NOT_IN_CONSOLE_YET);
  assert.equal(both, []);
});

test("every console action maps to an Admin API mutation or is console-only, and every mapped action exists", () => {
  const actions = ids.filter((r) => r.method !== "GET" && r.id.includes(" /console")).map((r) => r.id);
  const mapped = new Set(Object.values(CONSOLE_ACTIONS));
  assert.equal(actions.filter((id) => !mapped.has(id) && !CONSOLE_ONLY.includes(id)), []);
  assert.equal([...mapped, ...CONSOLE_ONLY].filter((id) => !actions.includes(id)), [], "a listed console action is not routed");
});

test.run();
