/**
 * GitLab: one commit status per agent, `POST /projects/:id/statuses/:sha`, which the merge
 * request's pipeline widget shows (docs/ci/gitlab.md, "Commit statuses").
 */

import {
  type ForgeEffects,
  ForgeError,
  type ForgeHttp,
  gitlabApi,
} from "../pr_comment/forge_http.ts";
import { clip } from "../sanitize.ts";
import { outcomeLine } from "../words.ts";
import { type StatusEnd, type StatusForge, statusName, type StatusStart } from "./commit_status.ts";
import type { EndedOutcome } from "./github.ts";

/**
 * A GitLab commit status's state per outcome.
 *
 * @example
 * ```ts
 * GITLAB_STATES.interrupted; // "canceled"
 * ```
 */
export const GITLAB_STATES: Readonly<Record<EndedOutcome, string>> = {
  passed: "success",
  failed: "failed",
  unchecked: "failed",
  timed_out: "failed",
  interrupted: "canceled",
};

// GitLab refuses a target_url or a description longer than 255 characters.
const _FIELD_MAX = 255;

/** Options of {@linkcode GitlabStatuses}. */
export interface GitlabStatusesOptions extends ForgeEffects {
  /** A project access token with the `api` scope (`SERVICE_GITLAB_TOKEN`). */
  readonly token: string;
  /** The API root, `CI_API_V4_URL`. */
  readonly apiUrl: string;
  /** The project's id (`CI_PROJECT_ID`). */
  readonly projectId: string;
  /** The commit the gate evaluated: the merge request's head. */
  readonly sha: string;
  /** The `User-Agent` header. */
  readonly userAgent: string;
}

/**
 * The commit statuses of one commit on GitLab, one per agent.
 *
 * @example
 * ```ts
 * const statuses = new GitlabStatuses({
 *   token: "glpat-example",
 *   apiUrl: "https://gitlab.com/api/v4",
 *   projectId: "1234",
 *   sha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
 *   userAgent: "service-ci/1.0.0",
 * });
 * // await statuses.start({ agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", runId: "run_1", link: null });
 * ```
 */
export class GitlabStatuses implements StatusForge {
  /** The forge's name for messages. */
  readonly forge = "GitLab";
  readonly #http: ForgeHttp;
  readonly #target: string;

  /** The commit's statuses on GitLab. */
  constructor(options: GitlabStatusesOptions) {
    this.#target = `/projects/${
      encodeURIComponent(options.projectId.trim())
    }/statuses/${options.sha}`;
    this.#http = gitlabApi(options);
  }

  /** Sets the agent's status `running`. */
  async start(start: StatusStart): Promise<void> {
    await this.#post(start.agentId, "running", "waiting for the verdict", start.link);
  }

  /** Sets the agent's final status. */
  async end({ agent, link }: StatusEnd): Promise<void> {
    await this.#post(
      agent.agentId,
      GITLAB_STATES[agent.outcome as EndedOutcome],
      outcomeLine(agent.outcome),
      link,
    );
  }

  /** How to enable what failed. */
  advice(error: unknown): string {
    const kind = error instanceof ForgeError ? error.kind : null;
    if (kind === "unauthorized") {
      return "Check SERVICE_GITLAB_TOKEN: a project access token with the api scope.";
    }
    if (kind === "forbidden" || kind === "not_found") {
      return "SERVICE_GITLAB_TOKEN needs the api scope and the Developer role on this project (CI_JOB_TOKEN cannot set statuses).";
    }
    if (kind === "rate_limited") return "GitLab's API rate limit is used up for now.";
    return "";
  }

  /** A refused token or a refused redirect: another attempt would only repeat it. */
  final(error: unknown): boolean {
    return error instanceof ForgeError &&
      ["unauthorized", "forbidden", "not_found", "refused"].includes(error.kind);
  }

  async #post(
    agentId: string,
    state: string,
    description: string,
    link: string | null,
  ): Promise<void> {
    await this.#http.request("POST", this.#target, {
      state,
      name: statusName(agentId),
      description: clip(description, _FIELD_MAX),
      ...(link === null || link.length > _FIELD_MAX ? {} : { target_url: link }),
    });
  }
}
