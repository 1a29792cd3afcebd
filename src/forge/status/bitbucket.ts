/**
 * Bitbucket Cloud: one build status per agent on the commit, sent through the proxy every
 * Bitbucket Pipelines step has, so no credential is needed (docs/ci/bitbucket.md).
 */

import { OPTIONS } from "../../config/options.ts";
import type { BitbucketProxy } from "../bitbucket.ts";
import { ForgeError, type RequestOptions } from "../http.ts";
import type { ForgeTarget } from "../target.ts";
import { clip } from "../../text/sanitize.ts";
import { outcomeLine } from "../../text/words.ts";
import { type StatusEnd, type StatusForge, statusName, type StatusStart } from "./commit_status.ts";
import type { EndedOutcome } from "./github.ts";

/**
 * A Bitbucket build status's state per outcome.
 *
 * @example
 * ```ts
 * BITBUCKET_STATES.interrupted; // "STOPPED"
 * ```
 */
export const BITBUCKET_STATES: Readonly<Record<EndedOutcome, string>> = {
  passed: "SUCCESSFUL",
  failed: "FAILED",
  unchecked: "FAILED",
  timed_out: "FAILED",
  interrupted: "STOPPED",
};

/** Options of {@linkcode BitbucketStatuses}. */
export interface BitbucketStatusesOptions {
  /** Where: the commit's API address through the proxy. */
  readonly target: ForgeTarget;
  /** Bitbucket's client for the run, through the proxy, under Bitbucket's limits. */
  readonly bitbucket: BitbucketProxy;
  /** The link a status needs when no run gave one (Bitbucket requires a `url`). */
  readonly fallbackLink: string;
}

/**
 * The build statuses of one commit on Bitbucket Cloud, one per agent, keyed by the agent's
 * UUID (at most 40 characters, as Bitbucket requires): a later run replaces the same status.
 */
export class BitbucketStatuses implements StatusForge {
  /** The forge's name for messages. */
  readonly forge = "Bitbucket";
  readonly #options: BitbucketStatusesOptions;
  readonly #url: string;

  /** The commit's statuses on Bitbucket Cloud. */
  constructor(options: BitbucketStatusesOptions) {
    this.#options = options;
    this.#url = `${options.target.apiUrl}/statuses/build`;
  }

  /** Bitbucket's proxy answers at once or not at all: nothing waits for a rate limit here. */
  finishBy(): void {}

  /** Sets the agent's status `INPROGRESS`. */
  async start(start: StatusStart, options: RequestOptions): Promise<void> {
    await this.#post(start.agentId, "INPROGRESS", "waiting for the verdict", start.link, options);
  }

  /** Sets the agent's final status. */
  async end({ agent, link }: StatusEnd, options: RequestOptions): Promise<void> {
    await this.#post(
      agent.agentId,
      BITBUCKET_STATES[agent.outcome as EndedOutcome],
      outcomeLine(agent.outcome),
      link,
      options,
    );
  }

  /** How to enable what failed. */
  advice(): string {
    return `Run the step in Bitbucket Pipelines, whose proxy (${this.#options.bitbucket.proxy}, ${OPTIONS.bitbucketProxy.variable}) writes build statuses for the step's own repository.`;
  }

  /** A 4xx from the proxy would only repeat; no answer or a 5xx might not. */
  final(error: unknown): boolean {
    return error instanceof ForgeError && error.status !== null && error.status < 500 &&
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
      if (!(error instanceof ForgeError) || error.status === null || error.givenUp) throw error;
      throw new ForgeError(
        error.kind,
        `Bitbucket answered POST …/statuses/build with ${error.status} through the proxy ${this.#options.bitbucket.proxy}`,
        { status: error.status, cause: error },
      );
    }
  }
}
