/** Spawns the real entry point, with exactly the permissions deno.json declares, and reads what it did. */

import { permissionFlags } from "../../scripts/permissions.ts";

const ROOT = new URL("../../", import.meta.url);

/**
 * The permission flags of deno.json's default permission set: what `-P` grants `deno task start`
 * and the compile step, spelled out so that a run from anywhere (a temporary directory, a URL)
 * gets exactly the same.
 */
export const PERMISSIONS: readonly string[] = permissionFlags(
  await Deno.readTextFile(new URL("deno.json", ROOT)),
);

/** The entry point's path. */
export const MAIN = new URL("src/main.ts", ROOT).pathname;

/** What a finished run of the program did. */
export interface ProgramResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Options of {@linkcode runProgram}. */
export interface ProgramOptions {
  /** The only environment the program sees, besides PATH, HOME and Deno's cache. */
  readonly env?: Readonly<Record<string, string>>;
  /** The working directory; default a fresh empty one, so no stray `.env` is read. */
  readonly cwd?: string;
  /** The entry point to run instead of `src/main.ts` (a file path or URL). */
  readonly entry?: string;
  /** Extra `deno run` flags. */
  readonly denoFlags?: readonly string[];
  /** The permission flags instead of deno.json's set ({@linkcode PERMISSIONS}), e.g. `["-A"]`. */
  readonly permissions?: readonly string[];
}

function _command(args: readonly string[], options: ProgramOptions, cwd: string): Deno.Command {
  const env: Record<string, string> = { NO_COLOR: "1", ...options.env };
  for (const name of ["PATH", "HOME", "DENO_DIR", "SystemRoot", "TEMP", "TMP"]) {
    const value = Deno.env.get(name);
    if (value !== undefined && !(name in env)) env[name] = value;
  }
  return new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-prompt",
      "--quiet",
      ...(options.permissions ?? PERMISSIONS),
      ...(options.denoFlags ?? []),
      options.entry ?? MAIN,
      ...args,
    ],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  });
}

/**
 * Runs `src/main.ts` with `args` to its end, in a clean environment.
 *
 * @example
 * ```ts
 * const { code, stderr } = await runProgram(["--version"]);
 * ```
 */
export async function runProgram(
  args: readonly string[],
  options: ProgramOptions = {},
): Promise<ProgramResult> {
  const cwd = options.cwd ?? await Deno.makeTempDir({ prefix: "service-ci-e2e-" });
  const output = await _command(args, options, cwd).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** A started program, for tests that signal it while it runs. */
export interface RunningProgram {
  readonly process: Deno.ChildProcess;
  /** Resolves when stderr has shown `text`. */
  waitForStderr(text: string | RegExp): Promise<void>;
  /** Waits for the end and returns what it did. */
  finished(): Promise<ProgramResult>;
}

/** Starts `src/main.ts` without waiting for it. */
export async function startProgram(
  args: readonly string[],
  options: ProgramOptions = {},
): Promise<RunningProgram> {
  const cwd = options.cwd ?? await Deno.makeTempDir({ prefix: "service-ci-e2e-" });
  const process = _command(args, options, cwd).spawn();
  let stderr = "";
  const watchers: Array<{ test: (s: string) => boolean; resolve: () => void }> = [];
  const stderrDone = (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of process.stderr) {
      stderr += decoder.decode(chunk, { stream: true });
      for (const watcher of [...watchers]) {
        if (watcher.test(stderr)) {
          watchers.splice(watchers.indexOf(watcher), 1);
          watcher.resolve();
        }
      }
    }
  })();
  const stdoutText = new Response(process.stdout).text();
  return {
    process,
    waitForStderr(text) {
      const test = (s: string) => typeof text === "string" ? s.includes(text) : text.test(s);
      if (test(stderr)) return Promise.resolve();
      return new Promise((resolve) => watchers.push({ test, resolve }));
    },
    async finished() {
      const status = await process.status;
      await stderrDone;
      return { code: status.code, stdout: await stdoutText, stderr };
    },
  };
}
