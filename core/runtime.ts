/**
 * Process-local runtime state: readiness, draining, and the in-flight counters the capacity guard
 * maintains (total and per canonical domain). Shared by the capacity-guard stage, the health
 * plugin and the lifecycle code.
 */
import type { RuntimeState, StatusReports } from "./plugin.ts";

export class Runtime implements RuntimeState {
  readonly startedAt = Date.now();
  #ready = false;
  #draining = false;
  #total = 0;
  readonly #perDomain = new Map<string, number>();
  readonly #idleWaiters = new Set<() => void>();

  isReady(): boolean {
    return this.#ready && !this.#draining;
  }
  markReady(): void {
    this.#ready = true;
  }
  isDraining(): boolean {
    return this.#draining;
  }
  startDraining(): void {
    this.#draining = true;
  }

  /** Takes one in-flight slot unless a limit is reached; the caller must release it exactly once. */
  tryAcquire(domainKey: string, totalLimit: number, perDomainLimit: number): boolean {
    const current = this.#perDomain.get(domainKey) ?? 0;
    if (this.#total >= totalLimit || current >= perDomainLimit) return false;
    this.#total++;
    this.#perDomain.set(domainKey, current + 1);
    return true;
  }

  release(domainKey: string): void {
    const current = this.#perDomain.get(domainKey) ?? 0;
    if (current <= 1) this.#perDomain.delete(domainKey);
    else this.#perDomain.set(domainKey, current - 1);
    this.#total = Math.max(0, this.#total - 1);
    if (this.#total === 0) for (const wake of this.#idleWaiters) wake();
  }

  inFlight(): { total: number; perDomain: Record<string, number> } {
    return { total: this.#total, perDomain: Object.fromEntries(this.#perDomain) };
  }

  /** Resolves true when nothing is in flight, or false when `timeoutMs` passes first. */
  waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.#total === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (idle: boolean) => {
        clearTimeout(timer);
        this.#idleWaiters.delete(wake);
        resolve(idle);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#idleWaiters.add(wake);
    });
  }
}

/** The StatusReports of one gateway (core/plugin.ts). */
export function createStatusReports(): StatusReports {
  const reports = new Map<string, () => Promise<unknown>>();
  return {
    register(name, report) {
      if (reports.has(name)) throw new Error(`status report "${name}" is registered twice`);
      reports.set(name, report);
    },
    async collect() {
      const entries = await Promise.all(
        [...reports].map(async ([name, report]) => {
          try {
            return [name, await report()] as const;
          } catch (e) {
            return [name, { status: "unknown", error: (e as Error).name ?? "Error" }] as const;
          }
        }),
      );
      return Object.fromEntries(entries);
    },
  };
}
