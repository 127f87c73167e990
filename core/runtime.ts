/**
 * Process-local runtime state: readiness, draining, and the in-flight counters the capacity guard
 * maintains (total and per canonical domain). Shared by the capacity-guard stage, the health
 * plugin and the lifecycle code.
 */
import type { RuntimeState, ServiceFacet, ServiceObservation, StatusReports } from "./plugin.ts";

export class Runtime implements RuntimeState {
  readonly startedAt = Date.now();
  #ready = false;
  #draining = false;
  #total = 0;
  readonly #perDomain = new Map<string, number>();
  readonly #idleWaiters = new Set<() => void>();
  readonly #services: Record<ServiceFacet, ServiceObservation> = {
    domainRegistry: { lastSuccessAt: null, lastFailureAt: null, lastFailureCode: null },
    tenantAuthorization: { lastSuccessAt: null, lastFailureAt: null, lastFailureCode: null },
    managementService: { lastSuccessAt: null, lastFailureAt: null, lastFailureCode: null },
    administratorService: { lastSuccessAt: null, lastFailureAt: null, lastFailureCode: null },
  };

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

  /**
   * One completed request's evidence about the services behind the directory (called once per
   * request, at completion): its code says which failed; what it got past says which answered.
   */
  observeServices(code: string | null, domainResolved: boolean, scheme: string | null, adminRoute: boolean, status: number, now: number): void {
    const s = this.#services;
    switch (code) {
      case "GW_DOMAIN_REGISTRY_UNAVAILABLE":
        return _failed(s.domainRegistry, code, now);
      case "GW_TENANT_AUTHORIZATION_UNAVAILABLE":
        return _failed(s.tenantAuthorization, code, now);
      case "GW_AUTH_CONTEXT_UNAVAILABLE":
        return _failed(adminRoute ? s.administratorService : s.tenantAuthorization, code, now);
      case "GW_MANAGEMENT_SERVICE_UNAVAILABLE":
        _failed(s.managementService, code, now);
    }
    if (domainResolved) s.domainRegistry.lastSuccessAt = now;
    if (scheme !== null) (scheme === "admin" ? s.administratorService : s.tenantAuthorization).lastSuccessAt = now;
    if (adminRoute && scheme === "admin" && status < 500) s.managementService.lastSuccessAt = now;
  }

  services(): Record<ServiceFacet, ServiceObservation> {
    return structuredClone(this.#services);
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

function _failed(o: ServiceObservation, code: string, now: number): void {
  o.lastFailureAt = now;
  o.lastFailureCode = code;
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
