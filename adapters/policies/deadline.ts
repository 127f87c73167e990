/**
 * A call's deadline: one timer per call, the caller answered at the deadline even when the work
 * ignores it (what cockatiel calls an aggressive timeout), and the work told at the deadline so that
 * work that listens stops: `fn` receives a `CallDeadline`, whose `onExpire(abort)` is called then,
 * and whose `signal` (an AbortSignal, built only when read: one costs ~3 µs on Node 20, ~5 µs with a
 * listener) is aborted then. Our own rather than cockatiel's `timeout(ms, Aggressive)`, whose
 * per-call bookkeeping (a derived AbortController, abort listeners, `Promise.race`, event emitters,
 * and an `abort()` on every return that builds a DOMException with its stack) costs ~12 µs of CPU per
 * call against ~1 µs (docs/bench.md). No retry is composed in: store writes and regulator calls are
 * not all idempotent, so retrying is the caller's decision.
 */
import type { CallDeadline } from "./types.ts";

/** The deadline of a policy without one: never expires. */
export const NO_DEADLINE: CallDeadline = { signal: new AbortController().signal, onExpire() {} };

/** What `withDeadline` rejects with when the deadline passes first (never seen outside a policy's `execute`). */
export const DEADLINE_PASSED: unique symbol = Symbol("deadline passed");

/**
 * `fn(deadline)`, or a rejection with DEADLINE_PASSED at `ms` if it has not settled by then; the
 * deadline expires then (after the rejection, so the deadline always wins over the error that work
 * honouring it throws). Nothing happens to the work when `fn` settles in time.
 */
export function withDeadline<T>(fn: (deadline: CallDeadline) => Promise<T>, ms: number): Promise<T> {
  const deadline = new _Deadline();
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(DEADLINE_PASSED);
      deadline.expire();
    }, ms);
    const settle = <A>(done: (a: A) => void) => (a: A) => {
      clearTimeout(timer);
      done(a);
    };
    let work: Promise<T>;
    try {
      work = fn(deadline);
    } catch (error) {
      settle(reject)(error);
      return;
    }
    Promise.resolve(work).then(settle(resolve), settle(reject));
  });
}

// --- Internal helpers ---

/** One call's deadline: expires once, telling the work (its `onExpire` listener, its signal if built). */
class _Deadline implements CallDeadline {
  #controller: AbortController | null = null;
  #listener: (() => void) | null = null;
  #expired = false;

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  onExpire(abort: () => void): void {
    if (this.#expired) abort();
    else this.#listener = abort;
  }

  expire(): void {
    this.#expired = true;
    this.#controller?.abort();
    const listener = this.#listener;
    this.#listener = null;
    listener?.();
  }
}
