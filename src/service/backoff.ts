/** Delays between retries of a transient fault, and reading the `Retry-After` header. Pure. */

import { retryAfterOr } from "./schedule.ts";

export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 30_000;
/** After this many transient faults in a row on one operation, the gate cannot be checked. */
export const MAX_CONSECUTIVE_FAULTS = 10;
/** How long a service that has never answered is tried: most often the address is wrong. */
export const UNREACHABLE_GIVE_UP_MS = 30_000;

/** Exponential backoff with full jitter, unless the service sent `Retry-After`. */
export function retryDelay(input: {
  readonly attempt: number;
  readonly remainingMs: number;
  readonly retryAfterMs?: number | undefined;
  readonly random: number;
}): number {
  return retryAfterOr(input, () => Math.round(input.random * exponentialDelay(input.attempt)));
}

/** Without jitter: the forge client waits it whole. `attempt` is 1 for the first retry. */
export function exponentialDelay(
  attempt: number,
  baseMs: number = BACKOFF_BASE_MS,
  capMs: number = BACKOFF_CAP_MS,
): number {
  return Math.min(capMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Delay-seconds or an HTTP date, as milliseconds from `now`. */
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
