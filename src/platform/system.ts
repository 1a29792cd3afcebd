/**
 * The program's real effects on the system, apart from the arguments, the environment and the
 * signals (which only `main.ts` touches), the timers (`sleep.ts`) and HTTP (`http_policy.ts`):
 * the `Files` and `Programs` of `effects.ts`, report files and CI tools.
 */

import { FileRefused } from "../config/errors.ts";
import { BodyTooLargeError, readCapped } from "../http/policy.ts";
import type { Clock, CommandOptions, CommandResult, ReportFile } from "../effects.ts";

/** The largest file the program reads: a `.env`, a CA bundle, a CI's event payload. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * Reads a text file, only when it is a regular file (a link to one included) of at most
 * {@linkcode MAX_READ_BYTES}: a named pipe, a device such as `/dev/zero` or a huge file planted
 * where a small one belongs would block or flood the run before anything is sent.
 *
 * @example
 * ```ts
 * const text = await readTextFile(".env").catch(() => "");
 * ```
 *
 * @throws {FileRefused} For a path that is not a regular file, or is too large.
 */
export async function readTextFile(path: string): Promise<string> {
  const info = await Deno.stat(path);
  if (!info.isFile) throw new FileRefused(_notAFile(info) ?? "is not a regular file");
  const tooLarge = () => new FileRefused(`is larger than ${MAX_READ_BYTES / 1024 / 1024} MiB`);
  if (info.size > MAX_READ_BYTES) throw tooLarge();
  // The one capped reader (http_policy.ts): a file that grows past the cap while it is read is
  // cut there too. The stream closes the file when it ends or is cancelled.
  const file = await Deno.open(path, { read: true });
  try {
    return await readCapped(new Response(file.readable), { maxBytes: MAX_READ_BYTES });
  } catch (error) {
    throw error instanceof BodyTooLargeError ? tooLarge() : error;
  }
}

/** {@linkcode runCommand}'s options beyond a CI tool's (`CommandOptions`): what git needs. */
export interface ProcessOptions extends CommandOptions {
  /** The directory to run it in; the process' working directory when not given. */
  readonly cwd?: string;
  /** Keeps up to this many bytes of its stdout for the result (none kept when it writes more). */
  readonly stdoutMaxBytes?: number;
  /** Discards its stderr rather than passing it on to ours. */
  readonly quiet?: boolean;
  /**
   * Stops it at once when it aborts (SIGTERM, then SIGKILL `killAfterMs` later); `runCommand`
   * then rejects with the signal's reason, as a wait on the clock does.
   */
  readonly signal?: AbortSignal;
}

/**
 * Runs a program found on PATH (a CI's own tool such as `buildkite-agent`, or git), with
 * `options.stdin` as its standard input and its stderr on ours. It rejects only when
 * `options.signal` aborts: when it cannot be started, ends before reading all of its input, or
 * outlasts `options.timeoutMs` (then it gets SIGTERM, and SIGKILL `options.killAfterMs` later),
 * the result says so. Both waits are on `clock` (the run's).
 *
 * @example
 * ```ts
 * import { systemClock } from "./clock.ts";
 * const result = await runCommand("buildkite-agent", ["meta-data", "set", "k"], {
 *   stdin: "value",
 *   timeoutMs: 10_000,
 * }, systemClock);
 * ```
 */
