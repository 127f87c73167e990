import { createDependencyPolicy } from "../../adapters/policies.ts";
import { Pool } from "undici";
import { startDemoSimulator, CREDENTIALS, demoInvoice } from "../simulator/simulator-helpers.ts";
const sim = await startDemoSimulator();
sim.faults.set("sign", { kind: "timeout" });
const pool = new Pool(sim.url);
const p = createDependencyPolicy({ dependency: "x", timeoutMs: 300 });
try {
  await p.execute(async (signal) => {
    try {
      const r = await pool.request({ method: "POST", path: "/api/v1/invoice/sign", body: JSON.stringify(demoInvoice("X")), headers: { "x-api-key": CREDENTIALS.apiKey, "x-api-secret": CREDENTIALS.apiSecret }, signal });
      return r.statusCode;
    } catch (e: any) { console.log("inner", e.name, e.code, e.constructor.name, e.message); throw e; }
  });
} catch (e: any) { console.log("outer", e.name, e.code, e.failureClass, e.constructor.name, e.message, Object.keys(e)); }
await pool.close(); await sim.close();
