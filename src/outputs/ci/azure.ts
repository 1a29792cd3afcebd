/**
 * The Azure Pipelines native writer: a collapsible progress group, an error issue per gate that
 * did not pass, output variables and the job summary, all through `##vso[…]` logging commands.
 */

import { neutralizeLine } from "../../text/log_commands.ts";
import type { RunReport } from "../../result/outcome.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import type { NativeIo, NativeWriter } from "./native_io.ts";

/**
 * The summary's file name, in `AGENT_TEMPDIRECTORY` or else the working directory: one per
 * step, so a second service-ci step of the job does not overwrite the first one's summary (the
 * agent uploads the file after the command, not at once).
 *
 * @example
 * ```ts
 * azureSummaryFile("0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10");
 * // "service-ci-summary-0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10.md"
 * ```
 */
export function azureSummaryFile(id: string): string {
  return `service-ci-summary-${id}.md`;
}

/** Options for {@linkcode createAzureWriter}. */
export interface AzureWriterOptions {
  /** The absolute working directory, where the summary goes when `AGENT_TEMPDIRECTORY` is unset. */
  readonly workingDirectory: string;
  /** A fresh UUID, which makes the summary's file name this step's own. */
  readonly uuid: () => string;
}

/**
 * The Azure Pipelines writer. Output variables, set with `isOutput=true` so later jobs read them
 * too: `passed`, `exit_code`, `run_id` and `url`, with the GitHub action's meanings (several
 * agents give a JSON array). Azure allows only letters, digits, `.` and `_` in variable names, so
 * GitHub's `exit-code` and `run-id` are spelled with `_`.
 *
 * @example
 * ```ts
 * const writer = createAzureWriter({ workingDirectory: Deno.cwd(), uuid: () => crypto.randomUUID() });
 * writer.progressStart("service-ci: 1 agent"); // ["##[group]service-ci: 1 agent"]
 * ```
 */
export function createAzureWriter(options: AzureWriterOptions): NativeWriter {
  return {
    ci: "Azure Pipelines",
    progressStart: (title) => [`##[group]${neutralizeLine(title.replace(/[\r\n]+/g, " "))}`],
    progressEnd: () => ["##[endgroup]"],
    finish: (report, io) =>
      _finish(
        report,
        io,
        _join(
          io.env("AGENT_TEMPDIRECTORY") || options.workingDirectory,
          azureSummaryFile(options.uuid()),
        ),
      ),
  };
}

/**
 * One `##vso[…]` logging command, escaped as azure-pipelines-task-lib's `TaskCommand` writes it
 * and the agent unescapes it: in property values `%` → `%AZP25`, `\r` → `%0D`, `\n` → `%0A`,
 * `]` → `%5D`, `;` → `%3B`; in the message only the first three. Each property ends with `;`, and
 * one with an empty value is left out, as the library does.
 *
 * @example
 * ```ts
 * azureCommand("task.setvariable", { variable: "passed", isOutput: "true" }, "true");
 * // "##vso[task.setvariable variable=passed;isOutput=true;]true"
 * ```
 */
export function azureCommand(
  command: string,
  properties: Readonly<Record<string, string>>,
  message: string,
): string {
  const props = Object.entries(properties)
    .filter(([, value]) => value !== "")
    .map(([key, value]) => `${key}=${escapeAzureProperty(value)};`)
    .join("");
  return `##vso[${command}${props === "" ? "" : ` ${props}`}]${escapeAzureData(message)}`;
}

/**
 * Escapes the message of a logging command: `%` → `%AZP25`, `\r` → `%0D`, `\n` → `%0A`.
 *
 * @example
 * ```ts
 * escapeAzureData("100%\ndone"); // "100%AZP25%0Adone"
 * ```
 */
export function escapeAzureData(text: string): string {
  return text.replaceAll("%", "%AZP25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/**
 * Escapes a property value of a logging command: as {@linkcode escapeAzureData}, plus
 * `]` → `%5D` and `;` → `%3B`.
 *
 * @example
 * ```ts
 * escapeAzureProperty("a;b]"); // "a%3Bb%5D"
 * ```
 */
export function escapeAzureProperty(text: string): string {
  return escapeAzureData(text).replaceAll("]", "%5D").replaceAll(";", "%3B");
}

// Control characters other than line breaks, which the escaping encodes: the issue's message is
// printed in the job log too, where a raw control character would act on the terminal.
// deno-lint-ignore no-control-regex
const _CONTROL = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

const _OUTPUTS = [
  ["passed", "passed"],
  ["exit_code", "exit-code"],
  ["run_id", "run-id"],
  ["url", "url"],
] as const;

async function _finish(report: RunReport, io: NativeIo, path: string): Promise<void> {
  const lines = [
    ...gateProblems(report).map(({ message }) =>
      azureCommand("task.logissue", { type: "error" }, message.replace(_CONTROL, ""))
    ),
    ..._OUTPUTS.map(([name, github]) =>
      azureCommand(
        "task.setvariable",
        { variable: name, isOutput: "true" },
        outputValues(report)[github],
      )
    ),
  ];
  for (const line of lines) {
    try {
      io.command(line);
    } catch (error) {
      io.warn(`Azure Pipelines: could not print a logging command (${_reason(error)})`);
      break;
    }
  }
  try {
    await io.writeTextFile(path, summaryMarkdown(report), false);
  } catch (error) {
    io.warn(`Azure Pipelines: could not write the job summary to ${path} (${_reason(error)})`);
    return;
  }
  try {
    io.command(azureCommand("task.uploadsummary", {}, path));
  } catch (error) {
    io.warn(`Azure Pipelines: could not attach the job summary (${_reason(error)})`);
  }
}

function _reason(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ").trim();
}

// The directory's own separator (a Windows agent's temp directory uses `\\`), without node:path,
// whose import loads Deno's Node layer on every run.
function _join(directory: string, file: string): string {
  const separator = directory.includes("\\") && !directory.includes("/") ? "\\" : "/";
  return `${directory.replace(/[\\/]+$/, "")}${separator}${file}`;
}
