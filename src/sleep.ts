/**
 * Waiting on Deno's own timers. The global `setTimeout` of Deno 2.9 is Node's, and its first use
 * loads Node's compatibility layer (about 10 ms, docs/performance.md); `AbortSignal.timeout`
 * runs on the runtime's timers and, while it has a listener, keeps the process alive just the same.
 */

/**
 * Waits `ms` milliseconds, or rejects with `signal.reason` as soon as `signal` aborts. A wait that
 * has ended either way no longer keeps the process alive.
 *
 * @example
 * ```ts
 * await sleep(10, new AbortController().signal);
 * ```
 */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    // AbortSignal.timeout refuses negative and non-finite delays, which setTimeout reads as 0.
    const timer = AbortSignal.timeout(Number.isFinite(ms) && ms > 0 ? ms : 0);
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
