/** GitHub Actions' writer: progress group, step outputs, job summary, annotations. */

import type { RunReport } from "../../report/outcome.ts";
import { cannotWrite } from "../deliver.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import { LOG_CONTROLS, type NativeWriter } from "./native_io.ts";
import type { RunEffects } from "../../effects.ts";

/** `uuid`: a fresh UUID v4 for the step outputs' heredoc delimiter. */
export function createGithubWriter({ uuid }: Pick<RunEffects, "uuid">): NativeWriter {
  const delimiter = () => `ghadelimiter_${uuid()}`;
  return {
    ci: "GitHub Actions",
    progressStart: () => ["::group::service-ci progress"],
    progressEnd: () => ["::endgroup::"],
    reportFiles(ci) {
      const fence = delimiter();
      const files = {
        GITHUB_OUTPUT: (report: RunReport) => githubOutputs(report, fence),
        GITHUB_STEP_SUMMARY: summaryMarkdown,
      };
      return Object.entries(files).flatMap(([name, render]) => {
        const path = ci[name];
        if (!path) return [];
        return [{ what: name, source: name, fixedBy: "the step", path, append: true, render }];
      });
    },
    finish(report, io) {
      for (const line of githubAnnotations(report)) io.command(line);
      return Promise.resolve();
    },
    // stderr: with --json, stdout must stay one JSON document, not yet known at a usage error.
    // Step outputs even then, so a later step's `if:` sees a definite value, not an empty one.
    async usageError(message, io) {
      const outputs = _outputFile([["passed", "false"], ["exit-code", "2"]], delimiter());
      io.command(_errorAnnotation("service-ci: usage error", message), "stderr");
      const path = io.config.ci?.GITHUB_OUTPUT;
      if (!path) return;
      try {
        await io.writeTextFile(path, outputs, true);
      } catch (error) {
        io.warn(cannotWrite("GITHUB_OUTPUT", path, error));
      }
    },
  };
}

/**
 * The heredoc form (`name<<DELIMITER`), so no value can spill into another output.
 *
 * @throws {TypeError} If the delimiter is empty or spans lines.
 * @throws {RangeError} If any value contains the delimiter.
 */
export function githubOutputs(report: RunReport, delimiter: string): string {
  return _outputFile(Object.entries(outputValues(report)), delimiter);
}

function _outputFile(outputs: readonly (readonly [string, string])[], delimiter: string): string {
  if (delimiter === "" || /[\r\n]/.test(delimiter)) {
    throw new TypeError(
      `The GITHUB_OUTPUT delimiter must be one non-empty line (got ${JSON.stringify(delimiter)})`,
    );
  }
  return outputs.map(([name, value]) => {
    // Like @actions/core: a delimiter inside a value would end the value early there.
    if (value.includes(delimiter)) {
      throw new RangeError(
        `The GitHub output "${name}" contains the delimiter; choose a fresh random delimiter`,
      );
    }
    return `${name}<<${delimiter}\n${value}\n${delimiter}\n`;
  }).join("");
}

export function githubAnnotations(report: RunReport): string[] {
  return gateProblems(report).map(({ title, message }) =>
    _errorAnnotation(`service-ci: ${title}`, message)
  );
}

function _errorAnnotation(title: string, message: string): string {
  const text = message.replace(LOG_CONTROLS, "");
  return `::error title=${escapeWorkflowProperty(title)}::${escapeWorkflowData(text)}`;
}

export function escapeWorkflowData(s: string): string {
  return s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

export function escapeWorkflowProperty(s: string): string {
  return escapeWorkflowData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");
}
