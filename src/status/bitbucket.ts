/**
 * Bitbucket Cloud: one build status per agent on the commit, sent through the proxy every
 * Bitbucket Pipelines step has, so no credential is needed (docs/ci/bitbucket.md).
 */

import { sendThroughProxy } from "../report/bitbucket.ts";
import { clip } from "../sanitize.ts";
import { outcomeLine } from "../words.ts";
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
  /** The commit's API address (`bitbucketCommitApi`), which the proxy signs. */
  readonly commitApi: string;
  /** The proxy's address, for messages. */
  readonly proxy: string;
  /** The fetch through the proxy, each request bounded in time. */
  readonly fetch: typeof fetch;
  /** The link a status needs when no run gave one (Bitbucket requires a `url`). */
  readonly fallbackLink: string;
}

/**
 * The build statuses of one commit on Bitbucket Cloud, one per agent, keyed by the agent's
 * UUID (at most 40 characters, as Bitbucket requires): a later run replaces the same status.
 * Requests go through the proxy by the HTTP policy, as the Code Insights report's do.
 *
 * @example
 * ```ts
 * const statuses = new BitbucketStatuses({
 *   commitApi:
 *     "http://api.bitbucket.org/2.0/repositories/acme/widgets/commit/4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
 *   proxy: "http://localhost:29418",
 *   fetch,
 *   fallbackLink: "https://bitbucket.org/acme/widgets/commits/4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
 * });
 * ```
 */
export class BitbucketStatuses implements StatusForge {
  /** The forge's name for messages. */
  readonly forge = "Bitbucket";
  readonly #options: BitbucketStatusesOptions;
  readonly #url: string;

  /** The commit's statuses on Bitbucket Cloud. */
  constructor(options: BitbucketStatusesOptions) {
    this.#options = options;
    this.#url = `${options.commitApi}/statuses/build`;
  }

  /** Sets the agent's status `INPROGRESS`. */
  async start(start: StatusStart): Promise<void> {
    await this.#post(start.agentId, "INPROGRESS", "waiting for the verdict", start.link);
  }

  /** Sets the agent's final status. */
  async end({ agent, link }: StatusEnd): Promise<void> {
    await this.#post(
      agent.agentId,
      BITBUCKET_STATES[agent.outcome as EndedOutcome],
      outcomeLine(agent.outcome),
      link,
    );
  }

  /** How to enable what failed. */
  advice(): string {
    return `Run the step in Bitbucket Pipelines, whose proxy (${this.#options.proxy}, SERVICE_BITBUCKET_PROXY) writes build statuses for the step's own repository.`;
  }

  /** A 4xx from the proxy would only repeat; no answer or a 5xx might not. */
  final(error: unknown): boolean {
    return error instanceof _Answered && error.status < 500;
  }

  async #post(
    agentId: string,
    state: string,
    description: string,
    link: string | null,
  ): Promise<void> {
    const status = await sendThroughProxy(this.#options.fetch, "POST", this.#url, {
      key: agentId.toLowerCase(),
      state,
      name: statusName(agentId),
      url: link ?? this.#options.fallbackLink,
      description: clip(description, 255),
    });
    if (status < 200 || status >= 300) {
      throw new _Answered(
        status,
        `Bitbucket answered POST …/statuses/build with ${status} through the proxy ${this.#options.proxy}`,
      );
    }
  }
}

class _Answered extends Error {
  override name = "BitbucketError";
  constructor(readonly status: number, message: string) {
    super(message);
  }
}
