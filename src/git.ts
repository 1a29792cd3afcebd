/** Runs the few read-only git commands CI metadata detection needs. */

/**
 * Options for {@linkcode runGit}.
 *
 * @example
 * ```ts
 * const options: RunGitOptions = { cwd: "/work/checkout" };
 * ```
 */
export interface RunGitOptions {
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
 * Runs `git <args>` and resolves its trimmed stdout, or `undefined` on any failure: git not
 * installed, no permission to run it, not a repository, a non-zero exit. stdin is closed and
 * stderr discarded, so git can neither prompt nor write to the console.
 *
 * Only read-only commands are run: `rev-parse HEAD`, `rev-parse HEAD^2`,
 * `symbolic-ref --short HEAD` and `remote get-url origin`.
 *
 * @throws {TypeError} (as a rejection) for any other command.
 * @example
 * ```ts
 * const commit = await runGit(["rev-parse", "HEAD"]); // "4f1c2d3e…" or undefined
 * ```
 */
export async function runGit(
  args: readonly string[],
  options: RunGitOptions = {},
): Promise<string | undefined> {
  if (!READ_ONLY_COMMANDS.some((allowed) => _sameArgs(allowed, args))) {
    throw new TypeError(
      `runGit() runs only ${READ_ONLY_COMMANDS.map((a) => `"git ${a.join(" ")}"`).join(", ")} ` +
        `(got "git ${args.join(" ")}")`,
    );
  }
  try {
    const command = new Deno.Command("git", {
      args: [...args],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    const { success, stdout } = await command.output();
    return success ? new TextDecoder().decode(stdout).trim() : undefined;
  } catch {
    // NotFound (no git), NotCapable (no --allow-run=git), a missing cwd: all mean "no answer".
    return undefined;
  }
}

function _sameArgs(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}
