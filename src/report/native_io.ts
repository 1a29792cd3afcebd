/**
 * The seam between the run and each CI's native writer: the effects a writer may use, and the
 * shape every writer has, so writers stay pure where they can and testable where they cannot.
 */

import type { RunReport } from "../outcome.ts";

/** The effects a native writer may use; `run.ts` passes the real ones, tests pass fakes. */
export interface NativeIo {
  /** Prints one of our own CI log command lines (without its newline) on the command stream. */
  readonly command: (line: string) => void;
  /** Prints one line of diagnostics for the user (stderr), e.g. what could not be written. */
  readonly warn: (line: string) => void;
  /** Writes, or appends to, a text file. */
  readonly writeTextFile: (path: string, text: string, append: boolean) => Promise<void>;
  /**
   * Runs a program found on PATH with arguments and optional standard input. Resolves with its
   * exit code, or `undefined` when it could not be started (not on PATH, not permitted).
   */
  readonly runCommand: (
    program: string,
    args: readonly string[],
    stdin?: string,
  ) => Promise<number | undefined>;
  /** Makes the fetch to use for a CI's HTTP channel, through `proxy` when given. */
  readonly makeFetch: (proxy: string | undefined) => typeof fetch;
  /** Reads one environment variable (flags, environment and `.env` already merged). */
  readonly env: (name: string) => string | undefined;
}

/** One CI's native output: a collapsible progress section, then artifacts of the finished run. */
export interface NativeWriter {
  /** The CI's name as its users say it, for messages: `"Azure Pipelines"`. */
  readonly ci: string;
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
