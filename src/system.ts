/**
 * The program's real effects on the system, apart from the arguments, the environment and the
 * signals (which only `main.ts` touches) and the timers (`sleep.ts`): HTTP clients (made by the
 * HTTP policy, `http_policy.ts`), report files and CI tools.
 */

import { makePolicyFetch, requestSignal } from "./http_policy.ts";
import type { ReportFile } from "./report/deliver.ts";
import { type CommandOptions, type CommandResult, formatBound } from "./report/native_io.ts";
import { sleep } from "./sleep.ts";

/**
 * The fetch to use for the service: the global one, or one that also trusts `caCerts` (PEM).
 *
 * @example
 * ```ts
 * const fetcher = makeFetch(undefined);
 * ```
 */
export function makeFetch(caCerts: string | undefined): typeof fetch {
  return makePolicyFetch({ caCerts });
}

/**
 * The fetch for a CI's own HTTP channel: through `proxy` when given (Bitbucket's pipeline proxy).
 * With `timeoutMs`, each request gets `timeoutMs()` milliseconds, asked as it starts, by the HTTP
 * policy's {@linkcode requestSignal}; one that has not answered by then (a body being read
 * included) is aborted and rejects with `no answer within <bound>`.
 *
 * @example
 * ```ts
 * const fetcher = makeProxyFetch("http://localhost:29418", () => 10_000);
 * ```
 */
export function makeProxyFetch(
  proxy: string | undefined,
  timeoutMs?: () => number,
): typeof fetch {
  const via = makePolicyFetch({ proxy });
  if (timeoutMs === undefined) return via;
  return async (input, init) => {
    const ms = timeoutMs();
    const caller = init?.signal ?? undefined;
    const { signal, timeout } = requestSignal(ms, caller);
    try {
      return await via(input, { ...init, signal });
    } catch (error) {
      if (timeout.aborted && !caller?.aborted) {
        throw new Error(`no answer within ${formatBound(ms)}`, { cause: error });
      }
      throw error;
    }
  };
}

/**
 * Runs a CI's own command-line tool (`buildkite-agent`) found on PATH, with `options.stdin` as its
 * standard input and its stderr on ours. It never rejects: when it cannot be started, ends before
 * reading all of its input, or outlasts `options.timeoutMs` (then it gets SIGTERM, and SIGKILL
 * `options.killAfterMs` later), the result says so.
 *
 * @example
 * ```ts
 * const result = await runCommand("buildkite-agent", ["meta-data", "set", "k"], {
 *   stdin: "value",
 *   timeoutMs: 10_000,
 * });
 * ```
 */
export async function runCommand(
  program: string,
  args: readonly string[],
  options: CommandOptions,
): Promise<CommandResult> {
  if (!(options.timeoutMs > 0)) return { kind: "not-run", reason: "no time was left to run it" };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args: [...args],
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "null",
      stderr: "inherit",
    }).spawn();
  } catch (error) {
    return { kind: "not-run", reason: _notRunReason(error) };
  }
  // Written while the timer runs: a program that never reads would block a large input forever.
  const input = options.stdin === undefined
    ? Promise.resolve(undefined)
    : _writeInput(child.stdin, options.stdin);
  const ended = new AbortController();
  const timedOut = sleep(options.timeoutMs, ended.signal).then(() => true, () => false);
  const first = await Promise.race([Promise.all([child.status, input]), timedOut]);
  if (typeof first === "boolean") {
    await _stop(child, options.killAfterMs ?? 1000);
    return { kind: "timed-out", afterMs: options.timeoutMs };
  }
  ended.abort();
  const [status, inputError] = first;
  return { kind: "exited", code: status.code, ...(inputError === undefined ? {} : { inputError }) };
}

function _notRunReason(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "not on PATH";
  if (error instanceof Deno.errors.NotCapable) return "not permitted by --allow-run";
  return error instanceof Error ? error.message : String(error);
}

// Resolves with why the input could not be written (a program that ended without reading all
// of it: "Broken pipe"), or undefined once it was.
async function _writeInput(
  stdin: WritableStream<Uint8Array>,
  text: string,
): Promise<string | undefined> {
  const writer = stdin.getWriter();
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
    return undefined;
  } catch (error) {
    await writer.abort(error).catch(() => {});
    return error instanceof Error ? error.message : String(error);
  }
}

// SIGTERM, then SIGKILL when it has not ended `killAfterMs` later; resolves once it has ended.
async function _stop(child: Deno.ChildProcess, killAfterMs: number): Promise<void> {
  const kill = (signal: Deno.Signal) => {
    try {
      child.kill(signal);
    } catch {
      // It has ended already.
    }
  };
  kill("SIGTERM");
  const grace = new AbortController();
  const ended = await Promise.race([
    child.status.then(() => true),
    sleep(killAfterMs, grace.signal).then(() => false, () => true),
  ]);
  grace.abort();
  if (!ended) kill("SIGKILL");
  await child.status;
}

/**
 * Opens a report file before anything is rendered: created, and truncated unless `append`;
 * `rewind` puts back the length it had when opened.
 *
 * @example
 * ```ts
 * const file = await openReportFile("gate.xml", false);
 * await file.write("<testsuites/>\n");
 * file.close();
 * ```
 */
export async function openReportFile(path: string, append: boolean): Promise<ReportFile> {
  const file = await Deno.open(path, { write: true, create: true, append, truncate: !append });
  let start = 0;
  try {
    start = append ? (await file.stat()).size : 0;
  } catch {
    // Not a regular file (a pipe, /dev/full): there is no length to go back to.
  }
  const encoder = new TextEncoder();
  return {
    write: async (text) => {
      const bytes = encoder.encode(text);
      for (let written = 0; written < bytes.length;) {
        written += await file.write(bytes.subarray(written));
      }
    },
    rewind: async () => {
      await file.truncate(start);
      if (!append) await file.seek(0, Deno.SeekMode.Start);
    },
    close: () => {
      try {
        file.close();
      } catch {
        // Already closed.
      }
    },
  };
}

/**
 * Checks, before anything is sent, that a report can be written at `path` without writing to
 * it: resolves with what is wrong (one phrase), or `null`. An existing file is opened for writing
 * and closed, untouched; a new one must have an existing directory, which is tried by creating
 * and removing the file. Deno's own permission errors become a phrase, never its prompt text.
 *
 * @example
 * ```ts
 * const problem = await checkReportPath("reports/gate.xml"); // null, or e.g. "is a directory"
 * ```
 */
export async function checkReportPath(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path).catch((error) => {
      if (error instanceof Deno.errors.NotFound) return null;
      throw error;
    });
    if (info?.isDirectory) return "is a directory";
    if (info !== null && info !== undefined) {
      (await Deno.open(path, { write: true })).close();
      return null;
    }
    (await Deno.open(path, { write: true, createNew: true })).close();
    await Deno.remove(path);
    return null;
  } catch (error) {
    return _pathProblem(error);
  }
}

function _pathProblem(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "its directory does not exist";
  if (error instanceof Deno.errors.NotADirectory) {
    return "a part of its directory is not a directory";
  }
  if (error instanceof Deno.errors.IsADirectory) return "is a directory";
  if (error instanceof Deno.errors.NotCapable) {
    return "is outside what service-ci may write (its permission set covers files, not devices)";
  }
  if (error instanceof Deno.errors.PermissionDenied) return "is not writable (permission denied)";
  const message = error instanceof Error ? error.message : String(error);
  return `cannot be written (${message.split("\n")[0]})`;
}
