/** GitLab (REST API v4): a commit status per agent, each write one POST; the comments are notes. */

import { OPTIONS } from "../config/options.ts";
import { tokenUrlProblem } from "../http/url.ts";
import type { Outcome } from "../report/outcome.ts";
import { clip } from "../text/sanitize.ts";
import type { Forge } from "./forge.ts";
import { apiExchange, jsonFields } from "./http.ts";
import { failedAs, lacksPermission, statusDescription, statusName, tokenAdvice } from "./writes.ts";

const _STATES: Readonly<Record<Outcome, string>> = {
  triggered: "running",
  passed: "success",
  failed: "failed",
  unchecked: "failed",
  timed_out: "failed",
  interrupted: "canceled",
};

// GitLab refuses a target_url or description over 255 characters.
const _FIELD_MAX = 255;

export const gitlab: Forge = {
  name: "GitLab",
  provider: "gitlab",
  // GitLab documents no figure.
  concurrency: { inFlight: 4, writes: 2 },
  // In a merge train or merged-results pipeline the merge result is another commit.
  commitOf: ({ read }) => read("CI_MERGE_REQUEST_IID") === null ? null : "the merge request's head",
  connect({ config, read, metadata, use, commit, skip }) {
    const value = config.gitlabToken;
    const role = use === "comment"
      ? " (CI_JOB_TOKEN cannot write merge request notes)"
      : " and the Developer role (CI_JOB_TOKEN cannot set statuses)";
    if (value === undefined) {
      return skip(
        `${OPTIONS.gitlabToken.variable} is not set; set it to a project access token with the api scope${role}`,
      );
    }
    const apiUrl = config.gitlabApiUrl;
    if (apiUrl === undefined) return skip(`${OPTIONS.gitlabApiUrl.variable} is not set`);
    const problem = tokenUrlProblem(apiUrl, OPTIONS.gitlabApiUrl.variable);
    if (problem !== null) return skip(problem);
    const projectId = read("CI_PROJECT_ID");
    if (projectId === null) return skip("CI_PROJECT_ID is not set");
    const pipeline = Number(read("CI_PIPELINE_ID"));
    const own = commit !== null && read("CI_COMMIT_SHA")?.toLowerCase() === commit;
    return {
      apiUrl,
      token: { value, variable: OPTIONS.gitlabToken.variable },
      repository: projectId,
      ref: read("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME") ?? read("CI_COMMIT_REF_NAME") ??
        metadata.branch,
      pipelineId: own && Number.isSafeInteger(pipeline) && pipeline > 0 ? pipeline : null,
      gate: { workflow: "", job: read("CI_JOB_NAME") ?? "" },
    };
  },
  exchange: (target, setup) =>
    apiExchange("GitLab", target, {
      "PRIVATE-TOKEN": target.token?.value ?? "",
      Accept: "application/json",
      "User-Agent": setup.userAgent,
    }, setup),
  /** `ref`, and `pipeline_id` for the pipeline's own commit: the statuses land on this pipeline. */
  statuses(target, http) {
    const path = `${_project(target.repository)}/statuses/${target.commit.sha}`;
    const { ref, pipelineId } = target;
    return {
      forge: "GitLab",
      async write(agentId, { link, ended }, options) {
        const outcome = ended?.agent.outcome ?? "triggered";
        await http.request("POST", path, {
          state: _STATES[outcome],
          name: statusName(agentId),
          ...(ref === null || ref.length > _FIELD_MAX ? {} : { ref }),
          ...(pipelineId === null ? {} : { pipeline_id: pipelineId }),
          description: clip(statusDescription(outcome), _FIELD_MAX),
          ...(link === null || link.length > _FIELD_MAX ? {} : { target_url: link }),
        }, options);
      },
      advice: (error) =>
        tokenAdvice(gitlab, error) ??
          (lacksPermission(error)
            ? `${OPTIONS.gitlabToken.variable} needs the api scope and the Developer role on this project (CI_JOB_TOKEN cannot set statuses).`
            : ""),
      final: failedAs("unauthorized", "forbidden", "not_found", "refused"),
    };
  },
  tokenAdvice: `Check ${OPTIONS.gitlabToken.variable}: a project access token with the api scope.`,
  comment: {
    noun: "merge request",
    sign: "!",
    change({ read, metadata, skip }) {
      const iidText = read("CI_MERGE_REQUEST_IID");
      if (iidText === null && read("CI_EXTERNAL_PULL_REQUEST_IID") !== null) {
        return skip(
          "this pipeline is for an external pull request, which has no GitLab merge request to comment on",
        );
      }
      const change = iidText === null ? metadata.pull_request_number : Number(iidText);
      if (change === null || !Number.isSafeInteger(change) || change < 1) {
        return skip(
          'this pipeline is not for a merge request (CI_MERGE_REQUEST_IID is set in merge request pipelines: `rules: - if: $CI_PIPELINE_SOURCE == "merge_request_event"`)',
        );
      }
      return change;
    },
    // Only its author edits a note (access tokens have bot users); an unreadable user edits none.
    thread(target) {
      const list = `${_project(target.repository)}/merge_requests/${target.change}/notes`;
      return {
        list,
        firstPage: `${list}?per_page=100&sort=asc&order_by=created_at`,
        one: list,
        update: "PUT",
        noun: "note",
        author: _author,
        self: (user) => _author({ author: user }),
        createdBySelf: false,
      };
    },
    advice: {
      forbidden:
        `${OPTIONS.gitlabToken.variable} needs the api scope and a role that may comment: Reporter or higher, and Developer when the same token writes the commit statuses too.`,
      not_found:
        `${OPTIONS.gitlabToken.variable} cannot see this project or merge request; use a token of this project.`,
    },
  },
};

function _project(repository: string): string {
  return `/projects/${encodeURIComponent(repository.trim())}`;
}

function _author(comment: unknown): number | null {
  const id = jsonFields(jsonFields(comment).author).id;
  return typeof id === "number" && Number.isSafeInteger(id) ? id : null;
}