export async function runCommand(
  program: string,
  args: readonly string[],
  options: ProcessOptions,
  clock: Pick<Clock, "sleep">,
): Promise<CommandResult> {
  options.signal?.throwIfAborted();
  if (!(options.timeoutMs > 0)) return { kind: "not-run", reason: "no time was left to run it" };
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(program, {
      args: [...args],
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: options.stdoutMaxBytes === undefined ? "null" : "piped",
      stderr: options.quiet ? "null" : "inherit",
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    }).spawn();
  } catch (error) {
    return { kind: "not-run", reason: _notRunReason(error) };
  }
  // Written while the timer runs: a program that never reads would block a large input forever.
  const input = options.stdin === undefined
    ? Promise.resolve(undefined)
    : _writeInput(child.stdin, options.stdin);
  const ended = new AbortController();
  const stdout = options.stdoutMaxBytes === undefined
    ? Promise.resolve(undefined)
    : readCapped(new Response(child.stdout), {
      maxBytes: options.stdoutMaxBytes,
      signal: ended.signal,
    }).catch(() => undefined);
  const bound = options.signal === undefined
    ? ended.signal
    : AbortSignal.any([ended.signal, options.signal]);
  const timedOut = clock.sleep(options.timeoutMs, bound).then(() => true, () => false);
  const first = await Promise.race([Promise.all([child.status, input, stdout]), timedOut]);
  ended.abort();
  if (typeof first === "boolean") {
    await _stop(child, options.killAfterMs ?? 1000, clock);
    options.signal?.throwIfAborted();
    return { kind: "timed-out", afterMs: options.timeoutMs };
  }
  const [status, inputError, text] = first;
  return {
    kind: "exited",
    code: status.code,
    ...(inputError === undefined ? {} : { inputError }),
    ...(text === undefined ? {} : { stdout: text }),
  };
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
async function _stop(
  child: Deno.ChildProcess,
  killAfterMs: number,
  clock: Pick<Clock, "sleep">,
): Promise<void> {
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
    clock.sleep(killAfterMs, grace.signal).then(() => false, () => true),
  ]);
  grace.abort();
  if (!ended) kill("SIGKILL");
  await child.status;
}

/**
 * Opens a report file before anything is rendered. One the runner owns and the program appends
 * to (`append`: `GITHUB_OUTPUT`) is opened in place, and `rewind` puts back the length it had.
 * One the program creates is written to a new file beside it, which `close` moves over the path:
 * a link planted at the path (a fork's pull request can commit one) is replaced, never written
 * through, and no half-written report is ever seen. A character device (`/dev/null`, a terminal)
 * is written in place; any other kind of file is refused.
 *
 * @example
 * ```ts
 * const file = await openReportFile("gate.xml", false);
 * await file.write("<testsuites/>\n");
 * await file.close();
 * ```
 */
export async function openReportFile(path: string, append: boolean): Promise<ReportFile> {
  if (append) return await _openInPlace(path, true);
  const info = await _info(path);
  if (info?.isCharDevice) return await _openInPlace(path, false);
  const problem = info === null ? null : _notAFile(info);
  if (problem !== null) throw new Error(problem);
  return await _openReplacing(path, info?.isFile ? info.mode : null);
}

