/** Runs a program to its end and hands back its exit code and its output as text. */

/** What a finished program did. */
export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@linkcode runCommand}: those of `Deno.Command`, whose output is always piped. */
export type CommandOptions = Omit<Deno.CommandOptions, "args" | "stdout" | "stderr">;

/**
 * Runs `command` with `args` to its end, its stdin closed unless `options.stdin` says otherwise.
 *
 * @example
 * ```ts
 * const dir = await Deno.makeTempDir();
 * const { code, stdout, stderr } = await runCommand("tar", ["-tzf", "a.tar.gz"], { cwd: dir });
 * ```
 */
export async function runCommand(
  command: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<CommandResult> {
  const output = await new Deno.Command(command, {
    stdin: "null",
    ...options,
    args: [...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}
