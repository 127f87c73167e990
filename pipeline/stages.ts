/**
 * STAGES: the ordered pipeline, the only place order lives (test/unit/pipeline-order.test.ts pins
 * it). `compilePipeline` folds every stage into one function that runs them in a plain loop
 * (ARCHITECTURE.md §8): stages a route skips are passed over; async stages are awaited.
 */
import type { RequestContext } from "../core/context.ts";
import { admissionStage } from "./admission.ts";
import { authStage } from "./auth.ts";
import { canonicalHostStage } from "./canonical-host.ts";
import { capacityGuardStage } from "./capacity-guard.ts";
import type { Stage, StageDeps, StageFn } from "./define-stage.ts";
import { ipAllowlistStage } from "./ip-allowlist.ts";
import { modeStage } from "./mode.ts";
import { protocolStage } from "./protocol.ts";
import { quotaStage } from "./quota.ts";
import { routeStage } from "./route.ts";
import { routingLoopStage } from "./routing-loop.ts";
import type { StageName } from "./stage-names.ts";

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

export interface CompiledPipeline {
  readonly names: readonly StageName[];
  run(ctx: RequestContext): Promise<void>;
}

export function compilePipeline(deps: StageDeps, disabled: readonly StageName[] = []): CompiledPipeline {
  const active = STAGES.filter((s) => !disabled.includes(s.name));
  const names = active.map((s) => s.name);
  const fns: StageFn[] = active.map((s) => s.create(deps));
  const count = fns.length;
  return {
    names,
    async run(ctx) {
      for (let i = 0; i < count; i++) {
        const route = ctx.route;
        if (route !== null && route.skips.has(names[i]!)) continue;
        const pending = fns[i]!(ctx);
        if (pending) await pending;
      }
    },
  };
}
