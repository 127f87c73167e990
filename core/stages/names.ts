/**
 * The stage vocabulary: every stage name, in pipeline order. The stages themselves live in
 * pipeline/ (one file each) and pipeline/stages.ts lists them in this order; boot hands that list
 * to the gateway, which checks it against these names.
 */
export const STAGE_NAMES = [
  "canonical-host",
  "route",
  "protocol",
  "routing-loop",
  "admission",
  "capacity-guard",
  "auth",
  "ip-allowlist",
  "quota",
  "mode",
] as const;

export type StageName = (typeof STAGE_NAMES)[number];

/** Stages a route may not skip: without them nothing is known about the request. */
export const MANDATORY_STAGES: readonly StageName[] = ["canonical-host", "route", "protocol", "routing-loop"];

export function isStageName(name: string): name is StageName {
  return (STAGE_NAMES as readonly string[]).includes(name);
}
