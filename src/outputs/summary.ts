/**
 * The report model every surface reads: the run's output values, its summary in Markdown and the
 * gates that need attention. Each CI's writer (github.ts, azure.ts, …) and the commit statuses
 * take what they show from here; no writer imports another CI's writer.
 */

import { inertMarkdown, markdownDestination } from "../text/markdown.ts";
import type { AgentOutcome, RunReport } from "../result/outcome.ts";
import {
  formatDuration,
  headline,
  markedOutcome,
  OUTCOME_LABELS,
  outcomeCounts,
} from "../text/words.ts";
import { toJsonAgent } from "./json.ts";

/** The outputs of a run, by the names GitHub gives them; every CI sets them under its own. */
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
 * The values of the run's outputs, as GitHub's step outputs hold them and every other CI's
 * writer sets them under its own names.
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

/**
 * The run's summary in Markdown, as GitHub's step summary, Azure's uploaded summary and
 * Buildkite's annotation show it: a heading with the overall verdict, then a table with one row per agent (agent | run | status | verdict |
 * duration | link). Text from the service is escaped so it cannot break the table, add
 * markup, HTML or links; a link appears only for an `http:`/`https:` URL.
 */
export function summaryMarkdown(report: RunReport): string {
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
 * Why an agent's gate did not pass, on one line, as every surface a person reads shows it (the
 * console, JUnit, annotations, Markdown): the reason it could not be checked, or else
 * {@linkcode gateReason}; `null` when there is neither.
 */
export function outcomeReason(agent: AgentOutcome): string | null {
  return agent.error ?? gateReason(agent);
}

/**
 * What the service said beside a failed verdict, on one line:
 * `rule: jailbreak success rate < 2%; score: 0.031`; `null` for any other outcome, or when it
 * said nothing more. A passed gate needs no explanation where a person reads; `--json` carries
 * the service's words for every verdict. The fields are bounded and masked already
 * (`toAgentOutcome`).
 */
export function gateReason(agent: AgentOutcome): string | null {
  if (agent.outcome !== "failed" || agent.gate.length === 0) return null;
  return agent.gate.map(({ name, value }) => `${name}: ${value}`).join("; ");
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
 */
export function gateProblems(report: RunReport): GateProblem[] {
  return report.agents.flatMap((agent) => {
    const title = OUTCOME_LABELS[agent.outcome].problem;
    if (title === null) return [];
    const run = agent.runId === null ? "no run id" : `run ${agent.runId}`;
    const reason = outcomeReason(agent);
    const parts = [
      `Agent ${agent.agentId}: ${title} (${run}${
        agent.status === null ? "" : `, status ${agent.status}`
      })`,
      ...(reason === null ? [] : [reason]),
      ...(agent.url === null ? [] : [agent.url]),
    ];
    return [{ agent, title, message: parts.join(". ") }];
  });
}

function _linkCell(url: string | null): string {
  const destination = markdownDestination(url, Infinity);
  return destination === null ? "—" : `[open](<${destination}>)`;
}

function _verdictCell(agent: AgentOutcome): string {
  const verdict = markedOutcome(agent.outcome);
  const why = outcomeReason(agent);
  return why === null ? verdict : `${verdict}: ${inertMarkdown(why)}`;
}

function _allPassed(report: RunReport): boolean {
  return report.agents.length > 0 && report.agents.every((agent) => agent.outcome === "passed");
}
