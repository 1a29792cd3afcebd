/**
 * Waiting on Deno's own timers: Deno 2.9's global `setTimeout` is Node's, and its first use loads
 * Node's compatibility layer (about 10 ms, docs/performance.md).
 */

import type { Clock } from "../effects.ts";

/** Waits `ms` milliseconds, or rejects with `signal.reason` as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  // No timer for no time: even 0 ms costs a turn of the event loop (about 2 ms), and a gate
  // confirming a finished run waits 0 ms. AbortSignal.timeout would refuse a negative or NaN delay.
  if (!(Number.isFinite(ms) && ms > 0)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = AbortSignal.timeout(ms);
    const onTimer = () => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    };
    const onAbort = () => {
      // An AbortSignal.timeout with a listener keeps the process alive.
      timer.removeEventListener("abort", onTimer);
      reject(signal.reason);
    };
    timer.addEventListener("abort", onTimer, { once: true });
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

export const systemClock: Clock = {
  monotonic: () => performance.now(),
  now: () => Date.now(),
  sleep,
  timeout: (ms) => AbortSignal.timeout(ms),
};
