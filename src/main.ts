/**
 * The entry point: the only module that reads `Deno.args` and the environment, listens for
 * signals or calls `Deno.exit`. Everything else is in `run.ts`, with the real effects
 * (`effects.ts`: the clock of `sleep.ts`, the HTTP policy, the files and programs of `system.ts`)
 * passed in.
 */

import { denoVersionRefusal } from "./platform/deno_version.ts";

// First, before any module that an old Deno could crash on (with exit 1, a failed gate's code)
// is loaded: those are imported below, once the Deno is known to run them.
const refusal = denoVersionRefusal(Deno.version.deno);
if (refusal !== undefined) {
  writeAll(Deno.stderr, `${refusal}\n`);
  Deno.exit(2);
}

const [
  { runGit },
  { makePolicyFetch },
  { Interrupted },
  { run },
  system,
  { systemClock },
  { isCapableTerminal },
] = await Promise.all([
  import("./platform/git.ts"),
  import("./http/policy.ts"),
  import("./platform/signals.ts"),
  import("./run.ts"),
  import("./platform/system.ts"),
  import("./platform/clock.ts"),
  import("./outputs/streams.ts"),
]);

/** The variables Deno's permission list (`--allow-env`) refused to let the program read. */
const refusedEnv = new Set<string>();

/**
 * Reads one variable; `run.ts` asks only for those the program declares (`ENV_VARIABLES`). One
 * the permissions do not grant reads as unset rather than crashing a gate over metadata, and is
 * remembered, so that a required setting missing for that reason is said as such.
 */
function readEnv(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      refusedEnv.add(name);
      return undefined;
    }
    throw error;
  }
}

// SIGHUP (a closed terminal, a CI agent stopping the job) would otherwise end the process
// before any report is written.
function listenForSignals(controller: AbortController): void {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    try {
      Deno.addSignalListener(signal, () => {
        if (!controller.signal.aborted) controller.abort(new Interrupted(signal));
      });
    } catch {
      // Windows has no SIGTERM or SIGHUP listener; Ctrl-C still arrives as SIGINT.
    }
  }
}

// A pipe may take part of a write at a time.
function writeAll(stream: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  for (let written = 0; written < bytes.length;) {
    written += stream.writeSync(bytes.subarray(written));
  }
}

const interrupt = new AbortController();
listenForSignals(interrupt);

const code = await run({
  args: Deno.args,
  env: { get: readEnv, refused: (name) => refusedEnv.has(name) },
  clock: systemClock,
  // The request timer runs on the same clock as every other wait.
  http: { makeFetch: makePolicyFetch, timeout: systemClock.timeout },
  files: {
    readTextFile: system.readTextFile,
    checkReportPath: system.checkReportPath,
    openReportFile: system.openReportFile,
  },
  programs: {
    // git's bound runs on the same clock, and the interrupt stops it (run.ts passes both).
    git: (args, options) => runGit(args, { ...options, clock: systemClock }),
    // A CI tool's time bound runs on the same clock.
    runCommand: (program, args, options) => system.runCommand(program, args, options, systemClock),
  },
  console: {
    stdout: (text) => writeAll(Deno.stdout, text),
    stderr: (text) => writeAll(Deno.stderr, text),
    stderrIsTerminal: isCapableTerminal(Deno.stderr.isTerminal(), readEnv("TERM")),
  },
  interrupt: interrupt.signal,
  random: Math.random,
  uuid: () => crypto.randomUUID(),
  cwd: Deno.cwd(),
});
Deno.exit(code);
