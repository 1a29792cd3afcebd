/** Runs the few read-only git commands CI metadata detection needs, each bounded in time. */

import type { Clock, GitOptions, GitRunner, RunEffects } from "../effects.ts";
import { nativeTimeBound } from "../outputs/ci/native_io.ts";
import { runCommand } from "./system.ts";

/**
 * How long detection's git commands may take together, and never more than the timeout. git
 * answers them in milliseconds; one that does not (a lock, a hung network file system, a
 * stand-in that waits for input) would otherwise hold the run without end.
 */
export const GIT_BOUND_MS = 10_000;

// A commit, a branch or a remote's URL: anything longer is not an answer to trust.
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Options for {@linkcode runGit}.
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * const options: RunGitOptions = {
 *   timeoutMs: 10_000,
 *   signal: new AbortController().signal,
 *   clock: systemClock,
 *   cwd: "/work/checkout",
 * };
 * ```
 */
export interface RunGitOptions extends GitOptions {
  /** The clock the bound runs on: the run's. */
  readonly clock: Pick<Clock, "sleep">;
  /** The directory to run git in; the process' working directory when not given. */
  readonly cwd?: string;
}

// The only commands detection runs; anything else would be a mistake, so it is refused.
const READ_ONLY_COMMANDS: readonly (readonly string[])[] = [
  ["rev-parse", "HEAD"],
  ["rev-parse", "HEAD^2"],
  ["symbolic-ref", "--short", "HEAD"],
  ["remote", "get-url", "origin"],
];

/**
 * Runs `git <args>` (through `runCommand`, as CI tools are run) and resolves its trimmed stdout,
 * or `undefined` on any failure: git not installed, no permission to run it, not a repository, a
 * non-zero exit, no answer within `options.timeoutMs` (then git is stopped), or
 * `options.signal` aborting (git is stopped at once). stdin is closed and stderr discarded, so
 * git can neither prompt nor write to the console.
 *
 * Only read-only commands are run: `rev-parse HEAD`, `rev-parse HEAD^2`,
 * `symbolic-ref --short HEAD` and `remote get-url origin`.
 *
 * @throws {TypeError} (as a rejection) for any other command.
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * const commit = await runGit(["rev-parse", "HEAD"], {
 *   timeoutMs: 10_000,
 *   signal: new AbortController().signal,
 *   clock: systemClock,
 * }); // "4f1c2d3e…" or undefined
 * ```
 */
export async function runGit(
  args: readonly string[],
  options: RunGitOptions,
): Promise<string | undefined> {
  if (!READ_ONLY_COMMANDS.some((allowed) => _sameArgs(allowed, args))) {
    throw new TypeError(
      `runGit() runs only ${READ_ONLY_COMMANDS.map((a) => `"git ${a.join(" ")}"`).join(", ")} ` +
        `(got "git ${args.join(" ")}")`,
    );
  }
  try {
    const result = await runCommand("git", args, {
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      stdoutMaxBytes: MAX_ANSWER_BYTES,
      quiet: true,
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    }, options.clock);
    return result.kind === "exited" && result.code === 0 ? result.stdout?.trim() : undefined;
  } catch {
    // Stopped by the interrupt: no answer, and the run goes on to report the interrupt.
    return undefined;
  }
}

/**
 * Detection's git: each command within what is left of one {@linkcode GIT_BOUND_MS} (at most a
 * quarter of the run's timeout), counted from the first, and stopped at once by an interrupt.
 */
export function boundedGit(
  effects: Pick<RunEffects, "clock" | "programs" | "interrupt">,
  timeoutMs: number,
): GitRunner {
  const bound = nativeTimeBound(effects.clock.monotonic, {
    eachMs: GIT_BOUND_MS,
    // A quarter of a short timeout at most: the deadline counts detection, and the gate needs
    // the rest of it.
    totalMs: Math.min(GIT_BOUND_MS, timeoutMs / 4),
  });
  return (args) => effects.programs.git(args, { timeoutMs: bound(), signal: effects.interrupt });
}

function _sameArgs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
