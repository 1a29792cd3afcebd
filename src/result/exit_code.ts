/** The exit codes of contract §5, and how the codes of several agents combine into one. */

/** Every exit code the program uses. */
export const ExitCode = {
  /** Every agent's gate passed. */
  Passed: 0,
  /** At least one gate failed, and every other agent passed or failed. */
  Failed: 1,
  /** Usage or configuration error; no request was sent. */
  Usage: 2,
  /** A gate could not be checked. */
  Unchecked: 3,
  /** The timeout ran out before every run had a verdict. */
  TimedOut: 4,
  /** Interrupted by SIGINT. */
  Sigint: 130,
  /**
   * Interrupted by SIGTERM, or by SIGHUP: not the shell's 129, since `v1` adds no exit code
   * (docs/compatibility.md).
   */
  Sigterm: 143,
} as const;

// With several agents the first code of this list that any agent has is the process's code:
// an interrupt, then 2, 3, 4, 1, 0 (contract §5).
const PRECEDENCE: readonly number[] = [
  ExitCode.Sigterm,
  ExitCode.Sigint,
  ExitCode.Usage,
  ExitCode.Unchecked,
  ExitCode.TimedOut,
  ExitCode.Failed,
  ExitCode.Passed,
];

/**
 * Combines the exit codes of several agents: an interrupt (130, 143) wins over all,
 * then the first that applies of 2, 3, 4, 1, 0.
 *
 * @example
 * ```ts
 * combineExitCodes([0, 1, 0]); // 1
 * combineExitCodes([1, 4, 3]); // 3
 * ```
 */
export function combineExitCodes(codes: readonly number[]): number {
  if (codes.length === 0) throw new RangeError("combineExitCodes() needs at least one code");
  const unknown = codes.filter((code) => !(Object.values(ExitCode) as number[]).includes(code));
  if (unknown.length > 0) {
    throw new RangeError(`combineExitCodes() got unknown codes: ${unknown.join(", ")}`);
  }
  // Every code is known, so one of the list applies.
  return PRECEDENCE.find((code) => codes.includes(code))!;
}
