/**
 * When to poll a run next: fast while the run is young, slower as it ages, capped.
 * Pure: the clock and the random source are the caller's.
 */

export const FIRST_POLL_MS = 1_000;
export const GROWTH_PER_MS_OF_AGE = 0.15;
export const DEFAULT_MAX_INTERVAL_MS = 10_000;
/** How far a wait is spread either way, so that many pipelines do not poll in lockstep. */
export const JITTER = 0.1;
/** `Retry-After` is obeyed within these bounds (contract §1). */
export const RETRY_AFTER_MIN_MS = 500;
export const RETRY_AFTER_MAX_MS = 5 * 60_000;

export interface PollDelayInput {
  /** Since the trigger answered, or since attaching to a run. */
  readonly ageMs: number;
  readonly remainingMs: number;
  readonly retryAfterMs?: number | undefined;
  readonly maxIntervalMs?: number;
  /** In [0, 1). */
  readonly random: number;
}

/** `min(max, 1 s + 0.15 × age)` spread by ±10 %, or the service's `Retry-After`. */
export function nextPollDelay(input: PollDelayInput): number {
  return retryAfterOr(input, () => {
    const max = input.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS;
    const age = Math.max(0, input.ageMs);
    const interval = Math.min(max, FIRST_POLL_MS + GROWTH_PER_MS_OF_AGE * age);
    return Math.min(max, Math.round(interval * (1 - JITTER + 2 * JITTER * input.random)));
  });
}

/** The service's `Retry-After` within its bounds, else `own()`; never past the time left. */
export function retryAfterOr(
  input: { readonly remainingMs: number; readonly retryAfterMs?: number | undefined },
  own: () => number,
): number {
  const wait = input.retryAfterMs === undefined
    ? own()
    : Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, input.retryAfterMs));
  return Math.min(Math.max(0, input.remainingMs), wait);
}
