/**
 * The Azure Pipelines native writer: a progress group, an error issue per gate that did not pass,
 * output variables and the job summary.
 */

import { neutralizeLine } from "../../text/log_commands.ts";
import type { RunReport } from "../../result/outcome.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import { CI_OUTPUTS, type NativeIo, type NativeWriter } from "./native_io.ts";

/**
 * One per step: the agent uploads the file after the command, not at once, so a second
 * service-ci step of the job would overwrite the first one's summary.
 */
export function azureSummaryFile(id: string): string {
  return `service-ci-summary-${id}.md`;
}

export interface AzureWriterOptions {
  readonly workingDirectory: string;
  readonly uuid: () => string;
}

/**
 * The output variables have the GitHub action's meanings, set with `isOutput=true` so later jobs
 * read them too. Azure allows only letters, digits, `.` and `_` in variable names, so GitHub's
 * `exit-code` and `run-id` are spelled with `_`.
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
          io.config.runner?.AGENT_TEMPDIRECTORY || options.workingDirectory,
          azureSummaryFile(options.uuid()),
        ),
      ),
  };
}

/**
 * Escaped and with empty properties left out, as azure-pipelines-task-lib's `TaskCommand` does.
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

export function escapeAzureData(text: string): string {
  return text.replaceAll("%", "%AZP25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

export function escapeAzureProperty(text: string): string {
  return escapeAzureData(text).replaceAll("]", "%5D").replaceAll(";", "%3B");
}

// Printed in the job log too, where a raw control character would act on the terminal.
// deno-lint-ignore no-control-regex
const _CONTROL = /[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

async function _finish(report: RunReport, io: NativeIo, path: string): Promise<void> {
  const lines = [
    ...gateProblems(report).map(({ message }) =>
      azureCommand("task.logissue", { type: "error" }, message.replace(_CONTROL, ""))
    ),
    ...CI_OUTPUTS.map((name) =>
      azureCommand(
        "task.setvariable",
        { variable: name.replaceAll("-", "_"), isOutput: "true" },
        outputValues(report)[name],
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

// Not node:path, whose import loads Deno's Node layer on every run.
function _join(directory: string, file: string): string {
  const separator = directory.includes("\\") && !directory.includes("/") ? "\\" : "/";
  return `${directory.replace(/[\\/]+$/, "")}${separator}${file}`;
}
