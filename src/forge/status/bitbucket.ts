/**
 * Bitbucket Cloud: one build status per agent, sent through the proxy every Bitbucket Pipelines
 * step has, so no credential is needed.
 */

import { OPTIONS } from "../../config/options.ts";
import type { ForgeHttp, RequestOptions } from "../http.ts";
import { HttpFailure } from "../../http/policy.ts";
import type { ForgeTarget } from "../target.ts";
import { clip } from "../../text/sanitize.ts";
import { outcomeLine } from "../../text/words.ts";
import { type StatusEnd, type StatusForge, statusName, type StatusStart } from "./commit_status.ts";
import type { EndedOutcome } from "./github.ts";

export const BITBUCKET_STATES: Readonly<Record<EndedOutcome, string>> = {
  passed: "SUCCESSFUL",
  failed: "FAILED",
  unchecked: "FAILED",
  timed_out: "FAILED",
  interrupted: "STOPPED",
};

export interface BitbucketStatusesOptions {
  readonly target: ForgeTarget;
  readonly bitbucket: ForgeHttp;
  /** Bitbucket requires a `url`, even when no run gave one. */
  readonly fallbackLink: string;
}

/**
 * Keyed by the agent's UUID (Bitbucket allows at most 40 characters): a later run replaces the
 * same status.
 */
export class BitbucketStatuses implements StatusForge {
  readonly forge = "Bitbucket";
  readonly #options: BitbucketStatusesOptions;
  readonly #url: string;

  constructor(options: BitbucketStatusesOptions) {
    this.#options = options;
    this.#url = `${options.target.apiUrl}/statuses/build`;
  }

  /** Bitbucket's proxy answers at once or not at all: nothing waits for a rate limit here. */
  finishBy(): void {}

  async start(start: StatusStart, options: RequestOptions): Promise<void> {
    await this.#post(start.agentId, "INPROGRESS", "waiting for the verdict", start.link, options);
  }

  async end({ agent, link }: StatusEnd, options: RequestOptions): Promise<void> {
    await this.#post(
      agent.agentId,
      BITBUCKET_STATES[agent.outcome as EndedOutcome],
      outcomeLine(agent.outcome),
      link,
      options,
    );
  }

  advice(): string {
    return `Run the step in Bitbucket Pipelines, whose proxy (${this.#options.bitbucket.proxy}, ${OPTIONS.bitbucketProxy.variable}) writes build statuses for the step's own repository.`;
  }

  /** A 4xx from the proxy would only repeat; no answer or a 5xx might not. */
  final(error: unknown): boolean {
    return error instanceof HttpFailure && error.status !== undefined && error.status < 500 &&
      error.kind !== "rate_limited";
  }

  async #post(
    agentId: string,
    state: string,
    description: string,
    link: string | null,
    options: RequestOptions,
  ): Promise<void> {
    try {
      await this.#options.bitbucket.request("POST", this.#url, {
        key: agentId.toLowerCase(),
        state,
        name: statusName(agentId),
        url: link ?? this.#options.fallbackLink,
        description: clip(description, 255),
      }, options);
    } catch (error) {
      if (!(error instanceof HttpFailure) || error.status === undefined || error.givenUp) {
        throw error;
      }
      throw new HttpFailure(
        error.kind,
        `Bitbucket answered POST …/statuses/build with ${error.status} through the proxy ${this.#options.bitbucket.proxy}`,
        { status: error.status, cause: error },
      );
    }
  }
}
