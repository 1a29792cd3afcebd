/** One agent in Markdown: the job's summary, the pull-request comment and a check run share it. */

import { inertMarkdown, markdownCode, markdownLink } from "../text/markdown.ts";
import { formatDuration } from "../text/duration.ts";
import { clip } from "../text/sanitize.ts";
import type { AgentOutcome, RunReport } from "./outcome.ts";
import { markedOutcome, outcomeLine, outcomeReason } from "./words.ts";

/** Service text is cut to fit a comment unless `full`; `code`: a check run's, ids in code spans. */
type _Style = { readonly full?: boolean; readonly code?: boolean };

type _Cell = "agent" | "run" | "runLink" | "status" | "verdict" | "duration" | "link";
type _Cells = Readonly<Record<_Cell, string>> & { readonly reason: string | null };

/** An agent's cells, each surface taking the columns it shows. */
export function agentCells(agent: AgentOutcome, style: _Style = {}): _Cells {
  const why = outcomeReason(agent);
  const reason = why === null ? null : inertMarkdown(clip(why, style.full ? Infinity : 300));
  return {
    agent: _id(agent.agentId, style),
    run: runCell(agent.runId, null, style),
    runLink: runCell(agent.runId, agent.url, style),
    status: agent.status === null ? "—" : _id(agent.status, style),
    reason,
    verdict: [markedOutcome(agent.outcome), reason].filter((part) => part !== null).join(": "),
    duration: formatDuration(agent.durationMs),
    link: markdownLink("open", agent.url, Infinity) ?? "—",
  };
}

/** The run id beside its link, never as the link's text: the service does not word our links. */
export function runCell(runId: string | null, url: string | null, style: _Style = {}): string {
  const link = markdownLink("dashboard", url);
  const text = runId === null ? null : _id(runId, style);
  if (link === null) return text ?? (style.code ? "none" : "—");
  return text === null ? link : `${text} (${link})`;
}

/** That agent's verdict alone, and one line pointing to the job's summary for the others. */
export function agentSummary(agent: AgentOutcome, report: RunReport): string {
  const cells = agentCells(agent, { full: true, code: true });
  const others = report.agents.length - 1;
  const agents = others === 1 ? "1 other agent" : `${others} other agents`;
  const job = markdownLink("the job's summary", report.ciMetadata.build_url) ?? "the job's summary";
  return [
    `${outcomeLine(agent.outcome)}: agent ${cells.agent}`,
    "",
    `- Run: ${cells.runLink}`,
    ...(agent.status === null ? [] : [`- Status: ${cells.status}`]),
    ...(cells.reason === null ? [] : [`- Reason: ${cells.reason}`]),
    `- Duration: ${cells.duration}`,
    "",
    others === 0
      ? `Exit code ${report.exitCode} · service-ci ${inertMarkdown(report.version)}`
      : `${agents} in this gate: see ${job} (exit code ${report.exitCode}).`,
  ].join("\n");
}

function _id(text: string, style: _Style): string {
  return style.code ? markdownCode(text) : inertMarkdown(clip(text, style.full ? Infinity : 100));
}
