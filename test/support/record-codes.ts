/**
 * Preloaded by the test runner into every suite's process (`--import`): records the GW_* codes of
 * the problem+json answers the suite receives over fetch and node:http (see code-coverage.ts).
 */
import { installFetchRecorder, installNodeHttpRecorder } from "./code-coverage.ts";

installFetchRecorder();
installNodeHttpRecorder();
