/** Buildkite: a progress log group, then via `buildkite-agent` an annotation and meta-data. */

import type { RunReport } from "../../report/outcome.ts";
import { gateProblems, outputValues, summaryMarkdown } from "../summary.ts";
import type { CommandResult } from "../../effects.ts";
import { CI_OUTPUTS, type NativeWriter } from "./native_io.ts";
import { sanitize } from "../../text/sanitize.ts";
import { formatBound } from "../../text/duration.ts";

/** A re-run of the job replaces the annotation of this context instead of adding one. */
const BUILDKITE_CONTEXT = "service-ci";

/** `^^^ +++` expands the group on a gate not passed; values go on stdin, never read as options. */
export function createBuildkiteWriter(): NativeWriter {
  return {
    ci: "Buildkite",
    progressStart: (title) => [`--- ${sanitize(title)}`],
    progressEnd: (report) => gateProblems(report).length > 0 ? ["^^^ +++"] : [],
    finish: async (report, io) => {
      const annotated = await io.runCommand(
        "buildkite-agent",
        ["annotate", "--style", buildkiteAnnotationStyle(report), "--context", BUILDKITE_CONTEXT],
        summaryMarkdown(report),
      );
      // An agent that hangs once would hang on every call: the meta-data is not tried.
      if (annotated.kind !== "exited") {
        return io.warn(
          annotated.kind === "not-run"
            ? `Buildkite: buildkite-agent could not be run (${annotated.reason}); no annotation or meta-data was written, only the log group`
            : `Buildkite: buildkite-agent annotate did not finish within ${
              formatBound(annotated.afterMs)
            } and was stopped; the annotation may be missing and no meta-data was set`,
        );
      }
      // Every call that failed goes in one line: an agent that refuses one call refuses all.
      const problem = _failure(annotated);
      const failed = problem === undefined ? [] : [`the annotation (${problem})`];
      const entries = buildkiteMetaData(report);
      for (const [index, [key, value]] of entries.entries()) {
        const result = await io.runCommand("buildkite-agent", ["meta-data", "set", key], value);
        const problem = _failure(result);
        if (problem !== undefined) failed.push(`meta-data ${key} (${problem})`);
        if (result.kind === "timed-out") {
          failed.push(...entries.slice(index + 1).map(([rest]) => `meta-data ${rest} (not tried)`));
          break;
        }
      }
      if (failed.length > 0) {
        io.warn(`Buildkite: buildkite-agent could not write ${failed.join(", ")}`);
      }
    },
  };
}

/** Valued as the GitHub action's outputs; an empty one is left out, as Buildkite refuses it. */
export function buildkiteMetaData(report: RunReport): [string, string][] {
  const outputs = outputValues(report);
  return CI_OUTPUTS.map((name): [string, string] => [`service-ci.${name}`, outputs[name]])
    .filter(([, value]) => value.trim() !== "");
}

/** `warning` when `--warn-only` kept a failed gate from failing the job. */
export function buildkiteAnnotationStyle(report: RunReport): "success" | "warning" | "error" {
  if (gateProblems(report).length === 0) return "success";
  return report.exitCode === 0 ? "warning" : "error";
}

function _failure(result: CommandResult): string | undefined {
  switch (result.kind) {
    case "not-run":
      return `not run: ${result.reason}`;
    case "timed-out":
      return `stopped after ${formatBound(result.afterMs)}`;
    case "exited":
      if (result.inputError !== undefined) {
        return `exit code ${result.code} before reading all of its input: ${result.inputError}`;
      }
      return result.code === 0 ? undefined : `exit code ${result.code}`;
  }
}
