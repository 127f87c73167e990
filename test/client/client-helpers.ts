/**
 * Shared helpers of the client tests: clients pointed at a test gateway on a real port (the Host
 * header names the approved domain), a recorder for the persistence hook, the operator's view of
 * the wallet, and a TCP proxy between client and gateway that can lose or hold answers (the faults
 * no server can inject: the request arrives and is processed, the merchant never hears back).
 */
import { createServer, connect, type Server, type Socket } from "node:net";
import * as assert from "uvu/assert";
import { createCollectionsClient, createInvoiceGatewayClient, type AttemptRecord, type ConnectionOptions } from "../../client/index.ts";
import { httpCall } from "../support/raw-http.ts";
import { ADMIN_KEY, BEARER_DEMO, DEMO_KEY, PASSTHROUGH, keyForHost } from "../support/gateway.ts";

/** Sleeps and retry waits recorded, not waited (backoff still computed), unless `real` is set. */
export function testRuntime(real = false) {
  const waits: number[] = [];
  return {
    waits,
    runtime: {
      sleep: async (ms: number) => {
        waits.push(ms);
        if (real) await new Promise((r) => setTimeout(r, ms));
      },
      random: () => 0.5,
    },
  };
}

export function recorder() {
  const records: AttemptRecord[] = [];
  return { records, onAttempt: (r: AttemptRecord) => void records.push(r) };
}

/** A gateway client with the demo key of the business owning `host`. */
export function gatewayClient(url: string, host = PASSTHROUGH, extra: Partial<ConnectionOptions> = {}) {
  return createInvoiceGatewayClient({ baseUrl: url, host, apiKey: keyForHost(host), ...extra });
}

export function collectionsClient(url: string, extra: Partial<ConnectionOptions> = {}, apiKey = BEARER_DEMO) {
  return createCollectionsClient({ baseUrl: url, host: "localhost", apiKey, ...extra });
}

/** The demo wallet as the operator sees it (Admin API). */
export async function wallet(url: string): Promise<{ balance: number; entries: Array<{ type: string; amount: number }> }> {
  const res = await httpCall(url, "/admin/wallets/demo", { host: PASSTHROUGH, headers: { "x-admin-api-key": ADMIN_KEY } });
  assert.is(res.status, 200, res.text);
  return res.json() as { balance: number; entries: Array<{ type: string; amount: number }> };
}

export interface FaultyProxy {
  url: string;
  /** The next `n` answers are lost: the connection is cut when the answer's first bytes arrive. */
  loseAnswers(n: number): void;
  /** The next `n` answers are held: never forwarded (the client times out). */
  holdAnswers(n: number): void;
  /** Answers lost or held so far. */
  readonly faulted: number;
  close(): Promise<void>;
}

/** A TCP proxy to `targetPort` on 127.0.0.1 whose faults apply to whole answers, per chunk arriving. */
export async function startFaultyProxy(targetPort: number): Promise<FaultyProxy> {
  let lose = 0;
  let hold = 0;
  let faulted = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, "127.0.0.1");
    sockets.add(client).add(upstream);
    let holding = false;
    client.on("data", (d) => upstream.write(d));
    upstream.on("data", (d) => {
      if (holding) return;
      if (lose > 0) {
        lose--;
        faulted++;
        client.destroy();
        upstream.destroy();
        return;
      }
      if (hold > 0) {
        hold--;
        faulted++;
        holding = true;
        return;
      }
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on("close", end).on("error", end);
    upstream.on("close", end).on("error", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    loseAnswers: (n) => void (lose += n),
    holdAnswers: (n) => void (hold += n),
    get faulted() {
      return faulted;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
