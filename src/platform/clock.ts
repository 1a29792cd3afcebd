/**
 * Waiting on Deno's own timers. The global `setTimeout` of Deno 2.9 is Node's, and its first use
 * loads Node's compatibility layer (about 10 ms, docs/performance.md); `AbortSignal.timeout`
 * runs on the runtime's timers and, while it has a listener, keeps the process alive just the same.
 */

import type { Clock } from "../effects.ts";

/**
 * Waits `ms` milliseconds, or rejects with `signal.reason` as soon as `signal` aborts. A wait that
 * has ended either way no longer keeps the process alive. A wait of no time (0, negative, not a
 * number) resolves at once, without a timer.
 *
 * @example
 * ```ts
 * await sleep(10, new AbortController().signal);
 * ```
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  // No timer for no time: even a 0 ms one costs a turn of the event loop, about 2 ms, and a gate
  // confirming a run its trigger reported finished waits 0 ms. (AbortSignal.timeout would also
  // refuse the negative and non-finite delays that setTimeout reads as 0.)
  if (!(Number.isFinite(ms) && ms > 0)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = AbortSignal.timeout(ms);
    const onTimer = () => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    };
    const onAbort = () => {
      // Without a listener the runtime no longer waits for the timer before exiting.
      timer.removeEventListener("abort", onTimer);
      reject(signal.reason);
    };
    timer.addEventListener("abort", onTimer, { once: true });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The real {@linkcode Clock}: `performance.now()`, `Date.now()`, {@linkcode sleep}, and
 * `AbortSignal.timeout` for the request timer (which does not keep the process alive).
 *
 * @example
 * ```ts
 * const { signal } = new AbortController();
 * await systemClock.sleep(10, signal);
 * systemClock.timeout(30_000).aborted; // false
 * ```
 */
export const systemClock: Clock = {
  monotonic: () => performance.now(),
  now: () => Date.now(),
  sleep,
  timeout: (ms) => AbortSignal.timeout(ms),
};
