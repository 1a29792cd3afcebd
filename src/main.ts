/**
 * The entry point: the only module that reads `Deno.args` and the environment, listens for
 * signals or calls `Deno.exit`. Everything else is in `run.ts`, with these effects (and those of
 * `system.ts`) passed in.
 */

import { ENV_VARIABLES } from "./env_variables.ts";
import { runGit } from "./git.ts";
import { Interrupted } from "./interrupted.ts";
import { run } from "./run.ts";
import {
  checkReportPath,
  makeFetch,
  makeProxyFetch,
  openReportFile,
  readTextFile,
  runCommand,
} from "./system.ts";
import { sleep } from "./sleep.ts";

/**
 * Reads one variable. Only the variables of {@linkcode ENV_VARIABLES} are asked for; one the
 * permissions do not grant reads as unset rather than crashing a gate over metadata.
 */
function readEnv(name: string): string | undefined {
  if (!ENV_VARIABLES.includes(name)) return undefined;
  try {
    return Deno.env.get(name);
  } catch (error) {
    if (error instanceof Deno.errors.NotCapable || error instanceof Deno.errors.PermissionDenied) {
      return undefined;
    }
    throw error;
  }
}

function listenForSignals(controller: AbortController): void {
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => {
        if (!controller.signal.aborted) controller.abort(new Interrupted(signal));
      });
    } catch {
      // Windows has no SIGTERM listener; Ctrl-C still arrives as SIGINT.
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
  env: readEnv,
  readTextFile,
  checkReportPath,
  openReportFile,
  stdout: (text) => writeAll(Deno.stdout, text),
  stderr: (text) => writeAll(Deno.stderr, text),
  stderrIsTerminal: Deno.stderr.isTerminal(),
  interrupt: interrupt.signal,
  git: (args) => runGit(args),
  makeFetch,
  clock: () => performance.now(),
  sleep,
  random: Math.random,
  uuid: () => crypto.randomUUID(),
  now: Date.now,
  cwd: Deno.cwd(),
  runCommand,
  makeProxyFetch,
});
Deno.exit(code);
