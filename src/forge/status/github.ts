/**
 * GitHub: one check run per agent through the Checks API, or, where the token may not create
 * check runs, one commit status per agent (docs/github-actions.md, "Commit statuses").
 */

import { inertMarkdown, markdownCode, markdownLink } from "../../text/markdown.ts";
import type { AgentOutcome, Outcome, RunReport } from "../../report/outcome.ts";
import { type ForgeHttp, nextLink, type RequestOptions } from "../http.ts";
import type { ForgeTarget } from "../target.ts";
import { clip } from "../../text/sanitize.ts";
import { formatDuration, outcomeLine, outcomeReason, outcomeText } from "../../report/words.ts";
import {
  lacksPermission,
  statusDescription,
  type StatusForge,
  statusName,
  tokenAdvice,
} from "./commit_status.ts";
import { HttpFailure } from "../../http/failure.ts";

type _Ended = Exclude<Outcome, "triggered">;

/** Unchecked is a `failure`: GitHub's required checks let `neutral` pass. */
const _CHECK_CONCLUSIONS: Readonly<Record<_Ended, string>> = {
  passed: "success",
  failed: "failure",
  unchecked: "failure",
  timed_out: "timed_out",
  interrupted: "cancelled",
};

const _COMMIT_STATES: Readonly<Record<Outcome, string>> = {
  triggered: "pending",
  passed: "success",
  failed: "failure",
  unchecked: "error",
  timed_out: "error",
  interrupted: "error",
};

// GitHub's limits: a check run's output summary, a commit status's description.
const _SUMMARY_MAX = 65_535;
const _DESCRIPTION_MAX = 140;
const _MAX_PAGES = 10;

