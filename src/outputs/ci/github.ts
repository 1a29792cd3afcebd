/** GitHub Actions' writer: progress group, step outputs, job summary, annotations. */

import type { RunReport } from "../../result/outcome.ts";
import { cannotWrite, type FileReport } from "../deliver.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import type { NativeIo, NativeWriter } from "./native_io.ts";

export interface GithubWriterOptions {
  /** A fresh UUID v4: the step outputs' heredoc delimiter. */
  readonly uuid: () => string;
}

export function createGithubWriter(options: GithubWriterOptions): NativeWriter {
  const delimiter = () => `ghadelimiter_${options.uuid()}`;
  return {
    ci: "GitHub Actions",
    progressStart: () => ["::group::service-ci progress"],
    progressEnd: () => ["::endgroup::"],
    reportFiles(runner) {
      const files: FileReport[] = [];
      const outputs = runner.GITHUB_OUTPUT;
      if (outputs) {
        const fence = delimiter();
        files.push({
          what: "GITHUB_OUTPUT",
          source: "GITHUB_OUTPUT",
          fixedBy: "the step",
          path: outputs,
          append: true,
          render: (report) => githubOutputs(report, fence),
        });
      }
      const summary = runner.GITHUB_STEP_SUMMARY;
      if (summary) {
        files.push({
          what: "GITHUB_STEP_SUMMARY",
          source: "GITHUB_STEP_SUMMARY",
          fixedBy: "the step",
          path: summary,
          append: true,
          render: summaryMarkdown,
        });
      }
      return files;
    },
    finish(report, io) {
      for (const line of githubAnnotations(report)) io.command(line);
      return Promise.resolve();
    },
    // stderr: with --json, stdout must stay one JSON document, not yet known at a usage error.
    async usageError(message, io: NativeIo) {
      const { annotation, outputs } = githubUsageError(message, delimiter());
      io.command(annotation, "stderr");
      const path = io.config.runner?.GITHUB_OUTPUT;
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

// The line is printed to the job log too, where a raw control character would act on the
// terminal; line breaks are kept for the escaping to encode.
function _errorAnnotation(title: string, message: string): string {
  // deno-lint-ignore no-control-regex
  const text = message.replace(/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/g, "");
  return `::error title=${escapeWorkflowProperty(title)}::${escapeWorkflowData(text)}`;
}

export function escapeWorkflowData(s: string): string {
  return s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

export function escapeWorkflowProperty(s: string): string {
  return escapeWorkflowData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/** Step outputs even then, so a later step's `if:` sees a definite value, not an empty one. */
export function githubUsageError(
  message: string,
  delimiter: string,
): { annotation: string; outputs: string } {
  return {
    annotation: _errorAnnotation("service-ci: usage error", message),
    outputs: _outputFile([["passed", "false"], ["exit-code", "2"]], delimiter),
  };
}
