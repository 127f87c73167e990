/**
 * A process that dies without closing its embedded fs store (SIGKILL to itself), for the journal's
 * crash test: 200 inserts, a checkpoint, then 100 updates and 50 deletes that only the journal holds.
 *
 *   node --import tsx test/support/journal-crash-process.ts <dir>
 */
import { createUnstorageDocumentStore } from "../../adapters/document-store/unstorage.ts";

const store = await createUnstorageDocumentStore({ driver: "fs", dir: process.argv[2]!, checkpointMs: 50 });
const c = store.collection("crash", { indexes: [{ fields: ["k"], unique: true }] });
for (let i = 0; i < 200; i++) await c.insert({ _id: `d${String(i).padStart(3, "0")}`, k: i, v: 0 });
await new Promise((r) => setTimeout(r, 300)); // at least one checkpoint: the inserts are in their files
await Promise.all(Array.from({ length: 100 }, (_, i) => c.updateOne({ _id: `d${String(i).padStart(3, "0")}` }, { $inc: { v: 1 } })));
await Promise.all(Array.from({ length: 50 }, (_, i) => c.delete(`d${String(150 + i).padStart(3, "0")}`)));
process.stdout.write("ACKNOWLEDGED\n");
process.kill(process.pid, "SIGKILL");
