/**
 * The program's effects, as narrow views: a module takes the view it needs, never the whole
 * {@linkcode RunEffects}. It imports only types of leaf modules, so every module may import it.
 */

/** Each may throw (`BrokenPipe` on a closed pipe). */
export type Streams = Readonly<Record<"stdout" | "stderr", (text: string) => void>>;

/** A report file, opened before anything is rendered so that most failures come first. */
export interface ReportFile {
  write(text: string): Promise<void>;
  rewind(): Promise<void>;
  /** A report the program creates is moved over its path only now; rejects when it cannot be. */
  close(): Promise<void>;
  /** Leaves nothing of what was written; never rejects. */
  discard(): Promise<void>;
}

/** Every timer of the program comes from here, so a fake clock (`FakeTime`) drives all of them. */
export interface Clock {
  readonly monotonic: () => number;
  /** Epoch milliseconds, for dates only (`Retry-After`, a report's start time). */
  readonly now: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** As `AbortSignal.timeout`, on the monotonic clock; it does not keep the process alive. */
  readonly timeout: (ms: number) => AbortSignal;
}

export interface FetchSetup {
  readonly caCerts?: string | undefined;
  readonly proxy?: string | undefined;
}

/** --verbose's line: no query, no header but the request id, no body but an error answer's. */
export interface Exchange {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly status: number | null;
  readonly durationMs: number;
  readonly attempt: number;
  readonly requestId: string | null;
  /** An error answer's body as its caller read it (`null`: none); the teller bounds, masks it. */
  readonly errorBody: string | null;
}

export type ExchangeLog = Pick<Clock, "monotonic"> & {
  readonly tell: (exchange: Exchange) => void;
};

export interface Http {
  /** @throws {TypeError} When Deno refuses the certificates or the proxy. */
  readonly makeFetch: (setup: FetchSetup) => typeof fetch;
  readonly timeout: (ms: number) => AbortSignal;
  readonly log?: ExchangeLog | undefined;
  /** The run's secrets (`Output.secrets`): masked in every forge request body, as in every file. */
  readonly secrets?: readonly string[] | undefined;
}

export interface Files {
  readonly readTextFile: (path: string) => Promise<string>;
  readonly checkReportPath: (path: string, append: boolean) => Promise<string | null>;
  readonly openReportFile: (path: string, append: boolean) => Promise<ReportFile>;
}

export interface CommandOptions {
  readonly stdin?: string | undefined;
  /** At 0 or less the program is not started. */
  readonly timeoutMs: number;
  /** From SIGTERM to SIGKILL; default 1 s. */
  readonly killAfterMs?: number;
}

export type CommandResult =
  | {
    readonly kind: "exited";
    /** 128 + the signal's number when a signal ended it. */
    readonly code: number;
    readonly stdout?: string;
    readonly inputError?: string;
  }
  | { readonly kind: "not-run"; readonly reason: string }
  | { readonly kind: "timed-out"; readonly afterMs: number };

export type GitOptions = { readonly timeoutMs: number; readonly signal: AbortSignal };

export type GitRunner = (args: readonly string[]) => Promise<string | undefined>;

/** Only the pipeline (`run.ts`) holds all of them; it hands each module its views. */
export interface RunEffects {
  readonly args: readonly string[];
  readonly env: {
    readonly get: (name: string) => string | undefined;
    /** Whether Deno's permission list refused reading a variable `get` said was unset. */
    readonly refused?: (name: string) => boolean;
  };
  readonly clock: Clock;
  readonly http: Http;
  readonly files: Files;
  readonly programs: {
    readonly git: (args: readonly string[], options: GitOptions) => Promise<string | undefined>;
    /** Never rejects: the result says how the program ended. */
    readonly runCommand: (
      program: string,
      args: readonly string[],
      options: CommandOptions,
    ) => Promise<CommandResult>;
  };
  readonly console: Streams & {
    /** Moves its cursor and shows colours (not `TERM=dumb`): a live status line, not log lines. */
    readonly stderrIsTerminal: boolean;
  };
  /** Aborts with an `Interrupted` reason on SIGINT, SIGTERM or SIGHUP. */
  readonly interrupt: AbortSignal;
  readonly random: () => number;
  readonly uuid: () => string;
  readonly cwd: string;
}
