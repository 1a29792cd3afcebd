/** The one retry loop of every client: what to wait, and whether to try again, is its caller's. */

import { HttpFailure } from "./failure.ts";

/**
 * Calls `attempt` (`tries` from 1) until it answers. After an {@linkcode HttpFailure}, `wait` gives
 * the pause before the next try (its `Retry-After`, a backoff), or `undefined` to throw it; it may
 * throw another error instead. Any other error is thrown as it is.
 */
export async function retrying<T>(
  attempt: (tries: number) => Promise<T>,
  wait: (failure: HttpFailure, tries: number) => number | undefined,
  /** The injected clock's: a fake one in tests. */
  sleep: (ms: number) => Promise<void>,
): Promise<T> {
  for (let tries = 1;; tries++) {
    try {
      return await attempt(tries);
    } catch (error) {
      const delayMs = error instanceof HttpFailure ? wait(error, tries) : undefined;
      if (delayMs === undefined) throw error;
      // None: at once, as a forge's request whose wait is its limits' pause.
      if (delayMs > 0) await sleep(delayMs);
    }
  }
}
