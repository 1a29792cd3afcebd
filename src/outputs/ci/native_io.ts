/** The seam between the run and each CI's native writer: the effects it may use and its shape. */

import type { ForgeClients } from "../../forge/clients.ts";
import type { RunReport } from "../../report/outcome.ts";
import type { FileReport } from "../output.ts";
import type { CommandResult } from "../../effects.ts";
import type { ForgeConfig } from "../../forge/forge.ts";
import type { Config } from "../../config/load.ts";
import { errorMessage } from "../../text/quote.ts";

export interface NativeIo {
  readonly command: (line: string, stream?: "stderr") => void;
  readonly warn: (line: string) => void;
  readonly writeTextFile: (path: string, text: string, append: boolean) => Promise<void>;
  /** Stopped when it outlasts its time bound. Never rejects. */
  readonly runCommand: (
    program: string,
    args: readonly string[],
    stdin?: string,
  ) => Promise<CommandResult>;
  /** The run's: Code Insights shares the forge's limits with the statuses and the comment. */
  readonly forgeClients: () => Promise<ForgeClients>;
  readonly requestBound: () => number;
  /** The run's `Config`; on a usage error, the CI's variables alone. */
  readonly config: ForgeConfig;
}

/** The GitHub action's outputs that Azure, TeamCity and Buildkite set too, in this order. */
export const CI_OUTPUTS = ["passed", "exit-code", "run-id", "url"] as const;

export interface NativeWriter {
  readonly ci: string;
  /** TeamCity reads command lines only from stdout: what is lost when `--json` holds it. */
  readonly stdoutOnly?: { readonly what: string; readonly lost: string };
  /** Each checked before anything is sent (a failure: exit 3); `ci`: `Config.ci`, as given. */
  reportFiles?(ci: Config["ci"]): readonly FileReport[];
  /** Exit 2, nothing sent. Never throws. */
  usageError?(message: string, io: NativeIo): Promise<void>;
  progressStart(title: string): readonly string[];
  progressEnd(report: RunReport): readonly string[];
  /** Never throws and never changes the verdict: a channel that fails is one `io.warn` line. */
  finish(report: RunReport, io: NativeIo): Promise<void>;
}

// In the job log a raw control would act on the terminal; line breaks are left to the escaping.
// deno-lint-ignore no-control-regex
export const LOG_CONTROLS = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

export function oneLine(error: unknown): string {
  return errorMessage(error).replace(/\s+/g, " ").trim();
}

/** Prints each line until one fails: then one warning, `failure (reason)`, and no more lines. */
export function printLines(io: NativeIo, lines: readonly string[], failure: string): void {
  for (const line of lines) {
    try {
      io.command(line);
    } catch (error) {
      return io.warn(`${failure} (${oneLine(error)})`);
    }
  }
}
