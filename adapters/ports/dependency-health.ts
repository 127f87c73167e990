/** The dependency health port (re-exported by adapters/ports.ts). */

/** The state of a dependency's circuit (spec §3.5). */
export type CircuitState = "closed" | "open" | "half_open";

/** One dependency's circuit and call counts, as /health/dependencies and /metrics show them. */
export interface DependencySnapshot {
  dependency: string;
  state: CircuitState;
  /** Eligible (success or failure) calls in the current window. */
  windowCalls: number;
  windowFailures: number;
  /** windowFailures / windowCalls, 0 when the window is empty. */
  failureRatio: number;
  /** ISO time the circuit last opened; present while open or half-open. */
  openedAt?: string;
  lastFailureClass?: string;
  lastFailureAt?: string;
  lastSuccessAt?: string;
  /** Calls actually made (refusals excluded), neutral ones included. */
  totalCalls: number;
  totalFailures: number;
  /** Calls refused by the circuit without being made. */
  totalRefused: number;
}

/** What the health plugin reads of the resilience policies: every dependency's circuit. */
export interface DependencyHealth {
  snapshot(): DependencySnapshot[];
}
