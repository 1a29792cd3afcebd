/**
 * GitLab and Bitbucket Cloud: one commit status per agent, each write one POST, its state from a
 * table. Bitbucket's go through the proxy every Pipelines step has, so no credential is needed.
 */

import { OPTIONS } from "../../config/options.ts";
import type { ForgeHttp } from "../http.ts";
import type { ForgeTarget } from "../target.ts";
import type { Outcome } from "../../report/outcome.ts";
import { clip } from "../../text/sanitize.ts";
import { httpLink } from "../../text/markdown.ts";
import {
  lacksPermission,
  statusDescription,
  type StatusForge,
  statusName,
  tokenAdvice,
} from "./commit_status.ts";
import { HttpFailure } from "../../http/failure.ts";

// `triggered`: the state while the gate runs.
const _STATES: Readonly<Record<"GitLab" | "Bitbucket", Readonly<Record<Outcome, string>>>> = {
  GitLab: {
    triggered: "running",
    passed: "success",
    failed: "failed",
    unchecked: "failed",
    timed_out: "failed",
    interrupted: "canceled",
  },
  Bitbucket: {
    triggered: "INPROGRESS",
    passed: "SUCCESSFUL",
    failed: "FAILED",
    unchecked: "FAILED",
    timed_out: "FAILED",
    interrupted: "STOPPED",
  },
};

// GitLab refuses a target_url or description over 255 characters; Bitbucket a longer description.
const _FIELD_MAX = 255;

/**
 * Each status carries the pipeline's `ref` and, when the commit is the pipeline's own, its
 * `pipeline_id`, so a commit with several pipelines gets the statuses on this one.
 */
export function gitlabStatuses(target: ForgeTarget, http: ForgeHttp): StatusForge {
  const project = encodeURIComponent(target.repository.trim());
  const path = `/projects/${project}/statuses/${target.commit.sha}`;
  const { ref, pipelineId } = target;
  return {
    forge: "GitLab",
    async write(agentId, { link, ended }, options) {
      const outcome = ended?.agent.outcome ?? "triggered";
      await http.request("POST", path, {
        state: _STATES.GitLab[outcome],
        name: statusName(agentId),
        ...(ref === null || ref.length > _FIELD_MAX ? {} : { ref }),
        ...(pipelineId === null ? {} : { pipeline_id: pipelineId }),
        description: clip(statusDescription(outcome), _FIELD_MAX),
        ...(link === null || link.length > _FIELD_MAX ? {} : { target_url: link }),
      }, options);
    },
    advice: (error) =>
      tokenAdvice("GitLab", error) ??
        (lacksPermission(error)
          ? `${OPTIONS.gitlabToken.variable} needs the api scope and the Developer role on this project (CI_JOB_TOKEN cannot set statuses).`
          : ""),
    final: (error) =>
      error instanceof HttpFailure &&
      ["unauthorized", "forbidden", "not_found", "refused"].includes(error.kind),
  };
}

/**
 * Keyed by the agent's UUID (Bitbucket allows at most 40 characters): a later run replaces the
 * same status. Bitbucket requires a `url`: the CI job's, or else the commit's, stands in when no
 * run gave one.
 */
export function bitbucketStatuses(
  target: ForgeTarget,
  bitbucket: ForgeHttp,
  buildUrl: string | null,
): StatusForge {
  const url = `${target.apiUrl}/statuses/build`;
  const fallbackLink = httpLink(buildUrl) ??
    `https://bitbucket.org/${target.repository}/commits/${target.commit.sha}`;
  return {
    forge: "Bitbucket",
    async write(agentId, { link, ended }, options) {
      const outcome = ended?.agent.outcome ?? "triggered";
      try {
        await bitbucket.request("POST", url, {
          key: agentId.toLowerCase(),
          state: _STATES.Bitbucket[outcome],
          name: statusName(agentId),
          url: link ?? fallbackLink,
          description: clip(statusDescription(outcome), _FIELD_MAX),
        }, options);
      } catch (error) {
        if (!(error instanceof HttpFailure) || error.status === undefined || error.givenUp) {
          throw error;
        }
        throw new HttpFailure(
          error.kind,
          `Bitbucket answered POST …/statuses/build with ${error.status} through the proxy ${bitbucket.proxy}`,
          { status: error.status, cause: error },
        );
      }
    },
    advice: () =>
      `Run the step in Bitbucket Pipelines, whose proxy (${bitbucket.proxy}, ${OPTIONS.bitbucketProxy.variable}) writes build statuses for the step's own repository.`,
    // A 4xx from the proxy would only repeat; no answer or a 5xx might not.
    final: (error) =>
      error instanceof HttpFailure && error.status !== undefined && error.status < 500 &&
      error.kind !== "rate_limited",
  };
}
