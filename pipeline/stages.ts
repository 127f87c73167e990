/**
 * STAGES: the ordered pipeline, the only place order lives (test/pipeline/pipeline-order.test.ts
 * pins it). Boot hands this list to the gateway, whose stage compiler (core/stages/compile.ts)
 * folds it into one loop.
 */
import type { Stage } from "../core/stages/define.ts";
import { admissionStage } from "./admission.ts";
import { authStage } from "./auth.ts";
import { canonicalHostStage } from "./canonical-host.ts";
import { capacityGuardStage } from "./capacity-guard.ts";
import { ipAllowlistStage } from "./ip-allowlist.ts";
import { modeStage } from "./mode.ts";
import { protocolStage } from "./protocol.ts";
import { quotaStage } from "./quota.ts";
import { routeStage } from "./route.ts";
import { routingLoopStage } from "./routing-loop.ts";

export const STAGES: readonly Stage[] = [
  canonicalHostStage,
  routeStage,
  protocolStage,
  routingLoopStage,
  admissionStage,
  capacityGuardStage,
  authStage,
  ipAllowlistStage,
  quotaStage,
  modeStage,
];
