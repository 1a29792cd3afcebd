/**
 * The program's effects, as narrow views: a module takes the view it needs (a {@linkcode Clock},
 * {@linkcode Http}, {@linkcode Files}, {@linkcode Programs}, {@linkcode Env}), never the whole
 * {@linkcode RunEffects}. `main.ts` builds the real ones (`system.ts`, `sleep.ts`); tests build
 * fakes. Below every module that uses it: only types of leaf modules are imported here.
 */

import type { Streams } from "./outputs/streams.ts";

/** A report file, opened before anything is rendered so that most failures come first. */
export interface ReportFile {
  /** Writes text at the file's current end. */
  write(text: string): Promise<void>;
  /** Puts the file back as it was when it was opened (truncated to its length then). */
  rewind(): Promise<void>;
  /**
   * Closes the file, and puts what was written in place: a report the program creates is moved
   * over its path only now. Rejects when it cannot be put there.
   */
  close(): Promise<void>;
  /** Closes the file and leaves nothing of what was written; never rejects. */
  discard(): Promise<void>;
}

/**
 * Time: a monotonic clock for every wait, deadline and duration, the wall clock for dates, and
 * the timers on the monotonic one, each interruptible. Every timer of the program comes from
 * here, so a fake clock (the tests' `FakeTime`) drives all of them.
 */
export interface Clock {
  /** Milliseconds on a monotonic clock: the one every wait, deadline and duration uses. */
  readonly monotonic: () => number;
  /** Wall-clock time in epoch milliseconds: `Retry-After` dates, a report's start time. */
  readonly now: () => number;
  /** Waits `ms`, or rejects with the signal's reason as soon as it aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * A signal that aborts with a `TimeoutError` `DOMException` after `ms`, as
   * `AbortSignal.timeout` does: the timer of one request. It does not keep the process alive.
   */
  readonly timeout: (ms: number) => AbortSignal;
}

/** How a fetch reaches the network. */
export interface FetchSetup {
  /** PEM certificates trusted besides the system's roots (`--ca-cert`). */
  readonly caCerts?: string | undefined;
  /** A proxy every request goes through (Bitbucket's pipeline proxy). */
  readonly proxy?: string | undefined;
}

/**
 * One HTTP exchange as the verbose mode tells it: never a header but the request id, never a body
 * but an error answer's, never the query.
 */
export interface Exchange {
  /** The method sent (`GET` after a 303). */
  readonly method: string;
  /** The host and port asked. */
  readonly host: string;
  /** The path asked, without its query and fragment: a pagination link's query stays unsaid. */
  readonly path: string;
  /** The answer's status; `null` when none came (refused, reset, timed out, aborted). */
  readonly status: number | null;
  /** From sending to the answer's headers (or to the failure), on the monotonic clock. */
  readonly durationMs: number;
  /** Which attempt of the caller's request this is, from 1; a redirect keeps its request's. */
  readonly attempt: number;
  /** The answer's request id (x-request-id, x-github-request-id, x-correlation-id, request-id). */
  readonly requestId: string | null;
  /**
   * The body of an answer of status 400 or more, as sent and unbounded in characters (within
   * the caller's byte cap): the teller bounds, sanitizes and masks it. `null` for another
   * status or a body that could not be read.
   */
  readonly errorBody: string | null;
}

/** Where each HTTP exchange is told (`--verbose`), and the clock that times it. */
export interface ExchangeLog {
  /** {@linkcode Clock.monotonic} of the run. */
  readonly monotonic: () => number;
  /** Tells one exchange; never throws. */
  readonly tell: (exchange: Exchange) => void;
}

/** The network: the fetch for each kind of request, and the timer each request is bounded by. */
export interface Http {
  /**
   * Makes the fetch for `setup`: the global one, or one that trusts extra certificates or goes
   * through a proxy. Throws a `TypeError` when Deno refuses the certificates or the proxy.
   */
  readonly makeFetch: (setup: FetchSetup) => typeof fetch;
  /** The timer of one request: {@linkcode Clock.timeout} of the run's clock. */
  readonly timeout: (ms: number) => AbortSignal;
  /** Where every exchange is told, when the verbose mode is on. */
  readonly log?: ExchangeLog | undefined;
}

