/**
 * A run of service-ci from a URL as a user's machine makes it: `deno run` with the flags the docs
 * give, in a fresh working directory, a fresh Deno cache unless one is given, and only PATH and
 * the given variables in the environment.
 */

import { type CommandResult, runCommand } from "./command.ts";
import { PERMISSIONS } from "./program.ts";

/** The `deno run` flags the docs give for a run from a URL (the permission set of deno.json). */
export const URL_RUN_FLAGS: readonly string[] = ["--quiet", "--no-prompt", ...PERMISSIONS];

/** What {@linkcode runFromUrl} runs with besides its entry and arguments. */
export interface UrlRunOptions {
  /** Variables besides PATH, `NO_COLOR=1` and `DENO_NO_UPDATE_CHECK=1`. */
  readonly env?: Readonly<Record<string, string>>;
  /** The `deno run` flags; default {@linkcode URL_RUN_FLAGS}. */
  readonly flags?: readonly string[];
  /** The Deno to run; default this one. */
  readonly deno?: string;
  /** The Deno cache, kept afterwards; default a fresh one, removed afterwards. */
  readonly denoDir?: string;
}

/**
 * Runs `deno run <flags> <entry> <args>` and returns its exit code and output.
 *
 * @example
 * ```ts
 * const { code } = await runFromUrl("http://127.0.0.1:8080/src/main.ts", ["--version"]);
 * ```
 */
export async function runFromUrl(
  entry: string,
  args: readonly string[],
  options: UrlRunOptions = {},
): Promise<CommandResult> {
  const denoDir = options.denoDir ??
    await Deno.makeTempDir({ prefix: "service-ci-url-deno-dir-" });
  const cwd = await Deno.makeTempDir({ prefix: "service-ci-url-cwd-" });
  try {
    return await runCommand(
      options.deno ?? Deno.execPath(),
      ["run", ...(options.flags ?? URL_RUN_FLAGS), entry, ...args],
      {
        cwd,
        env: {
          PATH: Deno.env.get("PATH") ?? "",
          DENO_DIR: denoDir,
          NO_COLOR: "1",
          DENO_NO_UPDATE_CHECK: "1",
          ...options.env,
        },
        clearEnv: true,
      },
    );
  } finally {
    if (options.denoDir === undefined) await Deno.remove(denoDir, { recursive: true });
    await Deno.remove(cwd, { recursive: true });
  }
}
