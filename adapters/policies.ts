/**
 * Resilience policies: one per dependency (and per regulator state, e.g. "regulator:TEST"),
 * built once at boot and shared by every call to that dependency (ARCHITECTURE.md §5, spec §3.5).
 * A policy is a deadline plus a circuit; which failures count is a separate value.
 *
 * The parts, under ./policies/: types (options, reports, the policy and registry interfaces),
 * circuit (the §3.5 state machine, `SlidingWindowCircuit`), classification (what counts as a
 * failure), deadline (one timer per call), policy (`createDependencyPolicy`) and registry
 * (`createPolicyRegistry`). This file re-exports them under their established names.
 */
export type { CircuitState, DependencySnapshot } from "./ports.ts";
export {
  CIRCUIT_DEFAULTS,
  systemClock,
  type CallDeadline,
  type CallReport,
  type CallVerdict,
  type CircuitThresholds,
  type Clock,
  type DependencyPolicy,
  type DependencyPolicyOptions,
  type ErrorClassification,
  type ExecuteOptions,
  type FailureClass,
  type PolicyRegistry,
  type PolicyRegistryDefaults,
  type ResultVerdict,
} from "./policies/types.ts";
export { classifyError } from "./policies/classification.ts";
export { SlidingWindowCircuit, type Admission } from "./policies/circuit.ts";
export { createDependencyPolicy } from "./policies/policy.ts";
export { createPolicyRegistry } from "./policies/registry.ts";
