/** The exit codes of contract §5, and how the codes of several agents combine into one. */

export const ExitCode = {
  Passed: 0,
  Failed: 1,
  /** No request was sent. */
  Usage: 2,
  Unchecked: 3,
  TimedOut: 4,
  Sigint: 130,
  /** SIGHUP too: not the shell's 129, since `v1` adds no exit code (docs/compatibility.md). */
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

export function combineExitCodes(codes: readonly number[]): number {
  if (codes.length === 0) throw new RangeError("combineExitCodes() needs at least one code");
  const unknown = codes.filter((code) => !(Object.values(ExitCode) as number[]).includes(code));
  if (unknown.length > 0) {
    throw new RangeError(`combineExitCodes() got unknown codes: ${unknown.join(", ")}`);
  }
  // Every code is known, so one of the list applies.
  return PRECEDENCE.find((code) => codes.includes(code))!;
}
