/** The coordination port (re-exported by adapters/ports.ts). */

export interface PermitResult {
  allowed: boolean;
  /** Permits left in the current window after this take (0 when refused). */
  remaining: number;
  /** When refused: milliseconds until the next permit can be granted (≥ 1). 0 when allowed. */
  retryAfterMs: number;
}

export interface CoordinationStore {
  /** "memory" or "redis". */
  readonly kind: string;
  /**
   * Takes one permit from a fixed window of `windowMs` keyed by `key`, allowing at most `limit`
   * permits per window. Atomic across every process sharing the store.
   */
  takePermit(key: string, limit: number, windowMs: number): Promise<PermitResult>;
  /**
   * The same operation answered synchronously: offered only by implementations that run in the
   * gateway process (the in-process store), and by their guard when the policy has no deadline.
   * Callers on a hot path use it when present (pipeline/quota.ts), else `takePermit`.
   */
  takePermitNow?(key: string, limit: number, windowMs: number): PermitResult;
  /** Acquires a short lease/lock; true when `owner` now holds it (re-entrant for the same owner). */
  acquireLease(key: string, owner: string, ttlMs: number): Promise<boolean>;
  /** Releases the lease only when `owner` holds it; true when released. */
  releaseLease(key: string, owner: string): Promise<boolean>;
  /**
   * In-flight accounting: adds `delta` (+1 / -1) to a shared gauge and returns the new value.
   * Entries expire after `ttlMs` without a change, so a crashed process cannot pin capacity forever.
   */
  adjustInFlight(key: string, delta: number, ttlMs: number): Promise<number>;
  /**
   * Change notification: delivers `message` to every current subscriber of `channel` in every
   * process sharing the store (the publisher's own subscribers included). At most once: a
   * subscriber that is cut off at that moment misses it and is told through `gap` instead.
   */
  publish(channel: string, message: string): Promise<void>;
  /** Starts receiving the messages published on `channel` from now on. */
  subscribe(channel: string, handlers: SubscriptionHandlers): Promise<Subscription>;
  /** Cheap round trip proving the store can enforce decisions; throws when it cannot. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface SubscriptionHandlers {
  /** One published message, in the order its publisher sent them. Exceptions it throws are ignored. */
  message(message: string): void;
  /**
   * Messages may have been lost: the subscription was cut off and is receiving again (Redis
   * reconnected). Whatever the subscriber caches from the messages must be re-read.
   */
  gap?(): void;
}

export interface Subscription {
  /** Stops delivery to these handlers; closing twice is a no-op. */
  close(): Promise<void>;
}
