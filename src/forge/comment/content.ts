/**
 * A gate's pull-request comment: "in progress" with the links, then the verdicts. Service text is
 * data: it cannot break the table, add markup, hide text, link, or ping anyone on GitHub or GitLab.
 */

import { inertMarkdown, markdownLink } from "../../text/markdown.ts";
import { clip } from "../../text/sanitize.ts";
import type { Outcome, RunReport } from "../../report/outcome.ts";
import { type CommentHistory, type HistoryEntry, historyLine } from "./history.ts";
import {
  countOutcomes,
  exitMeaning,
  headline,
  markedOutcome,
  OUTCOME_LABELS,
  outcomeCounts,
} from "../../report/words.ts";
import { agentCells, runCell } from "../../report/markdown.ts";

/** UTF-16 units (never fewer than characters): GitHub refuses over 65,536 characters, GitLab 1M. */
export const MAX_COMMENT_LENGTH = 60_000;

export interface TriggeredRun {
  readonly agentId: string;
  readonly runId: string | null;
  readonly url: string | null;
  /** Masked service text; the row says so instead of "running". */
  readonly refused?: string | null;
}

export interface CommentProgress {
  readonly commitSha: string | null;
  readonly buildUrl: string | null;
  readonly runs: readonly TriggeredRun[];
}

interface _Options {
  readonly maxLength?: number;
  /** `--pr-comment-key`: said in the heading, so each matrix leg's comment says which it is. */
  readonly key?: string | undefined;
  /** For {@linkcode finalComment}, with this run already recorded; left out first to fit. */
  readonly history?: CommentHistory;
}

export function progressComment(
  marker: string,
  progress: CommentProgress,
  options: _Options = {},
): string {
  const refused = progress.runs.filter((run) => _isRefused(run)).length;
  const triggered = progress.runs.length - refused;
  const gates = progress.runs.length === 1 ? "quality gate" : "quality gates";
  return _comment(marker, {
    heading: _keyed(`⏳ service-ci: ${gates} running`, options.key),
    summary: `${triggered} ${triggered === 1 ? "run" : "runs"} triggered for ${
      _commit(progress.commitSha)
    }${
      refused === 0 ? "" : `; ${refused} not triggered`
    }; this comment shows the verdicts when they are in.`,
    rows: progress.runs.map((run) => ({
      cells: _isRefused(run)
        ? [
          inertMarkdown(clip(run.agentId, 100)),
          `${markedOutcome("unchecked")}: ${inertMarkdown(clip(run.refused ?? "", 300))}`,
          "—",
          runCell(null, null),
        ]
        : [inertMarkdown(clip(run.agentId, 100)), "⏳ running", "—", runCell(run.runId, run.url)],
      outcome: _isRefused(run) ? "unchecked" : null,
    })),
    closing: [],
    footer: _footer(null, progress.buildUrl),
    history: _history(options.history, progress.runs, null),
  }, options.maxLength ?? MAX_COMMENT_LENGTH);
}

// The key leads: two legs' comments read "linux: ❌ …" and "windows: ✅ …" at a glance.
function _keyed(heading: string, key: string | undefined): string {
  return key === undefined || key === "" ? heading : `${inertMarkdown(clip(key, 100))}: ${heading}`;
}

function _isRefused(run: TriggeredRun): boolean {
  return run.runId === null && run.refused !== undefined && run.refused !== null;
}

export function finalComment(marker: string, report: RunReport, options: _Options = {}): string {
  return _comment(marker, {
    heading: _keyed(headline(report), options.key),
    summary: `${outcomeCounts(report.agents)} Commit ${_commit(report.ciMetadata.commit_sha)}.`,
    rows: report.agents.map((agent) => {
      const { agent: id, verdict, duration, runLink } = agentCells(agent);
      return { cells: [id, verdict, duration, runLink], outcome: agent.outcome };
    }),
    closing: [`Exit code ${report.exitCode}: ${exitMeaning(report)}.`],
    footer: _footer(report.version, report.ciMetadata.build_url),
    history: _history(options.history, report.agents, report.ciMetadata.commit_sha),
  }, options.maxLength ?? MAX_COMMENT_LENGTH);
}

// Room kept for the line that counts the agents left out.
const _OMISSION_RESERVE = 300;
// A link longer than this is shown as text: one row must not take the whole comment.
const _MAX_HREF_LENGTH = 2_000;

// `outcome`: `null` while in progress.
type _Row = { readonly cells: readonly string[]; readonly outcome: Outcome | null };
type _History = { readonly line: string | null; readonly shown: readonly string[] };

interface _Parts {
  readonly heading: string;
  readonly summary: string;
  readonly rows: readonly _Row[];
  readonly closing: readonly string[];
  readonly footer: string;
  readonly history: _History;
}

