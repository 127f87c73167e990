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
  /**
   * Runs every stage of the request's route in order. Synchronous while the stages are (undefined
   * once all ran); from the first stage that returns a promise on, a promise of the rest.
   */
  run(ctx: RequestContext): void | Promise<void>;
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
    run(ctx) {
      for (let i = 0; i < head.length; i++) {
        const pending = head[i]!(ctx);
        if (pending) return pending.then(() => _rest(ctx, head, i + 1, plans));
      }
      const plan = plans.get(ctx.route!)!;
      for (let i = 0; i < plan.length; i++) {
        const pending = plan[i]!(ctx);
        if (pending) return pending.then(() => _continue(ctx, plan, i + 1));
      }
    },
  };
}

// --- Internal helpers ---

/** The rest of the head stages from `from`, then the route's plan, awaiting what waits. */
async function _rest(ctx: RequestContext, head: readonly StageFn[], from: number, plans: ReadonlyMap<CompiledRoute, StageFn[]>): Promise<void> {
  for (let i = from; i < head.length; i++) {
    const pending = head[i]!(ctx);
    if (pending) await pending;
  }
  await _continue(ctx, plans.get(ctx.route!)!, 0);
}

/** The route's plan from `from`, awaiting what waits. */
async function _continue(ctx: RequestContext, plan: readonly StageFn[], from: number): Promise<void> {
  for (let i = from; i < plan.length; i++) {
    const pending = plan[i]!(ctx);
    if (pending) await pending;
  }
}
