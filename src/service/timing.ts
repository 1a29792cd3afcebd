/**
 * When to poll next (fast while a run is young, slower as it ages, capped), retry delays for a
 * transient fault, and `Retry-After`. Pure: the clock and the random source are the caller's.
 */

export const FIRST_POLL_MS = 1_000;
export const GROWTH_PER_MS_OF_AGE = 0.15;
export const DEFAULT_MAX_INTERVAL_MS = 10_000;
/** How far a wait is spread either way, so that many pipelines do not poll in lockstep. */
export const JITTER = 0.1;
/** `Retry-After` is obeyed within these bounds (contract §1). */
export const RETRY_AFTER_MIN_MS = 500;
export const RETRY_AFTER_MAX_MS = 5 * 60_000;
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 30_000;
/** After this many transient faults in a row on one operation, the gate cannot be checked. */
export const MAX_CONSECUTIVE_FAULTS = 10;
/** How long a service that has never answered is tried: most often the address is wrong. */
export const UNREACHABLE_GIVE_UP_MS = 30_000;

interface _Wait {
  readonly remainingMs: number;
  readonly retryAfterMs?: number | undefined;
  /** In [0, 1). */
  readonly random: number;
}

/** `min(max, 1 s + 0.15 × age)` spread by ±10 %, or the service's `Retry-After`. */
export function nextPollDelay(
  input: _Wait & {
    /** Since the trigger answered, or since attaching to a run. */
    readonly ageMs: number;
    readonly maxIntervalMs?: number | undefined;
  },
): number {
  return _retryAfterOr(input, () => {
    const max = input.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS;
    const interval = Math.min(max, FIRST_POLL_MS + GROWTH_PER_MS_OF_AGE * Math.max(0, input.ageMs));
    return Math.min(max, Math.round(interval * (1 - JITTER + 2 * JITTER * input.random)));
  });
}

/** Exponential backoff with full jitter, unless the service sent `Retry-After`. */
export function retryDelay(input: _Wait & { readonly attempt: number }): number {
  return _retryAfterOr(input, () => Math.round(input.random * exponentialDelay(input.attempt)));
}

// The service's `Retry-After` within its bounds, else `own()`; never past the time left.
function _retryAfterOr(input: _Wait, own: () => number): number {
  const wait = input.retryAfterMs === undefined
    ? own()
    : Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, input.retryAfterMs));
  return Math.min(Math.max(0, input.remainingMs), wait);
}

/** Without jitter: the forge client waits it whole. `attempt` is 1 for the first retry. */
export function exponentialDelay(attempt: number, baseMs: number = BACKOFF_BASE_MS): number {
  return Math.min(BACKOFF_CAP_MS, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Delay-seconds or an HTTP date, as milliseconds from `now`. */
export function parseRetryAfter(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000;
  // An HTTP date (IMF-fixdate, RFC 850) has a weekday and GMT; Date.parse alone takes "1 GMT" too.
  if (!/^[a-z]{3,9}, \d{1,2}[ -][a-z]{3}[ -]\d{2,4} \d{2}:\d{2}:\d{2} GMT$/i.test(text)) {
    return undefined;
  }
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