// When rows must be left out, the ones a reviewer needs most stay: failures before passes.
const _KEEP_FIRST: readonly (Outcome | null)[] = [
  "failed",
  "unchecked",
  "timed_out",
  "interrupted",
  "triggered",
  null,
  "passed",
];

// The history never costs a row: what is shown of it goes first, then the hidden line.
function _comment(marker: string, parts: _Parts, maxLength: number): string {
  const packed = (history: _History): { text: string; omitted: number } => {
    const head = [
      marker,
      ...(history.line === null ? [] : [history.line]),
      "",
      `### ${parts.heading}`,
      "",
      parts.summary,
      "",
      "| Agent | Verdict | Duration | Run |",
      "| --- | --- | --- | --- |",
    ];
    const tail = [
      "",
      ...history.shown.flatMap((line) => [line, ""]),
      ...parts.closing.flatMap((line) => [line, ""]),
      parts.footer,
      "",
    ];
    const lines = parts.rows.map((row) => `| ${row.cells.join(" | ")} |`);
    let budget = maxLength - [...head, ...tail].join("\n").length - _OMISSION_RESERVE;
    const order = parts.rows
      .map((row, index) => ({ index, rank: _KEEP_FIRST.indexOf(row.outcome) }))
      .sort((a, b) => a.rank - b.rank || a.index - b.index);
    const shown = new Set<number>();
    for (const { index } of order) {
      const cost = lines[index]!.length + 1;
      if (cost > budget) break;
      budget -= cost;
      shown.add(index);
    }
    const omitted = parts.rows.filter((_, index) => !shown.has(index));
    const omission = omitted.length === 0 ? [] : [
      "",
      `… and ${omitted.length} more ${omitted.length === 1 ? "agent" : "agents"}${
        _omittedCounts(omitted)
      }, left out to stay under the comment size limit; the CI job lists every agent.`,
    ];
    const text = [
      ...head,
      ...lines.filter((_, index) => shown.has(index)),
      ...omission,
      ...tail,
    ].join("\n");
    return { text, omitted: omitted.length };
  };
  const bare = packed({ line: null, shown: [] });
  const { line, shown } = parts.history;
  if (line === null) return bare.text;
  const tries = shown.length === 0 ? [parts.history] : [parts.history, { line, shown: [] }];
  for (const history of tries) {
    const body = packed(history);
    if (body.omitted <= bare.omitted && body.text.length <= maxLength) return body.text;
  }
  return bare.text;
}

// Only agents whose history says more than the table (another commit than `current`).
function _history(
  history: CommentHistory | undefined,
  agents: readonly { readonly agentId: string }[],
  current: string | null,
): _History {
  if (history === undefined) return { line: null, shown: [] };
  const sha = current?.trim().toLowerCase() ?? null;
  const items = agents.flatMap(({ agentId }) => {
    const entries = history.get(agentId.trim().toLowerCase()) ?? [];
    if (!entries.some((entry) => entry.sha !== sha)) return [];
    return [`- ${inertMarkdown(clip(agentId, 100))}: ${entries.map(_historyStep).join(" → ")}`];
  });
  return {
    line: historyLine(history),
    shown: items.length === 0
      ? []
      : ["Verdicts of the last commits, oldest first:", items.join("\n")],
  };
}

function _historyStep(entry: HistoryEntry): string {
  // The history was checked when read; a commit id that is not hex is still only text.
  const commit = /^[0-9a-f]{7,40}$/.test(entry.sha)
    ? `\`${entry.sha.slice(0, 7)}\``
    : inertMarkdown(clip(entry.sha, 40));
  const mark = OUTCOME_LABELS[entry.outcome]?.mark ?? "";
  return `${mark} at ${markdownLink(commit, entry.url, _MAX_HREF_LENGTH) ?? commit}`;
}

function _omittedCounts(rows: readonly _Row[]): string {
  const counts = countOutcomes(
    rows.flatMap(({ outcome }) => outcome ? [{ outcome }] : []),
    "words",
  );
  return counts.length === 0 ? "" : ` (${counts.join(", ")})`;
}

// A hex commit id is written bare so that both forges link it to the commit.
function _commit(sha: string | null): string {
  if (sha === null || sha.trim() === "") return "an unknown commit";
  const trimmed = sha.trim();
  return /^[0-9a-f]{7,64}$/i.test(trimmed) ? trimmed : inertMarkdown(clip(trimmed, 100));
}

function _footer(version: string | null, buildUrl: string | null): string {
  const name = version === null ? "service-ci" : `service-ci ${inertMarkdown(clip(version, 40))}`;
  const link = markdownLink("CI job", buildUrl, _MAX_HREF_LENGTH);
  return link === null ? name : `${name} · ${link}`;
}
