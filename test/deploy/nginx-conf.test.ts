/**
 * deploy/nginx.ts renders the product's edge config (deploy/nginx.conf) from a gateway config: the
 * header names and limits are the gateway's, every placeholder is filled, and a config or secret
 * the gateway would not accept is refused. (nginx itself loads the rendered file in the topology
 * test and the capacity bench, after `nginx -t`.)
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { loadConfig } from "../../config/load.ts";
import { hashSecret } from "../../core/directory.ts";
import { createHopMarker, HOP_MARKER_PATTERN } from "../../core/http/hop.ts";
import { KEEP_ALIVE_TIMEOUT_MS } from "../../core/server.ts";
import { renderNginxConf } from "../../deploy/nginx.ts";
import { DEMO_RAW } from "../support/gateway.ts";

const SECRET = "edge-secret-for-the-nginx-conf-test";

function trusted(patch: Record<string, unknown> = {}) {
  return loadConfig({
    raw: {
      ...structuredClone(DEMO_RAW),
      edge: { mode: "trusted", secretHeader: "x-gatehouse-edge-secret", secretHash: hashSecret(SECRET), clientAddressHeader: "x-gatehouse-client-ip" },
      server: { maxHeaderBytes: 16_384, maxUriLength: 8_192, headerReadTimeoutMs: 7_000, bodyReadTimeoutMs: 9_000 },
      regulator: { timeoutMs: 20_000 },
      ...patch,
    },
    env: {},
  });
}

test("the rendered file carries the gateway's header names, secret, limits and upstreams; nothing left unfilled", () => {
  const conf = renderNginxConf(trusted(), { upstreams: ["10.0.1.11:3000", "10.0.1.12:3000"], edgeSecret: SECRET, listen: "8080" });
  const directives = conf
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"))
    .join("\n");
  assert.not.match(directives, /\$\{GATEHOUSE_/);
  assert.is(conf.split(SECRET).length - 1, 1, "the secret appears once, in its directive");
  assert.match(conf, /proxy_set_header x-gatehouse-edge-secret "edge-secret-for-the-nginx-conf-test";/);
  assert.match(conf, /proxy_set_header x-gatehouse-client-ip \$remote_addr;/);
  assert.match(conf, /proxy_set_header X-Forwarded-For "";/);
  assert.match(conf, /proxy_set_header X-Service-Gateway-Hop \$gatehouse_hop_marker;/, "a client's hop header is not passed on as sent");
  assert.match(conf, /server 10\.0\.1\.11:3000 max_fails=1 fail_timeout=5s; server 10\.0\.1\.12:3000/);
  assert.match(conf, /listen 8080;/);
  assert.match(conf, /client_max_body_size 1048576;/, "limits.largeBodyBytes (default)");
  assert.match(conf, /large_client_header_buffers 4 16k;/);
  assert.match(conf, /client_header_timeout 7000ms;/);
  assert.match(conf, /client_body_timeout 9000ms;/);
  assert.match(conf, /proxy_read_timeout 70000ms;/, "2 × regulator.timeoutMs + 30 s");
  assert.match(conf, new RegExp(`keepalive_timeout ${KEEP_ALIVE_TIMEOUT_MS - 1_000}ms;`), "closed by nginx before the gateway closes it");
  assert.match(conf, /proxy_next_upstream error timeout;/, "never on a gateway's own 503, never non_idempotent");
});

test("refused: a direct-mode config, a secret that is not the config's, no upstream, a malformed upstream, a secret nginx cannot quote", () => {
  const config = trusted();
  assert.throws(() => renderNginxConf(loadConfig({ raw: structuredClone(DEMO_RAW), env: {} }), { upstreams: ["a:1"], edgeSecret: SECRET }), /direct/);
  assert.throws(() => renderNginxConf(config, { upstreams: ["a:1"], edgeSecret: "another-secret" }), /does not match/);
  assert.throws(() => renderNginxConf(config, { upstreams: [], edgeSecret: SECRET }), /at least one upstream/);
  assert.throws(() => renderNginxConf(config, { upstreams: ["10.0.1.11"], edgeSecret: SECRET }), /host:port/);
  assert.throws(() => renderNginxConf(config, { upstreams: ["10.0.1.11:3000; evil"], edgeSecret: SECRET }), /host:port/);
  const quoted = 'with"quote$';
  const withQuote = trusted({ edge: { mode: "trusted", secretHeader: "x-s", secretHash: hashSecret(quoted), clientAddressHeader: "x-c" } });
  assert.throws(() => renderNginxConf(withQuote, { upstreams: ["a:1"], edgeSecret: quoted }), /must not contain/);
});

test("a template with an unknown or a missing placeholder is refused (the file and the renderer stay in step)", () => {
  const config = trusted();
  const options = { upstreams: ["a:1"], edgeSecret: SECRET };
  assert.throws(() => renderNginxConf(config, options, "server { ${GATEHOUSE_NOPE} }"), /unknown placeholder/);
  assert.throws(() => renderNginxConf(config, options, "server { listen ${GATEHOUSE_LISTEN}; }"), /lacks placeholders/);
});

test("the edge's hop-marker map passes exactly what HOP_MARKER_PATTERN admits, nothing else", () => {
  const conf = renderNginxConf(trusted(), { upstreams: ["10.0.1.11:3000"], edgeSecret: SECRET });
  const map = /map \$http_x_service_gateway_hop \$gatehouse_hop_marker \{\n\s*default "";\n\s*"~(.+)" \$http_x_service_gateway_hop;\n\s*\}/.exec(conf);
  assert.ok(map, "one map: default empty (no header), the marker shape passed as sent");
  const pattern = map![1]!;
  assert.is(pattern, HOP_MARKER_PATTERN.source, "the edge and the gateway agree on the marker's shape");
  const own = createHopMarker("s").forHost("gw.example.ng");
  assert.ok(new RegExp(pattern).test(own));
  for (const hop of ["1", "0", "1.2.x", `${own} `, `${own}\n1`]) assert.not.ok(new RegExp(pattern).test(hop), hop);
});

test.run();
