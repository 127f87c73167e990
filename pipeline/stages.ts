/**
 * STAGES: the ordered pipeline, the only place order lives (test/pipeline/pipeline-order.test.ts
 * pins it). `compilePipeline` folds every stage into one function that runs them in a plain loop
 * (ARCHITECTURE.md §8), with each route's stage list (its skips removed) resolved at startup.
 */
import type { RequestContext } from "../core/context.ts";
import type { CompiledRoute } from "../core/route-table.ts";
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
  // Stages up to "route" run for every request (they find the route and cannot be skipped); the
  // rest is planned once per route at startup, so a request never checks its route's skip list.
  const split = names.indexOf("route") + 1;
  const head = fns.slice(0, split);
  const plans = new Map<CompiledRoute, StageFn[]>();
  for (const route of deps.routes.routes())
    plans.set(route, fns.slice(split).filter((_, i) => !route.skips.has(names[split + i]!)));
  return {
    names,
    async run(ctx) {
      for (const fn of head) {
        const pending = fn(ctx);
        if (pending) await pending;
      }
      for (const fn of plans.get(ctx.route!)!) {
        const pending = fn(ctx);
        if (pending) await pending;
      }
    },
  };
}
