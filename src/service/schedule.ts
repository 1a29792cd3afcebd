/**
 * When to poll a run next: fast while the run is young, slower as it ages, capped.
 * Pure: the clock and the random source are the caller's.
 */

/** The first poll comes this long after the trigger. */
export const FIRST_POLL_MS = 1_000;
/** Each poll waits this share of the run's age on top of the first interval. */
export const GROWTH_PER_MS_OF_AGE = 0.15;
/** The default longest wait between two polls. */
export const DEFAULT_MAX_INTERVAL_MS = 10_000;
/** How far a wait is spread either way, so that many pipelines do not poll in lockstep. */
export const JITTER = 0.1;
/** `Retry-After` is obeyed within these bounds (contract §1). */
export const RETRY_AFTER_MIN_MS = 500;
/** See {@linkcode RETRY_AFTER_MIN_MS}. */
export const RETRY_AFTER_MAX_MS = 5 * 60_000;

/** The inputs of {@linkcode nextPollDelay}. */
export interface PollDelayInput {
  /** Time since the trigger answered (or since attaching to a run). */
  readonly ageMs: number;
  /** Time left before the deadline. */
  readonly remainingMs: number;
  /** The delay the service asked for with `Retry-After` on its last answer, if any. */
  readonly retryAfterMs?: number | undefined;
  /** The longest wait between two polls; default {@linkcode DEFAULT_MAX_INTERVAL_MS}. */
  readonly maxIntervalMs?: number;
  /** A number in [0, 1); `Math.random` in production. */
  readonly random: number;
}

/**
 * The delay before the next poll: `min(max, 1 s + 0.15 × age)` spread by ±10 %,
 * or the service's `Retry-After` (bounded to 0.5 s … 5 min) when it gave one,
 * and never past the deadline.
 *
 * @example
 * ```ts
 * nextPollDelay({ ageMs: 0, remainingMs: 60_000, random: 0.5 }); // 1000
 * nextPollDelay({ ageMs: 600_000, remainingMs: 60_000, random: 0.5 }); // 10000
 * nextPollDelay({ ageMs: 0, remainingMs: 60_000, retryAfterMs: 3_000, random: 0.5 }); // 3000
 * ```
 */
export function nextPollDelay(input: PollDelayInput): number {
  const remaining = Math.max(0, input.remainingMs);
  if (input.retryAfterMs !== undefined) {
    return Math.min(remaining, boundRetryAfter(input.retryAfterMs));
  }
  const max = input.maxIntervalMs ?? DEFAULT_MAX_INTERVAL_MS;
  const interval = Math.min(max, FIRST_POLL_MS + GROWTH_PER_MS_OF_AGE * Math.max(0, input.ageMs));
  const spread = interval * (1 - JITTER + 2 * JITTER * input.random);
  return Math.min(remaining, max, Math.round(spread));
}

/**
 * Bounds a service-requested delay to {@linkcode RETRY_AFTER_MIN_MS} … {@linkcode RETRY_AFTER_MAX_MS}.
 *
 * @example
 * ```ts
 * boundRetryAfter(0); // 500
 * ```
 */
export function boundRetryAfter(ms: number): number {
  return Math.min(RETRY_AFTER_MAX_MS, Math.max(RETRY_AFTER_MIN_MS, ms));
}