/** The file system, as far as the program uses it. */
export interface Files {
  /**
   * Reads a regular text file; rejects as `Deno.readTextFile` does, and with `FileRefused` for a
   * path that is not a regular file or is too large to be one the program reads.
   */
  readonly readTextFile: (path: string) => Promise<string>;
  /**
   * What keeps a report from being written at a path, or `null` (checked before anything is
   * sent, without writing to it); `append` for a file the runner owns.
   */
  readonly checkReportPath: (path: string, append: boolean) => Promise<string | null>;
  /** Opens a report file: created, and truncated unless `append`. */
  readonly openReportFile: (path: string, append: boolean) => Promise<ReportFile>;
}

/** How to run one program: its input and its time bound. */
export interface CommandOptions {
  /** The program's standard input; none (`/dev/null`) when not given. */
  readonly stdin?: string | undefined;
  /** How long it may run; at 0 or less it is not started. */
  readonly timeoutMs: number;
  /** How long a program stopped with SIGTERM has to end before SIGKILL; default 1 s. */
  readonly killAfterMs?: number;
}

/** How a program run through {@linkcode Programs.runCommand} ended. */
export type CommandResult =
  | {
    /** It ran and exited. */
    readonly kind: "exited";
    /** Its exit code; 128 + the signal's number when a signal ended it. */
    readonly code: number;
    /** What it wrote on stdout, when the caller kept it (git's answers) and it was not too much. */
    readonly stdout?: string;
    /** Why its standard input could not be written (it ended without reading all of it). */
    readonly inputError?: string;
  }
  | {
    /** It could not be started. */
    readonly kind: "not-run";
    /** Why, e.g. `not on PATH`. */
    readonly reason: string;
  }
  | {
    /** It outlasted its time bound and was stopped (SIGTERM, then SIGKILL). */
    readonly kind: "timed-out";
    /** The bound it outlasted, in milliseconds. */
    readonly afterMs: number;
  };

/** How long one git command may run, and what ends it at once. */
export interface GitOptions {
  /** How long it may run; at 0 or less it is not started. */
  readonly timeoutMs: number;
  /** The run's interrupt: git is stopped as soon as it aborts. */
  readonly signal: AbortSignal;
}

/** Runs `git <args>` read-only: its trimmed stdout, or undefined on any failure. */
export type GitRunner = (args: readonly string[]) => Promise<string | undefined>;

/** The other programs the run starts. */
export interface Programs {
  /**
   * Runs git read-only within `options.timeoutMs`; its trimmed stdout, or undefined on any
   * failure, once it is stopped for outlasting its bound, or once `options.signal` aborts.
   */
  readonly git: (args: readonly string[], options: GitOptions) => Promise<string | undefined>;
  /**
   * Runs a program found on PATH (a CI's native channel) within `options.timeoutMs`; never
   * rejects: the result says how it ended.
   */
  readonly runCommand: (
    program: string,
    args: readonly string[],
    options: CommandOptions,
  ) => Promise<CommandResult>;
}

/** The process environment, as the program may read it. */
export interface Env {
  /** Reads one environment variable. */
  readonly get: (name: string) => string | undefined;
  /** Whether Deno's permission list refused reading a variable `get` said was unset. */
  readonly refused?: (name: string) => boolean;
}

/** The program's streams, and what stderr is. */
export interface Console extends Streams {
  /**
   * Whether stderr is a terminal that moves its cursor and shows colours (not `TERM=dumb`): a
   * live status line rather than log lines.
   */
  readonly stderrIsTerminal: boolean;
}

/**
 * Every effect of one invocation; `main.ts` passes the real ones, the tests fakes. Only the
 * pipeline (`run.ts`) holds all of them; it hands each module its views.
 */
export interface RunEffects {
  /** The command-line arguments, without the program's name. */
  readonly args: readonly string[];
  /** The environment. */
  readonly env: Env;
  /** Time. */
  readonly clock: Clock;
  /** The network. */
  readonly http: Http;
  /** Files. */
  readonly files: Files;
  /** Other programs. */
  readonly programs: Programs;
  /** The program's stdout and stderr. */
  readonly console: Console;
  /** Aborts with an `Interrupted` reason on SIGINT, SIGTERM or SIGHUP. */
  readonly interrupt: AbortSignal;
  /** A number in [0, 1), for jitter. */
  readonly random: () => number;
  /** A fresh UUID v4 (idempotency keys, output delimiters). */
  readonly uuid: () => string;
  /** The absolute working directory. */
  readonly cwd: string;
}
