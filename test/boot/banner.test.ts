/**
 * The startup banner advertises what the tenant directory holds, not the config file: a demo key
 * an operator revoked through the Admin API is not printed at the next start (the store outlives
 * the file), the other demo keys are. Real `boot/main.ts` processes on one SQLite file.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { DEMO_RAW } from "../support/gateway.ts";
import { spawnTs, trackChild } from "../support/child-process.ts";
import { tempDir } from "../support/temp.ts";

interface Started {
  url: string;
  banner: () => string;
  stop: () => Promise<number | null>;
}

async function start(configPath: string): Promise<Started> {
  const child = spawnTs("boot/main.ts", ["--config", configPath], { ...process.env, PORT: "", NO_COLOR: "1" });
  trackChild(child);
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/regulator simulator/.test(out) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  const url = /Gatehouse listening on (http:\/\/\S+)/.exec(out)?.[1];
  assert.ok(url, out);
  return {
    url: url!,
    banner: () => out.slice(out.indexOf("Gatehouse listening on")),
    stop: () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

test("a demo key revoked through the Admin API is not advertised at the next start; the others are", async () => {
  const dir = tempDir("banner");
  const raw = structuredClone(DEMO_RAW) as Record<string, any>;
  raw.server.port = 0;
  raw.regulator.simulator.port = 0;
  raw.storage = { driver: "sqlite", file: join(dir, "gatehouse.sqlite") };
  const configPath = join(dir, "config.json");
  writeFileSync(configPath, JSON.stringify(raw));

  const first = await start(configPath);
  const before = first.banner();
  const revoke = await fetch(`${first.url}/admin/keys/demo-allowlisted/revoke`, {
    method: "POST",
    headers: { "x-admin-api-key": "admin_demo_key_0001", "x-idempotency-key": "banner-revoke-0001", "content-type": "application/json" },
    body: "{}",
  });
  const revoked = [revoke.status, await revoke.text()] as const;
  assert.is(await first.stop(), 0);
  assert.match(before, /x-api-key: gw_demo_key_allowlisted/);
  assert.is(revoked[0], 200, revoked[1]);

  const second = await start(configPath);
  const banner = second.banner();
  // Stopped before any assertion: a failed one must not leave the gateway running.
  assert.is(await second.stop(), 0);
  assert.not.match(banner, /gw_demo_key_allowlisted/, "the revoked key is not advertised");
  assert.match(banner, /x-api-key: gw_demo_key_0001/);
  assert.match(banner, /x-api-key: gw_other_key_0001/);
  assert.match(banner, /Authorization: Bearer sk_test_demo_0001/);
  assert.match(banner, /x-admin-api-key: admin_demo_key_0001/);
  assert.match(banner, /merchant dashboard {2}http:\/\/passthrough\.demo\.localhost:\d+\/dashboard/);
  assert.match(banner, /demo owner: owner@demo\.gatehouse\.test {2}password demo-owner-password {2}TOTP secret GATEHOUSEDEMOOWNERTOTPSECRET2345/);
  assert.match(banner, /passthrough\.demo\.localhost:\d+ {2}\(demo, passthrough\)/);
});

test.run();
