/**
 * The scale-out topology's faults and invariants (./faults-suite.ts) on MongoDB-wire + Redis: the
 * several-hosts deployment of docs/deployment.md, started on this machine.
 */
import { runFaultsSuite } from "./faults-suite.ts";

await runFaultsSuite("mongodb");
