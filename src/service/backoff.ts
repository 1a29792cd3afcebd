/** Delays between retries of a transient fault, and reading the `Retry-After` header. Pure. */

import { boundRetryAfter } from "./schedule.ts";

/** The first retry waits up to this long; each further one doubles it. */
export const BACKOFF_BASE_MS = 500;
/** No retry waits longer than this on the runner's own schedule. */
export const BACKOFF_CAP_MS = 30_000;
/** After this many transient faults in a row on one operation, the gate cannot be checked. */
export const MAX_CONSECUTIVE_FAULTS = 10;
/**
 * How long a service that has never answered is tried while its address refuses connections or
 * does not resolve, from the first such fault: most often the address or port is wrong.
 */
export const UNREACHABLE_GIVE_UP_MS = 30_000;

/**
 * The delay before retry number `attempt` (1 for the first retry): exponential backoff with full
 * jitter, `random × min(cap, base × 2^(attempt−1))`, unless the service sent `Retry-After`,
 * which is obeyed within 0.5 s … 5 min. Never past the deadline.
 *
 * @example
 * ```ts
 * retryDelay({ attempt: 3, remainingMs: 60_000, random: 0.5 }); // 1000
 * retryDelay({ attempt: 1, remainingMs: 60_000, retryAfterMs: 2_000, random: 0.5 }); // 2000
 * ```
 */
export function retryDelay(input: {
  readonly attempt: number;
  readonly remainingMs: number;
  readonly retryAfterMs?: number | undefined;
  readonly random: number;
}): number {
  const remaining = Math.max(0, input.remainingMs);
  if (input.retryAfterMs !== undefined) {
    return Math.min(remaining, boundRetryAfter(input.retryAfterMs));
  }
  return Math.min(remaining, Math.round(input.random * exponentialDelay(input.attempt)));
}

/**
 * The exponential backoff before retry number `attempt` (1 for the first retry), without
 * jitter: `min(capMs, baseMs × 2^(attempt−1))`. The service's retries take a random part of it
 * ({@linkcode retryDelay}); the forge client waits it whole.
 *
 * @example
 * ```ts
 * exponentialDelay(3); // 2000
 * exponentialDelay(2, 1_000); // 2000
 * ```
 */
export function exponentialDelay(
  attempt: number,
  baseMs: number = BACKOFF_BASE_MS,
  capMs: number = BACKOFF_CAP_MS,
): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Reads a `Retry-After` header value: delay-seconds or an HTTP date. Returns milliseconds from
 * `now`, or `undefined` when the header is absent or unreadable.
 *
 * @example
 * ```ts
 * parseRetryAfter("2", 0); // 2000
 * parseRetryAfter("Thu, 01 Jan 1970 00:00:05 GMT", 1_000); // 4000
 * ```
 */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  // An HTTP date (IMF-fixdate or RFC 850) names a weekday and GMT; Date.parse alone would also
  // read "1 GMT" or "2099 GMT" as dates.
  if (!/^[a-z]{3,9}, \d{1,2}[ -][a-z]{3}[ -]\d{2,4} \d{2}:\d{2}:\d{2} GMT$/i.test(text)) {
    return undefined;
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
