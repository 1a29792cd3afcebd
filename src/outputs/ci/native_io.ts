/**
 * The seam between the run and each CI's native writer: the effects a writer may use, and the
 * shape every writer has, so writers stay pure where they can and testable where they cannot.
 */

import type { ForgeClients } from "../../forge/clients.ts";
import type { RunReport } from "../../result/outcome.ts";
import type { FileReport } from "../deliver.ts";
import type { CommandResult } from "../../effects.ts";

/** The effects a native writer may use; `run.ts` passes the real ones, tests pass fakes. */
export interface NativeIo {
  /**
   * Prints one of our own CI log command lines (without its newline) on the command stream, or
   * on stderr when `stream` says so.
   */
  readonly command: (line: string, stream?: "stderr") => void;
  /** Prints one line of diagnostics for the user (stderr), e.g. what could not be written. */
  readonly warn: (line: string) => void;
  /** Writes, or appends to, a text file. */
  readonly writeTextFile: (path: string, text: string, append: boolean) => Promise<void>;
  /**
   * Runs a program found on PATH with arguments and optional standard input, stopped when it
   * outlasts its time bound (see {@linkcode nativeTimeBound}). Never rejects: how it ended is the
   * {@linkcode CommandResult}.
   */
  readonly runCommand: (
    program: string,
    args: readonly string[],
    stdin?: string,
  ) => Promise<CommandResult>;
  /**
   * The run's forge clients (`forge/clients.ts`), one per forge: a writer that speaks to a forge
   * (Bitbucket's Code Insights) shares it, and with it the forge's limits, with the commit
   * statuses and the comment.
   */
  readonly forgeClients: () => Promise<ForgeClients>;
  /** The time left for one request of this writer, in milliseconds: its channel's bound. */
  readonly requestBound: () => number;
  /** Reads one environment variable (flags, environment and `.env` already merged). */
  readonly env: (name: string) => string | undefined;
}

/** How long a native writer's programs and requests may take. */
export interface NativeTimeBounds {
  /** Each program or request. */
  readonly eachMs: number;
  /** All of them together, counted from the first. */
  readonly totalMs: number;
}

/**
 * The bounds of the real runs: a CI's tool or proxy that hangs holds the job up by at most
 * these, never without end.
 */
export const NATIVE_TIME_BOUNDS: NativeTimeBounds = { eachMs: 10_000, totalMs: 30_000 };

/**
 * Hands out time bounds for one native finish: each call gives the bound of the next program or
 * request, `bounds.eachMs`, or less when less is left of `bounds.totalMs` (counted from the first
 * call on `clock`); 0 once the total is spent.
 *
 * @example
 * ```ts
 * const bound = nativeTimeBound(() => performance.now());
 * bound(); // 10000
 * ```
 */
export function nativeTimeBound(
  monotonic: () => number,
  bounds: NativeTimeBounds = NATIVE_TIME_BOUNDS,
): () => number {
  let start: number | undefined;
  return () => {
    const now = monotonic();
    start ??= now;
    return Math.max(0, Math.min(bounds.eachMs, start + bounds.totalMs - now));
  };
}

/**
 * One CI's native output: a collapsible progress section, then artifacts of the finished run;
 * for a CI that reads files its runner names (GitHub's `GITHUB_OUTPUT`), reports too.
 * `_ciOutputs` in `src/outputs/mod.ts` turns a writer into the run's outputs.
 */
export interface NativeWriter {
  /** The CI's name as its users say it, for messages: `"Azure Pipelines"`. */
  readonly ci: string;
  /**
   * Set when the CI reads the writer's command lines only from stdout (TeamCity): what they are,
   * and what the user loses when stdout holds a document (`--json`) instead.
   */
  readonly stdoutOnly?: { readonly what: string; readonly lost: string };
  /**
   * The files the CI's runner names for reports (GitHub's step outputs and summary), read through
   * `env`: reports, so each is checked before anything is sent and a failure gives exit 3.
   */
  reportFiles?(env: (name: string) => string | undefined): readonly FileReport[];
  /**
   * Tells the CI about a usage error (exit 2, nothing sent), e.g. an annotation and definite step
   * outputs. Never throws: what cannot be written is one line through `io.warn`.
   */
  usageError?(message: string, io: NativeIo): Promise<void>;
  /** The command lines that open the collapsible progress section. */
  progressStart(title: string): readonly string[];
  /** The command lines that close it; `report` is the finished run. */
  progressEnd(report: RunReport): readonly string[];
  /**
   * Writes every native artifact of the finished run. Never throws and never changes the
   * verdict: each channel that fails is one line through `io.warn` naming what could not be
   * written.
   */
  finish(report: RunReport, io: NativeIo): Promise<void>;
}
