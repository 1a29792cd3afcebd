/** The real `Files` and `Programs` of `effects.ts`: files read, report files, git and CI tools. */

import type { Clock, CommandOptions, CommandResult, ReportFile } from "../effects.ts";
import { errorMessage, firstLine } from "../text/quote.ts";
import { FileRefused } from "./bounds.ts";
import { HttpFailure } from "../http/failure.ts";
import { readCapped } from "../http/fetch.ts";

/** The largest file the program reads: a `.env`, a CA bundle, a CI's event payload. */
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/**
 * Reads only a regular file (or a link to one) of at most {@linkcode MAX_READ_BYTES}: a named pipe,
 * `/dev/zero` or a huge file planted where a small one belongs would block or flood the run.
 *
 * @throws {FileRefused} For a path that is not a regular file, or is too large.
 */
export async function readTextFile(path: string): Promise<string> {
  const info = await Deno.stat(path);
  if (!info.isFile) throw new FileRefused(_notAFile(info) ?? "is not a regular file");
  const tooLarge = () => new FileRefused(`is larger than ${MAX_READ_BYTES / 1024 / 1024} MiB`);
  if (info.size > MAX_READ_BYTES) throw tooLarge();
  // Capped as it is read too, for a file that grows; the stream closes the file when it ends.
  const file = await Deno.open(path, { read: true });
  try {
    return await readCapped(new Response(file.readable), { maxBytes: MAX_READ_BYTES });
  } catch (error) {
    throw error instanceof HttpFailure ? tooLarge() : error;
  }
}

interface ProcessOptions extends CommandOptions {
  readonly cwd?: string;
  /** Keeps stdout up to this many bytes; none when it writes more. */
  readonly stdoutMaxBytes?: number;
  readonly quiet?: boolean;
  /** Stops it at once (SIGTERM, then SIGKILL); `runCommand` then rejects with the reason. */
  readonly signal?: AbortSignal;
}

/**
 * Runs a program on PATH; rejects only when `options.signal` aborts. Not started, input not all
 * read, or over `options.timeoutMs` (SIGTERM, then SIGKILL `killAfterMs` later): the result says.
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
    const reason = error instanceof Deno.errors.NotFound
      ? "not on PATH"
      : error instanceof Deno.errors.NotCapable
      ? "not permitted by --allow-run"
      : errorMessage(error);
    return { kind: "not-run", reason };
  }
  // Written while the timer runs: a program that never reads would block a large input forever.
  // Resolves with why it could not be written ("Broken pipe"), or undefined once it was.
  const input = options.stdin === undefined
    ? undefined
    : ReadableStream.from([new TextEncoder().encode(options.stdin)]).pipeTo(child.stdin).then(
      () => undefined,
      errorMessage,
    );
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
    _unlessDone(() => child.kill("SIGTERM"));
    const grace = new AbortController();
    const ended = await Promise.race([
      child.status.then(() => true),
      clock.sleep(options.killAfterMs ?? 1000, grace.signal).then(() => false, () => true),
    ]);
    grace.abort();
    if (!ended) _unlessDone(() => child.kill("SIGKILL"));
    await child.status;
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

// For what throws only once it is moot: killing an ended process, closing a closed file.
function _unlessDone(action: () => void): void {
  try {
    action();
  } catch {
    // Done already.
  }
}

/**
 * A file the runner owns (`append`: `GITHUB_OUTPUT`) or a character device is written in place;
 * any other report beside the path, moved over it on `close`: a link planted there (a fork's PR
 * can commit one) is replaced, never written through, and no half-written report is seen.
 */
export async function openReportFile(path: string, append: boolean): Promise<ReportFile> {
  const info = append ? null : await _info(path);
  if (append || info?.isCharDevice) {
    const file = await Deno.open(path, { write: true, create: true, append, truncate: !append });
    // Not a regular file (a pipe, /dev/full): there is no length to go back to.
    const start = append ? await file.stat().then((stat) => stat.size, () => 0) : 0;
    return _reportFile(file, start, append);
  }
  const problem = info === null ? null : _notAFile(info);
  if (problem !== null) throw new Error(problem);
  // Created only if nothing is there, so never through a link.
  const temporary = _temporaryPath(path);
  const file = await Deno.open(temporary, { write: true, createNew: true });
  if (info?.isFile && info.mode !== null && Deno.build.os !== "windows") {
    await Deno.chmod(temporary, info.mode & 0o777).catch(() => {});
  }
  return _reportFile(file, 0, false, { path, temporary });
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

function _notAFile(info: Deno.FileInfo): string | null {
  if (info.isDirectory) return "is a directory";
  if (info.isCharDevice) return "is a character device, not a regular file";
  if (info.isFifo) return "is a named pipe (FIFO), not a regular file";
  if (info.isSocket) return "is a socket, not a regular file";
  if (info.isBlockDevice) return "is a block device, not a regular file";
  return null;
}

function _nameStart(path: string): number {
  const windows = Deno.build.os === "windows";
  return Math.max(path.lastIndexOf("/"), windows ? path.lastIndexOf("\\") : -1) + 1;
}

// In the path's own directory (so the rename is one step on one file system), unique per run.
function _temporaryPath(path: string): string {
  const start = _nameStart(path);
  return `${path.slice(0, start)}.${path.slice(start)}.${
    crypto.randomUUID().slice(0, 8)
  }.service-ci.tmp`;
}

// Rewound to `start` (an appended file's length); `moved`: written as `temporary`, moved on close.
function _reportFile(
  file: Deno.FsFile,
  start: number,
  append: boolean,
  moved?: { readonly path: string; readonly temporary: string },
): ReportFile {
  const encoder = new TextEncoder();
  const close = () => _unlessDone(() => file.close());
  const remove = (path: string) => Deno.remove(path).catch(() => {});
  const rewind = async () => {
    await file.truncate(start);
    if (!append) await file.seek(0, Deno.SeekMode.Start);
  };
  return {
    write: async (text) => {
      const bytes = encoder.encode(text);
      for (let written = 0; written < bytes.length;) {
        written += await file.write(bytes.subarray(written));
      }
    },
    rewind,
    close: async () => {
      close();
      if (moved === undefined) return;
      await Deno.rename(moved.temporary, moved.path).catch(async (error) => {
        await remove(moved.temporary);
        throw error;
      });
    },
    // Nothing half-written stays, nor a report of an earlier run that would now be stale.
    discard: async () => {
      if (moved === undefined) await rewind().catch(() => {});
      close();
      if (moved === undefined) return;
      await remove(moved.temporary);
      await remove(moved.path);
    },
  };
}

/**
 * What is wrong with writing a report at `path` (one phrase), or `null`, checked before anything
 * is sent and without writing to it. Nothing that could block (a pipe, a socket) is opened.
 */
export async function checkReportPath(path: string, append: boolean): Promise<string | null> {
  try {
    const info = await _info(path, append);
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
    return `cannot be written (${firstLine(error)})`;
  }
}