/** `target`: the pull request's or the merge group's head. */
export function githubStatuses(
  target: ForgeTarget,
  http: ForgeHttp,
  effects: { readonly warn: (line: string) => void; readonly now: () => number },
): StatusForge {
  const repo = `/repos/${target.repository.split("/").map(encodeURIComponent).join("/")}`;
  const sha = target.commit.sha;
  const checkRuns = new Map<string, number>();
  let existing: Promise<Map<string, number>> | null = null;
  // Commit statuses once check runs are refused.
  let mode: "checks" | "statuses" = "checks";

  // `agentId`: only its check run, by name; `null`: every one on the commit.
  const find = async (agentId: string | null, options: RequestOptions) => {
    const found = new Map<string, number>();
    const named = agentId === null ? "" : `check_name=${encodeURIComponent(statusName(agentId))}&`;
    let page: string | null =
      `${repo}/commits/${sha}/check-runs?${named}filter=latest&per_page=100`;
    for (let count = 1; page !== null && count <= _MAX_PAGES; count++) {
      // A look-up that fails costs one attempt: the create or the update is what matters.
      const answer = await http.request("GET", page, undefined, { ...options, attempts: 1 });
      const runs = (answer.data as { check_runs?: unknown } | null)?.check_runs;
      if (!Array.isArray(runs)) break;
      for (const run of runs as unknown[]) {
        const { id, name, external_id: external, status } =
          (typeof run === "object" && run !== null ? run : {}) as Record<string, unknown>;
        if (
          typeof id === "number" && Number.isSafeInteger(id) && typeof external === "string" &&
          name === statusName(external) && status !== "completed" && !found.has(external)
        ) found.set(external, id);
      }
      page = nextLink(answer.headers.get("link"));
    }
    return found;
  };

  const checkRun = async (
    agentId: string,
    fields: Record<string, unknown>,
    options: RequestOptions,
  ) => {
    const key = agentId.toLowerCase();
    // This run's agents' check runs still in progress on the commit, read once before the first
    // create: a run killed before its final write left them, and this run completes them.
    existing ??= find(null, options).catch(() => new Map());
    let id = checkRuns.get(key) ?? (await existing).get(key);
    if (id === undefined) {
      const create = { name: statusName(agentId), head_sha: sha, external_id: key, ...fields };
      try {
        const answer = await http.request("POST", `${repo}/check-runs`, create, options);
        const created = (answer.data as { id?: unknown } | null)?.id;
        if (Number.isSafeInteger(created)) checkRuns.set(key, created as number);
        return;
      } catch (error) {
        // The create may have worked with its answer lost: find it by name before another one.
        if (!(error instanceof HttpFailure && ["server", "network"].includes(error.kind))) {
          throw error;
        }
        id = (await find(agentId, options).catch(() => new Map<string, number>())).get(key);
        if (id === undefined) throw error;
      }
    }
    checkRuns.set(key, id);
    await http.request("PATCH", `${repo}/check-runs/${id}`, fields, options);
  };

  return {
    forge: "GitHub",
    async write(agentId, { runId, link, ended }, options) {
      const at = new Date(effects.now()).toISOString();
      const details = link === null ? {} : { details_url: link };
      const outcome = ended?.agent.outcome ?? "triggered";
      const check = ended === undefined
        ? {
          status: "in_progress",
          started_at: at,
          ...details,
          output: {
            title: "waiting for the verdict",
            summary: runId === null
              ? "The gate is running."
              : `Run ${inertMarkdown(runId)} is running; the verdict follows when the gate ends.`,
          },
        }
        : {
          status: "completed",
          conclusion: _CHECK_CONCLUSIONS[outcome as _Ended],
          completed_at: at,
          ...details,
          output: {
            title: outcomeText(outcome),
            summary: clip(agentSummary(ended.agent, ended.report), _SUMMARY_MAX),
          },
        };
      if (mode === "checks") {
        try {
          await checkRun(agentId, check, options);
          return;
        } catch (error) {
          if (!lacksPermission(error)) throw error;
          if (mode === "checks") {
            mode = "statuses";
            effects.warn(
              `service-ci: GitHub did not let the token create check runs (${error.message}); commit statuses instead — give the job \`checks: write\` for check runs`,
            );
          }
        }
      }
      await http.request("POST", `${repo}/statuses/${sha}`, {
        state: _COMMIT_STATES[outcome],
        context: statusName(agentId),
        description: clip(statusDescription(outcome), _DESCRIPTION_MAX),
        ...(link === null ? {} : { target_url: link }),
      }, options);
    },
    // How to enable what failed; never a permission for a rate limit.
    advice: (error) => {
      if (!lacksPermission(error)) return tokenAdvice("GitHub", error) ?? "";
      return mode === "checks"
        ? "Give the job `permissions: checks: write`."
        : "Give the job `permissions: statuses: write` (`checks: write` for check runs).";
    },
    // A refused token or a refused redirect: another attempt would only repeat it.
    final: (error) =>
      error instanceof HttpFailure &&
      ["unauthorized", "forbidden", "not_found", "refused", "unusable"].includes(error.kind),
  };
}

/** That agent's verdict alone, and one line pointing to the job's summary for the others. */
export function agentSummary(agent: AgentOutcome, report: RunReport): string {
  const others = report.agents.length - 1;
  const job = markdownLink("the job's summary", report.ciMetadata.build_url);
  const run = markdownLink("dashboard", agent.url);
  const why = outcomeReason(agent);
  return [
    `${outcomeLine(agent.outcome)}: agent ${markdownCode(agent.agentId)}`,
    "",
    `- Run: ${agent.runId === null ? "none" : markdownCode(agent.runId)}${
      run === null ? "" : ` (${run})`
    }`,
    ...(agent.status === null ? [] : [`- Status: ${markdownCode(agent.status)}`]),
    ...(why === null ? [] : [`- Reason: ${inertMarkdown(why)}`]),
    `- Duration: ${formatDuration(agent.durationMs)}`,
    "",
    others === 0
      ? `Exit code ${report.exitCode} · service-ci ${inertMarkdown(report.version)}`
      : `${others} other ${others === 1 ? "agent" : "agents"} in this gate: see ${
        job ?? "the job's summary"
      } (exit code ${report.exitCode}).`,
  ].join("\n");
}
