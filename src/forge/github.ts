/**
 * GitHub: a check run per agent (Checks API), or a commit status per agent where the token may not
 * create check runs (docs/github-actions.md, "Commit statuses"); comments via the issues API.
 */

import { optionName, OPTIONS } from "../config/options.ts";
import { tokenUrlProblem } from "../http/url.ts";
import type { Outcome } from "../report/outcome.ts";
import { outcomeText } from "../report/words.ts";
import { agentSummary } from "../report/markdown.ts";
import { inertMarkdown } from "../text/markdown.ts";
import { clip, maskSecrets } from "../text/sanitize.ts";
import type { Forge, StatusForge } from "./forge.ts";
import { apiExchange, type ForgeHttp, jsonFields, nextLink, type RequestOptions } from "./http.ts";
import {
  failedAs,
  lacksPermission,
  mayHaveCreated,
  statusDescription,
  statusName,
  tokenAdvice,
} from "./writes.ts";

// A check run's conclusion and a commit status's state. Unchecked is a `failure`: GitHub's
// required checks let `neutral` pass.
const _STATES: Readonly<Record<Outcome, readonly [conclusion: string, state: string]>> = {
  triggered: ["", "pending"],
  passed: ["success", "success"],
  failed: ["failure", "failure"],
  unchecked: ["failure", "error"],
  timed_out: ["timed_out", "error"],
  interrupted: ["cancelled", "error"],
};

// GitHub's limits: a check run's output summary, a commit status's description.
const _SUMMARY_MAX = 65_535;
const _DESCRIPTION_MAX = 140;
const _MAX_PAGES = 10;

export const github: Forge = {
  name: "GitHub",
  provider: "github_actions",
  // GitHub asks integrations to send writes one at a time, and never 100 requests at once.
  concurrency: { inFlight: 4, writes: 1 },
  commitOf({ metadata, context, read }) {
    if (_mergeQueue(context?.kind, read)) return "the merge group's head";
    return metadata.pull_request_number === null ? null : "the pull request's head";
  },
  connect({ config, read, metadata, use, skip }) {
    const value = config.githubToken;
    const permission = use === "comment" ? "pull-requests" : "checks";
    if (value === undefined) {
      return skip(
        `${OPTIONS.githubToken.variable} is not set; set it to \${{ github.token }} and grant the job \`permissions: ${permission}: write\``,
      );
    }
    // GITHUB_API_URL points elsewhere on GitHub Enterprise Server.
    const apiUrl = config.githubApiUrl ?? "https://api.github.com";
    const problem = tokenUrlProblem(apiUrl, OPTIONS.githubApiUrl.variable);
    if (problem !== null) return skip(problem);
    const slug = metadata.repository ?? read("GITHUB_REPOSITORY");
    if (slug === null || !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(slug)) {
      const got = JSON.stringify(maskSecrets(slug ?? "", [value]));
      const flag = optionName(OPTIONS.repository);
      return skip(
        `the repository must be "owner/name" (got ${got}; GITHUB_REPOSITORY or ${flag} sets it)`,
      );
    }
    return {
      apiUrl,
      token: { value, variable: OPTIONS.githubToken.variable },
      repository: slug,
      gate: { workflow: read("GITHUB_WORKFLOW") ?? "", job: read("GITHUB_JOB") ?? "" },
    };
  },
  exchange: (target, setup) =>
    apiExchange("GitHub", target, {
      Authorization: `Bearer ${target.token?.value}`,
      Accept: "application/vnd.github+json",
      "X-GitHub-Api-Version": "2022-11-28",
      "User-Agent": setup.userAgent,
    }, setup),
  statuses: githubStatuses,
  tokenAdvice: `Check ${OPTIONS.githubToken.variable} (set it to \${{ github.token }}).`,
  comment: {
    noun: "pull request",
    sign: "#",
    change({ metadata, context, read, skip }) {
      // The queue's branch names a PR but the event none: the PR's own run writes the comment.
      if (_mergeQueue(context?.kind, read)) {
        return {
          skip:
            "service-ci: no pull-request comment in a merge queue run (merge_group has no pull request); the pull_request run's comment stands",
        };
      }
      const flag = optionName(OPTIONS.pullRequest);
      return metadata.pull_request_number ?? skip(
        `this build is not for a pull request (no pull request number was detected; ${flag} <n> names one)`,
      );
    },
    // A pull request is an issue: its comments are the issue's. The workflow token (and an
    // app's) cannot read `GET /user` and writes as `github-actions[bot]`.
    thread(target) {
      const repo = _repo(target.repository);
      const list = `${repo}/issues/${target.change}/comments`;
      return {
        list,
        firstPage: `${list}?per_page=100`,
        one: `${repo}/issues/comments`,
        update: "PATCH",
        noun: "comment",
        author: _author,
        self: (user) => _author({ user }) ?? "github-actions[bot]",
        createdBySelf: true,
      };
    },
    advice: {
      forbidden:
        "Grant the job `permissions: pull-requests: write`; pull requests from forks only get a read-only token.",
      not_found:
        "The token cannot see this repository or pull request; use the workflow's own ${{ github.token }}.",
    },
  },
};

function _mergeQueue(kind: string | undefined, read: (name: string) => string | null): boolean {
  return kind === "merge_queue" || read("GITHUB_EVENT_NAME") === "merge_group";
}

function _repo(repository: string): string {
  return `/repos/${repository.split("/").map(encodeURIComponent).join("/")}`;
}

function _author(comment: unknown): string | null {
  const login = jsonFields(jsonFields(comment).user).login;
  return typeof login === "string" && login !== "" ? login.toLowerCase() : null;
}

/** `target`: the pull request's or the merge group's head. */
function githubStatuses(
  target: Parameters<Forge["statuses"]>[0],
  http: ForgeHttp,
  effects: Parameters<Forge["statuses"]>[2],
): StatusForge {
  const repo = _repo(target.repository);
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
      const runs = jsonFields(answer.data).check_runs;
      if (!Array.isArray(runs)) break;
      for (const run of runs as unknown[]) {
        const { id, name, external_id: external, status } = jsonFields(run);
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
        const created = jsonFields(answer.data).id;
        if (Number.isSafeInteger(created)) checkRuns.set(key, created as number);
        return;
      } catch (error) {
        if (!mayHaveCreated(error)) throw error;
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
          conclusion: _STATES[outcome][0],
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
        state: _STATES[outcome][1],
        context: statusName(agentId),
        description: clip(statusDescription(outcome), _DESCRIPTION_MAX),
        ...(link === null ? {} : { target_url: link }),
      }, options);
    },
    // How to enable what failed; never a permission for a rate limit.
    advice: (error) => {
      if (!lacksPermission(error)) return tokenAdvice(github, error) ?? "";
      return mode === "checks"
        ? "Give the job `permissions: checks: write`."
        : "Give the job `permissions: statuses: write` (`checks: write` for check runs).";
    },
    // A refused token or a refused redirect: another attempt would only repeat it.
    final: failedAs("unauthorized", "forbidden", "not_found", "refused", "unusable"),
  };
}
