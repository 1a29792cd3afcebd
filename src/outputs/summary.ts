/** The report model every surface reads, so that no CI's writer imports another's. */

import { inertMarkdown } from "../text/markdown.ts";
import type { AgentOutcome, RunReport } from "../report/outcome.ts";
import { headline, OUTCOME_LABELS, outcomeCounts, outcomeReason } from "../report/words.ts";
import { agentCells } from "../report/markdown.ts";
import { toJsonAgent } from "./json.ts";

/**
 * By GitHub's names; every CI sets them under its own. `passed` stays `"false"` with `--warn-only`
 * (it changes the exit code, not the verdict). With several agents, per-run values are JSON arrays.
 */
export function outputValues(
  report: RunReport,
): Readonly<Record<"passed" | "run-id" | "status" | "url" | "exit-code" | "agents", string>> {
  const agents = report.agents;
  const single = agents.length === 1 ? agents[0] : undefined;
  const values = (pick: (agent: AgentOutcome) => string | null): string =>
    single ? pick(single) ?? "" : JSON.stringify(agents.map(pick));
  return {
    passed: String(agents.length > 0 && agents.every((agent) => agent.outcome === "passed")),
    "run-id": values((agent) => agent.runId),
    status: values((agent) => agent.status),
    url: values((agent) => agent.url),
    "exit-code": String(report.exitCode),
    agents: JSON.stringify(agents.map(toJsonAgent)),
  };
}

/** Text from the service is escaped so it cannot break the table, add markup, HTML or links. */
export function summaryMarkdown(report: RunReport): string {
  return [
    `### ${headline(report)}`,
    "",
    outcomeCounts(report.agents),
    "",
    "| Agent | Run | Status | Verdict | Duration | Link |",
    "| --- | --- | --- | --- | --- | --- |",
    ...report.agents.map((agent) => {
      const { agent: id, run, status, verdict, duration, link } = agentCells(agent, { full: true });
      return `| ${[id, run, status, verdict, duration, link].join(" | ")} |`;
    }),
    "",
    `Exit code ${report.exitCode} · service-ci ${inertMarkdown(report.version)}`,
    "",
  ].join("\n");
}

export function gateProblems(
  report: RunReport,
): { agent: AgentOutcome; title: string; message: string }[] {
  return report.agents.flatMap((agent) => {
    const title = OUTCOME_LABELS[agent.outcome].problem;
    if (title === null) return [];
    const run = agent.runId === null ? "no run id" : `run ${agent.runId}`;
    const reason = outcomeReason(agent);
    const status = agent.status === null ? "" : `, status ${agent.status}`;
    const head = `Agent ${agent.agentId}: ${title} (${run}${status})`;
    const message = [head, reason, agent.url].filter((part) => part !== null).join(". ");
    return [{ agent, title, message }];
  });
}
