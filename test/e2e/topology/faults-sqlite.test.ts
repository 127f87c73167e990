/**
 * The scale-out topology's faults and invariants (./faults-suite.ts) on one SQLite file + Redis: the
 * several-processes-on-one-host deployment of docs/deployment.md (two gateways, two workers, nginx).
 */
import { runFaultsSuite } from "./faults-suite.ts";

await runFaultsSuite("sqlite");
