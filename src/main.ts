/**
 * The entry point: the only module that reads `Deno.args` and the environment, listens for
 * signals, or calls `Deno.exit`. Everything else is in `run.ts`, with these effects passed in.
 */

import { runGit } from "./git.ts";
import { ENV_VARIABLES, Interrupted, run } from "./run.ts";

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

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function makeFetch(caCerts: string | undefined): typeof fetch {
  if (caCerts === undefined) return fetch;
  const client = Deno.createHttpClient({ caCerts: [caCerts] });
  return (input, init) => fetch(input, { ...init, client });
}

const encoder = new TextEncoder();
const interrupt = new AbortController();
listenForSignals(interrupt);

const code = await run({
  args: Deno.args,
  env: readEnv,
  readTextFile: (path) => Deno.readTextFile(path),
  writeTextFile: (path, text, append) => Deno.writeTextFile(path, text, { append }),
  isDirectory: (path) => Deno.stat(path).then((info) => info.isDirectory, () => false),
  stdout: (text) => Deno.stdout.writeSync(encoder.encode(text)),
  stderr: (text) => Deno.stderr.writeSync(encoder.encode(text)),
  stderrIsTerminal: Deno.stderr.isTerminal(),
  interrupt: interrupt.signal,
  git: (args) => runGit(args),
  makeFetch,
  clock: () => performance.now(),
  sleep,
  random: Math.random,
  newIdempotencyKey: () => crypto.randomUUID(),
  now: Date.now,
});
Deno.exit(code);
