/**
 * docs/client.md's walkthrough (docs/examples/client/merchant.ts) runs as documented: a separate
 * process with only GATEHOUSE_URL set, against a gateway on the demo config (embedded store, Stored
 * processor, the regulator simulator over HTTP). It must exit 0 and print every step.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gatewayTracker } from "../support/gateway.ts";
import { startDemoSimulator } from "../adapters/regulator/simulator/simulator-helpers.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const { start, track, closeAll } = gatewayTracker();
test.after.each(closeAll);

test("docs/examples/client/merchant.ts runs against the demo system and ends well", async () => {
  const sim = track(await startDemoSimulator({ credentials: { apiKey: "sim_api_key_demo", apiSecret: "sim_api_secret_demo" } }));
  const tg = await start({ regulatorBaseUrls: { TEST: sim.url, LIVE: sim.url } });
  const server = await tg.listen();
  const { stdout } = await promisify(execFile)(join(ROOT, "node_modules/.bin/tsx"), [join(ROOT, "docs/examples/client/merchant.ts")], {
    cwd: ROOT,
    env: { ...process.env, GATEHOUSE_URL: server.url },
    timeout: 60_000,
  });
  for (const step of [/^onboarded Demo Trading Ltd .*HTTP 201/m, /^signed DOC\w+-94ND90NR-\d{8}: requestId [0-9a-f-]{36}, key gh-/m, /^transmitted .*HTTP 201/m, /^stored invoice is signed/m, /^payment link PL-/m, /^deposit into \d{10}: settled/m, /^latest wallet credit: NGN 2500/m])
    assert.match(stdout, step, stdout);
  // Nine sends at least: eight calls, and one read of the Stored invoice per poll until it is signed
  // (how many depends on the processor's timing: 10 on a calm machine, 9 or 11 under load). The
  // last one persisted carries its request id.
  const m = /^(\d+) sends persisted; the last: (.*)$/m.exec(stdout);
  assert.ok(m && Number(m[1]) >= 9, `every send persisted:\n${stdout}`);
  assert.match((JSON.parse(m![2]!) as { requestId: string }).requestId, /^[0-9a-f-]{36}$/);
});

test.run();
