/**
 * The stage compiler: folds an ordered stage list into one function that runs the stages in a
 * plain loop (ARCHITECTURE.md §8), with each route's stage list (its skips removed) resolved at
 * startup. The list itself lives in pipeline/stages.ts; boot hands it in.
 */
import type { RequestContext } from "../context.ts";
import type { CompiledRoute } from "../route-table.ts";
import type { Stage, StageDeps, StageFn } from "./define.ts";
import { STAGE_NAMES, type StageName } from "./names.ts";

export interface CompiledPipeline {
  readonly names: readonly StageName[];
  /**
   * Runs every stage of the request's route in order. Synchronous while the stages are (undefined
   * once all ran); from the first stage that returns a promise on, a promise of the rest.
   */
  run(ctx: RequestContext): void | Promise<void>;
}

/** Problems of a stage list: every name of the vocabulary once, in its order. */
export function stageListProblems(stages: readonly Stage[]): string[] {
  const names = stages.map((s) => s.name);
  if (names.length === STAGE_NAMES.length && names.every((n, i) => n === STAGE_NAMES[i])) return [];
  return [`the stage list must be ${STAGE_NAMES.join(", ")} in this order (got ${names.join(", ")})`];
}

export function compilePipeline(stages: readonly Stage[], deps: StageDeps, disabled: readonly StageName[] = []): CompiledPipeline {
  const active = stages.filter((s) => !disabled.includes(s.name));
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