// What is at `path`, the link itself unless `follow`; `null` when nothing is.
async function _info(path: string, follow = false): Promise<Deno.FileInfo | null> {
  try {
    return await (follow ? Deno.stat(path) : Deno.lstat(path));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

// What is wrong with a path that is neither a regular file, a link nor a character device.
function _notAFile(info: Deno.FileInfo): string | null {
  if (info.isDirectory) return "is a directory";
  if (info.isCharDevice) return "is a character device, not a regular file";
  if (info.isFifo) return "is a named pipe (FIFO), not a regular file";
  if (info.isSocket) return "is a socket, not a regular file";
  if (info.isBlockDevice) return "is a block device, not a regular file";
  return null;
}

function _writer(file: Deno.FsFile): (text: string) => Promise<void> {
  const encoder = new TextEncoder();
  return async (text) => {
    const bytes = encoder.encode(text);
    for (let written = 0; written < bytes.length;) {
      written += await file.write(bytes.subarray(written));
    }
  };
}

function _closeQuietly(file: Deno.FsFile): void {
  try {
    file.close();
  } catch {
    // Already closed.
  }
}

async function _openInPlace(path: string, append: boolean): Promise<ReportFile> {
  const file = await Deno.open(path, { write: true, create: true, append, truncate: !append });
  let start = 0;
  try {
    start = append ? (await file.stat()).size : 0;
  } catch {
    // Not a regular file (a pipe, /dev/full): there is no length to go back to.
  }
  const rewind = async () => {
    await file.truncate(start);
    if (!append) await file.seek(0, Deno.SeekMode.Start);
  };
  return {
    write: _writer(file),
    rewind,
    close: () => {
      _closeQuietly(file);
      return Promise.resolve();
    },
    discard: async () => {
      await rewind().catch(() => {});
      _closeQuietly(file);
    },
  };
}

// Where the file name of `path` starts: after its last separator (`\\` too on Windows).
function _nameStart(path: string): number {
  const cut = Math.max(
    path.lastIndexOf("/"),
    Deno.build.os === "windows" ? path.lastIndexOf("\\") : -1,
  );
  return cut + 1;
}

// A new file in the path's own directory (so the rename is one step on one file system), named
// so that no two runs meet.
function _temporaryPath(path: string): string {
  const start = _nameStart(path);
  return `${path.slice(0, start)}.${path.slice(start)}.${
    crypto.randomUUID().slice(0, 8)
  }.service-ci.tmp`;
}

// Created only if nothing is there, so never through a link.
async function _openReplacing(path: string, mode: number | null): Promise<ReportFile> {
  const temporary = _temporaryPath(path);
  const file = await Deno.open(temporary, { write: true, createNew: true });
  if (mode !== null && Deno.build.os !== "windows") {
    await Deno.chmod(temporary, mode & 0o777).catch(() => {});
  }
  const remove = () => Deno.remove(temporary).catch(() => {});
  return {
    write: _writer(file),
    rewind: async () => {
      await file.truncate(0);
      await file.seek(0, Deno.SeekMode.Start);
    },
    close: async () => {
      _closeQuietly(file);
      try {
        await Deno.rename(temporary, path);
      } catch (error) {
        await remove();
        throw error;
      }
    },
    // Nothing half-written stays, nor a report of an earlier run that would now be stale.
    discard: async () => {
      _closeQuietly(file);
      await remove();
      await Deno.remove(path).catch(() => {});
    },
  };
}

/**
 * Checks, before anything is sent, that a report can be written at `path` without writing to
 * it: resolves with what is wrong (one phrase), or `null`. Nothing is opened that could block: a
 * named pipe, a socket or a block device is refused as not a regular file. A file the program
 * replaces must have a directory that takes a new file (tried by creating one and removing it);
 * a link there is replaced, so what it points to is never opened. An existing regular file, a
 * character device and a file the runner owns (`append`) are opened for writing and closed,
 * untouched. Deno's own permission errors become a phrase, never its prompt text.
 *
 * @example
 * ```ts
 * const problem = await checkReportPath("reports/gate.xml", false); // null, or "is a directory"
 * ```
 */
export async function checkReportPath(path: string, append: boolean): Promise<string | null> {
  try {
    const info = append ? await _info(path, true) : await _info(path);
    const problem = info === null || info.isCharDevice ? null : _notAFile(info);
    if (problem !== null) return problem;
    if (info !== null && (append || info.isCharDevice || info.isFile)) {
      (await Deno.open(path, { write: true })).close();
      if (append || info.isCharDevice) return null;
    }
    // The directory must take a new file: the one a report is written to before it is moved.
    const probe = append ? path : _temporaryPath(path);
    (await Deno.open(probe, { write: true, createNew: true })).close();
    await Deno.remove(probe);
    return null;
  } catch (error) {
    return _pathProblem(error, path);
  }
}

function _pathProblem(error: unknown, path: string): string {
  if (error instanceof Deno.errors.NotFound) {
    // The separator itself for a file at the root; "." for a bare name.
    const start = _nameStart(path);
    const directory = start === 0 ? "." : path.slice(0, Math.max(start - 1, 1));
    return `is in a directory that does not exist; create it first (mkdir -p '${
      directory.replaceAll("'", "'\\''")
    }')`;
  }
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
