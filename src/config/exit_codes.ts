/** The process's exit codes (contract §5) and what each means, for `--help` and every report. */

export const ExitCode = {
  Passed: 0,
  Failed: 1,
  Usage: 2,
  Unchecked: 3,
  TimedOut: 4,
  Sigint: 130,
  /** SIGHUP too: not the shell's 129, since `v1` adds no exit code (docs/compatibility.md). */
  Sigterm: 143,
} as const;

export const EXIT_MEANINGS: Readonly<Record<number, string>> = {
  [ExitCode.Passed]: "every agent's gate passed",
  [ExitCode.Failed]: "at least one gate failed",
  [ExitCode.Usage]: "a usage or configuration error; nothing was sent",
  [ExitCode.Unchecked]: "at least one gate could not be checked",
  [ExitCode.TimedOut]: "the timeout ran out before every run had a verdict",
  [ExitCode.Sigint]: "interrupted by SIGINT before every run had a verdict",
  [ExitCode.Sigterm]: "interrupted by SIGTERM or SIGHUP before every run had a verdict",
};
