/** Azure Pipelines: a progress group, an error per gate not passed, output variables, a summary. */

import { neutralizeLine } from "../../text/log_commands.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import { CI_OUTPUTS, LOG_CONTROLS, type NativeWriter, oneLine, printLines } from "./native_io.ts";
import type { RunEffects } from "../../effects.ts";

/** One per step: the agent uploads it after the command, so a second step's would overwrite it. */
export function azureSummaryFile(id: string): string {
  return `service-ci-summary-${id}.md`;
}

/**
 * Output variables with the GitHub action's meanings, `isOutput=true` so later jobs read them too;
 * Azure allows only letters, digits, `.` and `_` in names, so `exit-code` is `exit_code`.
 */
export function createAzureWriter({ cwd, uuid }: Pick<RunEffects, "cwd" | "uuid">): NativeWriter {
  return {
    ci: "Azure Pipelines",
    progressStart: (title) => [`##[group]${neutralizeLine(title.replace(/[\r\n]+/g, " "))}`],
    progressEnd: () => ["##[endgroup]"],
    async finish(report, io) {
      printLines(io, [
        ...gateProblems(report).map(({ message }) =>
          azureCommand("task.logissue", { type: "error" }, message.replace(LOG_CONTROLS, ""))
        ),
        ...CI_OUTPUTS.map((name) =>
          azureCommand(
            "task.setvariable",
            { variable: name.replaceAll("-", "_"), isOutput: "true" },
            outputValues(report)[name],
          )
        ),
      ], "Azure Pipelines: could not print a logging command");
      const path = _join(io.config.ci?.AGENT_TEMPDIRECTORY || cwd, azureSummaryFile(uuid()));
      try {
        await io.writeTextFile(path, summaryMarkdown(report), false);
      } catch (error) {
        io.warn(`Azure Pipelines: could not write the job summary to ${path} (${oneLine(error)})`);
        return;
      }
      printLines(
        io,
        [azureCommand("task.uploadsummary", {}, path)],
        "Azure Pipelines: could not attach the job summary",
      );
    },
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
    .map(([key, value]) =>
      `${key}=${_escape(value).replaceAll("]", "%5D").replaceAll(";", "%3B")};`
    )
    .join("");
  return `##vso[${command}${props === "" ? "" : ` ${props}`}]${_escape(message)}`;
}

function _escape(text: string): string {
  return text.replaceAll("%", "%AZP25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

// Not node:path, whose import loads Deno's Node layer on every run.
function _join(directory: string, file: string): string {
  const separator = directory.includes("\\") && !directory.includes("/") ? "\\" : "/";
  return `${directory.replace(/[\\/]+$/, "")}${separator}${file}`;
}
