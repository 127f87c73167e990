/**
 * A stage: a factory that reads its config once and returns a named function (STYLE.md habit 7).
 * A stage answers early by throwing a catalog error; returning means "continue". Stages receive
 * ports and state through StageDeps and never import an adapter.
 */
import type { Config } from "../../config/schema.ts";
import type { AlertChannel, CoordinationStore } from "../../adapters/ports.ts";
import type { RequestContext } from "../context.ts";
import type { TenantDirectory } from "../directory.ts";
import type { Logger } from "../log.ts";
import type { GatewayMetrics } from "../metrics.ts";
import type { RouteTable } from "../route-table.ts";
import type { Runtime } from "../runtime.ts";
import type { StageName } from "./names.ts";

export interface StageDeps {
  config: Config;
  directory: TenantDirectory;
  routes: RouteTable;
  coordination: CoordinationStore;
  runtime: Runtime;
  log: Logger;
  /** Injected clock (milliseconds) for window arithmetic in tests. */
  now: () => number;
  /** Immediate operator signals (routing loops, capacity and safety incidents); null when not wired. */
  alerts: AlertChannel | null;
  metrics: GatewayMetrics;
}

export type StageFn = (ctx: RequestContext) => void | Promise<void>;

export interface Stage {
  readonly name: StageName;
  create(deps: StageDeps): StageFn;
}

export function defineStage(stage: Stage): Stage {
  return stage;
}
