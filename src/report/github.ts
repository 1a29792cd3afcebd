/**
 * GitHub Actions' writer, one CI's writer beside the others (azure.ts, gitlab.ts, …): the
 * progress group, the step outputs and the job summary (files the runner names, so reports), and
 * annotations; and what a usage error tells the workflow.
 */

import { inertMarkdown, markdownDestination } from "../markdown.ts";
import type { AgentOutcome, RunReport } from "../outcome.ts";
import {
  formatDuration,
  headline,
  markedOutcome,
  OUTCOME_LABELS,
  outcomeCounts,
} from "../words.ts";
import { cannotWrite, type FileReport } from "./deliver.ts";
import { toJsonAgent } from "./json.ts";
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
          render: githubSummary,
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
 *   `exit_code`, `duration_ms`, `url`, `error`).
 *
 * @param delimiter A fresh random string such as `ghadelimiter_<uuid>`.
 * @throws {TypeError} If the delimiter is empty or spans lines.
 * @throws {RangeError} If any value contains the delimiter.
 *
 * @example
 * ```ts
 * import type { RunReport } from "../outcome.ts";
 * declare const report: RunReport;
 * const path = Deno.env.get("GITHUB_OUTPUT");
 * if (path) {
 *   const text = githubOutputs(report, `ghadelimiter_${crypto.randomUUID()}`);
 *   await Deno.writeTextFile(path, text, { append: true });
 * }
 * ```
 */
export function githubOutputs(report: RunReport, delimiter: string): string {
  return _outputFile(Object.entries(outputValues(report)), delimiter);
}

/** The outputs of a run, by their GitHub names; see {@linkcode githubOutputs} for each meaning. */
export interface OutputValues {
  /** `true` when every agent's gate passed. */
  readonly passed: string;
  /** The run id, or a JSON array of them. */
  readonly "run-id": string;
  /** The run's last status, or a JSON array of them. */
  readonly status: string;
  /** The run's dashboard link, or a JSON array of them. */
  readonly url: string;
  /** The process exit code. */
  readonly "exit-code": string;
  /** A JSON array with one object per agent. */
  readonly agents: string;
}

/**
 * The values of the run's outputs, as {@linkcode githubOutputs} writes them and every other CI's
 * native writer sets them under its own names.
 *
 * @example
 * ```ts
 * import type { RunReport } from "../outcome.ts";
 * declare const report: RunReport;
 * const passed = outputValues(report).passed === "true";
 * ```
 */
export function outputValues(report: RunReport): OutputValues {
  const agents = report.agents;
  const single = agents.length === 1 ? agents[0] : undefined;
  const values = (pick: (agent: AgentOutcome) => string | null): string =>
    single ? pick(single) ?? "" : JSON.stringify(agents.map(pick));
  return {
    passed: String(_allPassed(report)),
    "run-id": values((agent) => agent.runId),
    status: values((agent) => agent.status),
    url: values((agent) => agent.url),
    "exit-code": String(report.exitCode),
    agents: JSON.stringify(agents.map(toJsonAgent)),
  };
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
 * The Markdown to append to the file named by `GITHUB_STEP_SUMMARY`: a heading with the
 * overall verdict, then a table with one row per agent (agent | run | status | verdict |
 * duration | link). Text from the service is escaped so it cannot break the table, add
 * markup, HTML or links; a link appears only for an `http:`/`https:` URL.
 *
 * @example
 * ```ts
 * import type { RunReport } from "../outcome.ts";
 * declare const report: RunReport;
 * const path = Deno.env.get("GITHUB_STEP_SUMMARY");
 * if (path) await Deno.writeTextFile(path, githubSummary(report), { append: true });
 * ```
 */
export function githubSummary(report: RunReport): string {
  const rows = report.agents.map((agent) =>
    `| ${
      [
        inertMarkdown(agent.agentId),
        agent.runId === null ? "—" : inertMarkdown(agent.runId),
        agent.status === null ? "—" : inertMarkdown(agent.status),
        _verdictCell(agent),
        formatDuration(agent.durationMs),
        _linkCell(agent.url),
      ].join(" | ")
    } |`
  );
  return [
    `### ${headline(report)}`,
    "",
    outcomeCounts(report.agents),
    "",
    "| Agent | Run | Status | Verdict | Duration | Link |",
    "| --- | --- | --- | --- | --- | --- |",
    ...rows,
    "",
    `Exit code ${report.exitCode} · service-ci ${inertMarkdown(report.version)}`,
    "",
  ].join("\n");
}

/**
 * One `::error` workflow command per agent whose gate failed or could not be checked
 * (`failed`, `unchecked`, `timed_out`, `interrupted`); none for `passed` or `triggered`.
 * The message names the agent, the outcome, the run, the reason and the run's link; control
 * characters other than line breaks are dropped, then the command's own escaping applies.
 *
 * @example
 * ```ts
 * import type { RunReport } from "../outcome.ts";
 * declare const report: RunReport;
 * for (const line of githubAnnotations(report)) console.log(line);
 * ```
 */
export function githubAnnotations(report: RunReport): string[] {
  return gateProblems(report).map(({ title, message }) =>
    _errorAnnotation(`service-ci: ${title}`, message)
  );
}

/** One agent whose gate failed or could not be checked, in the words of its annotation. */
export interface GateProblem {
  /** The agent's outcome: `failed`, `unchecked`, `timed_out` or `interrupted`. */
  readonly agent: AgentOutcome;
  /** What happened, e.g. `"quality gate failed"`. */
  readonly title: string;
  /** The agent, the title, the run, the reason and the run's link, in one text. */
  readonly message: string;
}

/**
 * The agents whose gate failed or could not be checked, each with the title and message that
 * every CI's error annotation shows (GitHub's `::error`, Azure's `task.logissue`, TeamCity's
 * `testFailed`).
 *
 * @example
 * ```ts
 * import type { RunReport } from "../outcome.ts";
 * declare const report: RunReport;
 * for (const { title, message } of gateProblems(report)) console.error(`${title}: ${message}`);
 * ```
 */
export function gateProblems(report: RunReport): GateProblem[] {
  return report.agents.flatMap((agent) => {
    const title = OUTCOME_LABELS[agent.outcome].problem;
    if (title === null) return [];
    const run = agent.runId === null ? "no run id" : `run ${agent.runId}`;
    const parts = [
      `Agent ${agent.agentId}: ${title} (${run}${
        agent.status === null ? "" : `, status ${agent.status}`
      })`,
      ...(agent.error === null ? [] : [agent.error]),
      ...(agent.url === null ? [] : [agent.url]),
    ];
    return [{ agent, title, message: parts.join(". ") }];
  });
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

function _linkCell(url: string | null): string {
  const destination = markdownDestination(url, Infinity);
  return destination === null ? "—" : `[open](<${destination}>)`;
}

function _verdictCell(agent: AgentOutcome): string {
  const verdict = markedOutcome(agent.outcome);
  return agent.error === null ? verdict : `${verdict}: ${inertMarkdown(agent.error)}`;
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

function _allPassed(report: RunReport): boolean {
  return report.agents.length > 0 && report.agents.every((agent) => agent.outcome === "passed");
}
