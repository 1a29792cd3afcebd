/** The few read-only git commands detection and the `.env` rule run, each bounded in time. */

import type { Clock, GitOptions, GitRunner, RunEffects } from "../effects.ts";
import { runCommand } from "./system.ts";
import { nativeTimeBound } from "./bounds.ts";

// git answers in ms; one that does not (a lock, a hung mount, a prompt) would hold the run forever.
const GIT_BOUND_MS = 10_000;

// A commit, a branch or a remote's URL: anything longer is not an answer to trust.
const MAX_ANSWER_BYTES = 64 * 1024;

export interface RunGitOptions extends GitOptions {
  readonly clock: Pick<Clock, "sleep">;
  readonly cwd?: string;
}

// The only commands detection runs; anything else would be a mistake, so it is refused.
const READ_ONLY_COMMANDS: readonly (readonly string[])[] = [
  ["rev-parse", "HEAD"],
  ["rev-parse", "HEAD^2"],
  ["symbolic-ref", "--short", "HEAD"],
  ["remote", "get-url", "origin"],
  // Whether the working directory's .env is tracked (config/load.ts): exit 0 only when it is.
  ["ls-files", "--error-unmatch", "--", ".env"],
];

/**
 * git's trimmed stdout, or `undefined` on any failure (no git, no repository, a non-zero exit, the
 * timeout or the signal). stdin closed and stderr discarded: git can neither prompt nor print.
 */
export async function runGit(
  args: readonly string[],
  options: RunGitOptions,
): Promise<string | undefined> {
  if (!READ_ONLY_COMMANDS.some((allowed) => JSON.stringify(allowed) === JSON.stringify(args))) {
    throw new TypeError(
      `runGit() runs only ${READ_ONLY_COMMANDS.map((a) => `"git ${a.join(" ")}"`).join(", ")} ` +
        `(got "git ${args.join(" ")}")`,
    );
  }
  try {
    const result = await runCommand("git", args, {
      ...options,
      stdoutMaxBytes: MAX_ANSWER_BYTES,
      quiet: true,
    }, options.clock);
    return result.kind === "exited" && result.code === 0 ? result.stdout?.trim() : undefined;
  } catch {
    // Stopped by the interrupt: no answer, and the run goes on to report the interrupt.
    return undefined;
  }
}

/** The configuration's git, before the deadline starts: each command within {@linkcode GIT_BOUND_MS}. */
export function configGit(effects: Pick<RunEffects, "programs" | "interrupt">): GitRunner {
  return (args) =>
    effects.programs.git(args, { timeoutMs: GIT_BOUND_MS, signal: effects.interrupt });
}

/** Detection's git: all commands within one {@linkcode GIT_BOUND_MS}, stopped by an interrupt. */
export function boundedGit(
  effects: Pick<RunEffects, "clock" | "programs" | "interrupt">,
  timeoutMs: number,
): GitRunner {
  const bound = nativeTimeBound(effects.clock.monotonic, {
    eachMs: GIT_BOUND_MS,
    // A quarter of a short timeout at most: the deadline counts detection; the gate needs the rest.
    totalMs: Math.min(GIT_BOUND_MS, timeoutMs / 4),
  });
  return (args) => effects.programs.git(args, { timeoutMs: bound(), signal: effects.interrupt });
}
