/** GitLab: one commit status per agent, which the merge request's pipeline widget shows. */

import { OPTIONS } from "../../config/options.ts";
import type { ForgeHttp, RequestOptions } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import type { ForgeTarget } from "../target.ts";
import { clip } from "../../text/sanitize.ts";
import { outcomeLine } from "../../text/words.ts";
import { type StatusEnd, type StatusForge, statusName, type StatusStart } from "./commit_status.ts";
import type { EndedOutcome } from "./github.ts";

export const GITLAB_STATES: Readonly<Record<EndedOutcome, string>> = {
  passed: "success",
  failed: "failed",
  unchecked: "failed",
  timed_out: "failed",
  interrupted: "canceled",
};

// GitLab refuses a target_url or a description longer than 255 characters.
const _FIELD_MAX = 255;

export interface GitlabStatusesOptions {
  readonly target: ForgeTarget;
  readonly http: ForgeHttp;
}

/**
 * Each status carries the pipeline's `ref` and, when the commit is the pipeline's own, its
 * `pipeline_id`, so a commit with several pipelines gets the statuses on this one.
 */
export class GitlabStatuses implements StatusForge {
  readonly forge = "GitLab";
  readonly #http: ForgeHttp;
  readonly #path: string;
  readonly #target: ForgeTarget;

  constructor(options: GitlabStatusesOptions) {
    this.#target = options.target;
    this.#path = `/projects/${
      encodeURIComponent(options.target.repository.trim())
    }/statuses/${options.target.commit.sha}`;
    this.#http = options.http;
  }

  finishBy(endsAt: number): void {
    this.#http.limits.finishBy(endsAt);
  }

  async start(start: StatusStart, options: RequestOptions): Promise<void> {
    await this.#post(start.agentId, "running", "waiting for the verdict", start.link, options);
  }

  async end({ agent, link }: StatusEnd, options: RequestOptions): Promise<void> {
    await this.#post(
      agent.agentId,
      GITLAB_STATES[agent.outcome as EndedOutcome],
      outcomeLine(agent.outcome),
      link,
      options,
    );
  }

  advice(error: unknown): string {
    const kind = error instanceof HttpFailure ? error.kind : null;
    if (kind === "unauthorized") {
      return `Check ${OPTIONS.gitlabToken.variable}: a project access token with the api scope.`;
    }
    if (kind === "forbidden" || kind === "not_found") {
      return `${OPTIONS.gitlabToken.variable} needs the api scope and the Developer role on this project (CI_JOB_TOKEN cannot set statuses).`;
    }
    if (kind === "rate_limited") return "GitLab's API rate limit is used up for now.";
    return "";
  }

  final(error: unknown): boolean {
    return error instanceof HttpFailure &&
      ["unauthorized", "forbidden", "not_found", "refused"].includes(error.kind);
  }

  async #post(
    agentId: string,
    state: string,
    description: string,
    link: string | null,
    options: RequestOptions,
  ): Promise<void> {
    const { ref, pipelineId } = this.#target;
    await this.#http.request("POST", this.#path, {
      state,
      name: statusName(agentId),
      ...(ref === null || ref.length > _FIELD_MAX ? {} : { ref }),
      ...(pipelineId === null ? {} : { pipeline_id: pipelineId }),
      description: clip(description, _FIELD_MAX),
      ...(link === null || link.length > _FIELD_MAX ? {} : { target_url: link }),
    }, options);
  }
}
