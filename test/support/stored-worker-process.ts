/**
 * A worker process for the Stored multi-process tests: `npm run worker`'s startWorker (the production
 * composition, no HTTP) with the Stored plugin's test-only crash points. With a crash point named,
 * the process SIGKILLs itself there — a processor dying mid-invoice.
 *
 *   node --import tsx test/support/stored-worker-process.ts <config.json> [after-debit | after-sign]
 *
 * Prints `WORKER <owner>` when its workers run; SIGTERM stops it gracefully (exit 0).
 */
import { loadConfig } from "../../config/load.ts";
import { createLogger } from "../../core/log.ts";
import { startWorker } from "../../boot/worker.ts";
import { plugins } from "../../plugins/index.ts";
import { createStoredProcessingPlugin } from "../../plugins/stored-processing/plugin.ts";

const config = loadConfig({ argv: ["--config", process.argv[2]!], env: {} });
const crashAt = process.argv[3];
const die = () => void process.kill(process.pid, "SIGKILL");
const owner = `test-worker:${process.pid}`;
const stored = createStoredProcessingPlugin({
  owner,
  hooks: {
    afterDebit: crashAt === "after-debit" ? die : undefined,
    afterSign: crashAt === "after-sign" ? die : undefined,
  },
});
const log = createLogger({ level: "warn" });
const worker = await startWorker(config, { log, plugins: [...plugins.filter((p) => p.name !== "stored-processing"), stored] });
process.stdout.write(`WORKER ${owner}\n`);
process.once("SIGTERM", () => void worker.stop("SIGTERM").then(() => process.exit(0)));
