/**
 * The `service-ci` command: the only module that reads `Deno.args` and the environment, listens
 * for signals or calls `Deno.exit`; it passes the real effects to `run.ts`.
 */

import { denoVersionRefusal } from "./platform/deno_version.ts";

// Before loading any module an old Deno could crash on (exit 1 reads as a failed gate).
const refusal = denoVersionRefusal(Deno.version.deno);
if (refusal !== undefined) {
  writeAll(Deno.stderr, `${refusal}\n`);
  Deno.exit(2);
}

const [
  { runGit },
  { makePolicyFetch, selfProxied },
  { Interrupted },
  { run },
  system,
  { systemClock },
  { isCapableTerminal },
] = await Promise.all([
  import("./platform/git.ts"),
  import("./http/fetch.ts"),
  import("./platform/signals.ts"),
  import("./run.ts"),
  import("./platform/system.ts"),
  import("./platform/clock.ts"),
  import("./outputs/streams.ts"),
]);

const refusedEnv = new Set<string>();

// A variable `--allow-env` does not grant reads as unset rather than crashing a gate over
// metadata, and is remembered, so that a required setting missing for that reason is said so.
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

// A pipe may take part of a write at a time.
function writeAll(stream: { writeSync(bytes: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  for (let written = 0; written < bytes.length;) {
    written += stream.writeSync(bytes.subarray(written));
  }
}

const interrupt = new AbortController();
// Unheard, SIGHUP (a closed terminal, a CI agent stopping the job) would end us before any report.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  try {
    Deno.addSignalListener(signal, () => {
      if (!interrupt.signal.aborted) interrupt.abort(new Interrupted(signal));
    });
  } catch {
    // Windows has no SIGTERM or SIGHUP listener; Ctrl-C still arrives as SIGINT.
  }
}

const code = await run({
  args: Deno.args,
  env: { get: readEnv, refused: (name) => refusedEnv.has(name) },
  clock: systemClock,
  http: {
    makeFetch: (setup) => makePolicyFetch(setup, directClient),
    timeout: systemClock.timeout,
  },
  files: system,
  programs: {
    git: (args, options) => runGit(args, { ...options, clock: systemClock }),
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

/**
 * A plain-http loopback service's client, made while `NO_PROXY` names its host (brackets off: Deno
 * matches names and addresses apart, so `localhost` does not cover `127.0.0.1`), then put back at
 * once: its requests go straight to the host in origin form (`POST /api/v1/… HTTP/1.1`). Without
 * the permission for `NO_PROXY` (an older `--allow-env` list), the host is its own proxy.
 */
function directClient(url: URL, options: Deno.CreateHttpClientOptions): Deno.HttpClient {
  const permission = Deno.permissions.querySync({ name: "env", variable: "NO_PROXY" });
  if (permission.state !== "granted") return selfProxied(url, options);
  const before = Deno.env.get("NO_PROXY");
  Deno.env.set("NO_PROXY", url.hostname.replace(/^\[(.*)\]$/, "$1"));
  try {
    return Deno.createHttpClient(options);
  } finally {
    if (before === undefined) Deno.env.delete("NO_PROXY");
    else Deno.env.set("NO_PROXY", before);
  }
}
