/**
 * Runs the gate's `run()` in this process as `src/main.ts` runs it — the real HTTP stack, report
 * files, git and CI tools of src/platform/system.ts — but on virtual time, so a run that polls for a
 * minute takes milliseconds. For what a run does; what only a process has (signals, exit codes
 * of the entry point, permissions, pipes, Deno's own variables) stays with tests/support/program.ts.
 */

import { resolve } from "node:path";
import { runGit } from "../../src/platform/git.ts";
import { run } from "../../src/run.ts";
import {
  checkReportPath,
  openReportFile,
  readTextFile,
  runCommand,
} from "../../src/platform/system.ts";
import { FakeTime } from "./fake_time.ts";
import type { ProgramResult } from "./program.ts";
import { ENV_VARIABLES } from "../../src/ci/detect.ts";
import { makePolicyFetch } from "../../src/http/fetch.ts";

/** Options of {@linkcode runInProcess}. */
export interface InProcessOptions {
  /** The only environment the run sees, as with `runProgram` (NO_COLOR=1 is added). */
  readonly env?: Readonly<Record<string, string>>;
  /** The working directory relative paths resolve against; default a fresh empty one. */
  readonly cwd?: string;
  /**
   * The virtual time to run on; default a new one. Give the fake service its `now` for checks
   * of when requests came.
   */
  readonly time?: FakeTime;
  /** Aborts the run as SIGINT/SIGTERM would (with an `Interrupted` reason). */
  readonly interrupt?: AbortSignal;
  /**
   * A CI's tools, by name: where each is (`buildkite-agent` → a stand-in's path), as a PATH entry
   * of the spawned program would find it, and whether it `hangs` (never ends by itself). A name
   * not given is looked up on this process's PATH.
   */
  readonly programs?: Readonly<Record<string, InProcessTool>>;
}

/** A CI tool of {@linkcode InProcessOptions.programs}. */
export interface InProcessTool {
  /** The program's path. */
  readonly path: string;
  /** It never ends by itself: its time bound ends it on virtual time. */
  readonly hangs?: boolean;
}

/**
 * Runs `run()` with `args` to its end and returns what the program would have: its exit code
 * and everything it wrote to stdout and stderr.
 *
 * @example
 * ```ts
 * const { code, stderr } = await runInProcess(["--agent", "not-a-uuid"]);
 * ```
 */
export async function runInProcess(
  args: readonly string[],
  options: InProcessOptions = {},
): Promise<ProgramResult> {
  const time = options.time ?? new FakeTime();
  const cwd = options.cwd ?? await Deno.makeTempDir({ prefix: "service-ci-in-process-" });
  const env: Record<string, string> = { NO_COLOR: "1", ...options.env };
  let stdout = "";
  let stderr = "";
  const path = (name: string) => resolve(cwd, name);
  const code = await run({
    args,
    // As main.ts: only the variables the program declares are read.
    env: { get: (name) => ENV_VARIABLES.includes(name) ? env[name] : undefined },
    files: {
      // A file read is real I/O: virtual time stands still meanwhile, as for a request, so the
      // event payload's 10 s bound never ends before a read that takes no real time.
      readTextFile: (name) => time.hold(readTextFile(path(name))),
      checkReportPath: (name, append) => checkReportPath(path(name), append),
      openReportFile: (name, append) => openReportFile(path(name), append),
    },
    console: {
      stdout: (text) => {
        stdout += text;
      },
      stderr: (text) => {
        stderr += text;
      },
      stderrIsTerminal: false,
    },
    interrupt: options.interrupt ?? new AbortController().signal,
    programs: {
      // Real git takes no virtual time, as a request does: its bound could otherwise end it.
      git: (gitArgs, gitOptions) => time.hold(runGit(gitArgs, { ...gitOptions, cwd, clock: time })),
      // A CI tool is real and takes no virtual time, as a request does; one that hangs lets time
      // move on until its bound ends, so the bound stops it without a real wait (and stopping it
      // takes no virtual time either).
      runCommand: (program, commandArgs, commandOptions) => {
        const tool = options.programs?.[program];
        const path = tool?.path ?? program;
        if (tool?.hangs !== true) {
          return time.hold(runCommand(path, commandArgs, commandOptions, time));
        }
        const stopped = Promise.withResolvers<void>();
        let stopping = false;
        const clock = {
          sleep: async (ms: number, signal: AbortSignal) => {
            await time.sleep(ms, signal);
            if (!stopping) void time.hold(stopped.promise);
            stopping = true;
          },
        };
        return runCommand(path, commandArgs, commandOptions, clock).finally(() =>
          stopped.resolve()
        );
      },
    },
    http: { makeFetch: (setup) => time.heldFetch(makePolicyFetch(setup)), timeout: time.timeout },
    clock: time,
    random: Math.random,
    uuid: () => crypto.randomUUID(),
    cwd,
  });
  return { code, stdout, stderr };
}

// Virtual time stands still while a request and its answer are on the wire: the answer is read
// in full (a copy of it) before the run may go on, so reading it later takes no I/O.
