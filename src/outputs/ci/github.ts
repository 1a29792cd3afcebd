/**
 * GitHub Actions' writer, one CI's writer beside the others (azure.ts, gitlab.ts, …): the
 * progress group, the step outputs and the job summary (files the runner names, so reports), and
 * annotations; and what a usage error tells the workflow.
 */

import type { RunReport } from "../../result/outcome.ts";
import { cannotWrite, type FileReport } from "../deliver.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import type { NativeIo, NativeWriter } from "./native_io.ts";

/** What GitHub's writer needs from the run. */
export interface GithubWriterOptions {
  /** A fresh UUID v4: the step outputs' heredoc delimiter. */
  readonly uuid: () => string;
}

/**
 * GitHub Actions' writer: `::group::` around the progress, `GITHUB_OUTPUT` and
 * `GITHUB_STEP_SUMMARY` as reports, `::error` annotations for the gates that need attention.
 *
 * @example
 * ```ts
 * const writer = createGithubWriter({ uuid: () => crypto.randomUUID() });
 * writer.progressStart("service-ci: waiting for 1 agent"); // ["::group::service-ci progress"]
 * ```
 */
export function createGithubWriter(options: GithubWriterOptions): NativeWriter {
  const delimiter = () => `ghadelimiter_${options.uuid()}`;
  return {
    ci: "GitHub Actions",
    progressStart: () => ["::group::service-ci progress"],
    progressEnd: () => ["::endgroup::"],
    reportFiles(env) {
      const files: FileReport[] = [];
      const outputs = env("GITHUB_OUTPUT");
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
      const summary = env("GITHUB_STEP_SUMMARY");
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
    // The annotation goes to stderr (io.warn's stream is not used: it is a command): with --json,
    // stdout must stay one JSON document, and the usage error happens before that is known.
    async usageError(message, io: NativeIo) {
      const { annotation, outputs } = githubUsageError(message, delimiter());
      io.command(annotation, "stderr");
      const path = io.env("GITHUB_OUTPUT");
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
 * The text to append to the file named by `GITHUB_OUTPUT`. Every value uses the heredoc form
 * (`name<<DELIMITER\nvalue\nDELIMITER\n`), so no value can spill into another output.
 *
 * Outputs:
 * - `passed`: `"true"` when every agent's gate passed, else `"false"` (also with
 *   `--warn-only`, which changes the exit code, not the verdict);
 * - `exit-code`: the process exit code;
 * - `run-id`, `status`, `url`: with one agent, its plain value (empty when not known); with
 *   several, a JSON array of the values in agent order (`null` when not known);
 * - `agents`: always a JSON array with one object per agent, in agent order, shaped like the
 *   `agents` of the `--json` document (`agent_id`, `run_id`, `status`, `passed`, `outcome`,
 *   `exit_code`, `duration_ms`, `url`, `error`, `gate`).
 *
 * @param delimiter A fresh random string such as `ghadelimiter_<uuid>`.
 * @throws {TypeError} If the delimiter is empty or spans lines.
 * @throws {RangeError} If any value contains the delimiter.
 */
export function githubOutputs(report: RunReport, delimiter: string): string {
  return _outputFile(Object.entries(outputValues(report)), delimiter);
}

// The GITHUB_OUTPUT text of `outputs`, each value in the multi-line-safe heredoc form.
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

/**
 * One `::error` workflow command per agent whose gate failed or could not be checked
 * (`failed`, `unchecked`, `timed_out`, `interrupted`); none for `passed` or `triggered`.
 * The message names the agent, the outcome, the run, the reason and the run's link; control
 * characters other than line breaks are dropped, then the command's own escaping applies.
 */
export function githubAnnotations(report: RunReport): string[] {
  return gateProblems(report).map(({ title, message }) =>
    _errorAnnotation(`service-ci: ${title}`, message)
  );
}

// One `::error` workflow command. The line is printed to the job log too, where a raw control
// character would act on the terminal; line breaks are kept for the escaping to encode.
function _errorAnnotation(title: string, message: string): string {
  // deno-lint-ignore no-control-regex
  const text = message.replace(/[\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f]/g, "");
  return `::error title=${escapeWorkflowProperty(title)}::${escapeWorkflowData(text)}`;
}

/**
 * Escapes the message of a workflow command as the Actions runner expects:
 * `%` → `%25`, `\r` → `%0D`, `\n` → `%0A`.
 *
 * @example
 * ```ts
 * escapeWorkflowData("100%\ndone"); // "100%25%0Adone"
 * ```
 */
export function escapeWorkflowData(s: string): string {
  return s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
}

/**
 * Escapes a property value of a workflow command (`title=…`): as
 * {@linkcode escapeWorkflowData}, plus `:` → `%3A` and `,` → `%2C`.
 *
 * @example
 * ```ts
 * escapeWorkflowProperty("a: b, c"); // "a%3A b%2C c"
 * ```
 */
export function escapeWorkflowProperty(s: string): string {
  return escapeWorkflowData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");
}

/**
 * What a run that stopped on a usage error (exit 2, nothing sent) reports to the workflow: one
 * `::error` annotation, and the step outputs `passed=false` and `exit-code=2` for the
 * `GITHUB_OUTPUT` file, so a later step's `if:` sees a definite value rather than an empty one.
 *
 * @example
 * ```ts
 * const { annotation, outputs } = githubUsageError("--agent must be a UUID", "ghadelimiter_1");
 * ```
 */
export function githubUsageError(
  message: string,
  delimiter: string,
): { annotation: string; outputs: string } {
  return {
    annotation: _errorAnnotation("service-ci: usage error", message),
    outputs: _outputFile([["passed", "false"], ["exit-code", "2"]], delimiter),
  };
}
