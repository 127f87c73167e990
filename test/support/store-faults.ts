/**
 * A document store with a fault switch in front of every collection call: a test decides, per call,
 * whether it fails "before" (nothing written), "after" (written, then the answer is lost) or "late"
 * (the call fails at once and is performed LATE_MS later: a hung server applying its queue), or is
 * "slow" (performed and answered LATE_MS later, no failure). The gateway wraps it in its resilience
 * guard as it does any store, so a failure reaches the code under test as the
 * DependencyUnavailableError a real outage gives. The synchronous fast path of the
 * embedded store (`countNow`) stays synchronous and is faulted as its operation (`count`) is.
 */
import type { Doc, DocumentStore } from "../../adapters/ports.ts";

/** Decides, per store call, whether it fails. */
export type StoreFaultHook = (collection: string, method: string, args: unknown[]) => "before" | "after" | "late" | "slow" | null;

/** How much later a "late" call is performed. */
export const LATE_MS = 300;

export interface FaultyStore extends DocumentStore {
  /** Names of every collection opened through it. */
  readonly collections: Set<string>;
}

/** `fastPath: false` hides the synchronous variants, as a store held outside the process (MongoDB) has none. */
export function withStoreFaults(raw: DocumentStore, hook: StoreFaultHook | undefined, options: { fastPath?: boolean } = {}): FaultyStore {
  const fastPath = options.fastPath ?? true;
  const collections = new Set<string>();
  return {
    kind: raw.kind,
    collections,
    collection<T extends Doc>(name: string, spec?: Parameters<DocumentStore["collection"]>[1]) {
      collections.add(name);
      const inner = raw.collection<T>(name, spec);
      if (!hook && fastPath) return inner;
      return new Proxy(inner, {
        get(target, prop, receiver) {
          const value = Reflect.get(target, prop, receiver) as unknown;
          if (typeof value !== "function") return value;
          if (typeof prop === "string" && prop.endsWith("Now")) {
            if (!fastPath) return undefined;
            const method = prop.slice(0, -"Now".length);
            return (...args: unknown[]) => {
              if (hook?.(name, method, args) === "before") throw new Error("injected store failure");
              return (value as (...a: unknown[]) => unknown).apply(target, args); // read-only operations: no "after"
            };
          }
          return async (...args: unknown[]) => {
            const fault = hook?.(name, String(prop), args) ?? null;
            if (fault === "before") throw new Error("injected store failure");
            if (fault === "slow") await new Promise((r) => setTimeout(r, LATE_MS)); // no failure: a slow answer
            if (fault === "late") {
              setTimeout(() => void (value as (...a: unknown[]) => Promise<unknown>).apply(target, args).catch(() => undefined), LATE_MS);
              throw new Error("injected store failure (the call is performed later)");
            }
            const result = await (value as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            if (fault === "after") throw new Error("injected store failure after the write");
            return result;
          };
        },
      });
    },
    ping: () => raw.ping(),
    close: () => raw.close(),
  };
}
