/**
 * Bitbucket Cloud: one build status per agent, and Code Insights, through the proxy every
 * Pipelines step has, which signs each request for the step's own repository: no credential here.
 */

import { OPTIONS } from "../config/options.ts";
import { boundedFetch, fetchFollowing } from "../http/fetch.ts";
import { failureKind, HttpFailure, networkFailure } from "../http/failure.ts";
import type { Outcome } from "../report/outcome.ts";
import { parseRetryAfter } from "../service/timing.ts";
import { httpLink } from "../text/markdown.ts";
import { clip } from "../text/sanitize.ts";
import type { Forge } from "./forge.ts";
import { type Exchange, jsonRequest } from "./http.ts";
import { MIN_RATE_LIMIT_PAUSE_MS } from "./limits.ts";
import { statusDescription, statusName } from "./writes.ts";

/** Every Bitbucket Pipelines step has it: it signs requests to `http://api.bitbucket.org`. */
export const BITBUCKET_PROXY = "http://localhost:29418";

const _STATES: Readonly<Record<Outcome, string>> = {
  triggered: "INPROGRESS",
  passed: "SUCCESSFUL",
  failed: "FAILED",
  unchecked: "FAILED",
  timed_out: "FAILED",
  interrupted: "STOPPED",
};

// Bitbucket refuses a longer description.
const _FIELD_MAX = 255;

export const bitbucket: Forge = {
  name: "Bitbucket",
  provider: "bitbucket",
  // Bitbucket documents no figure.
  concurrency: { inFlight: 4, writes: 2 },
  codeInsights: true,
  commitVariable: "BITBUCKET_COMMIT",
  commitOf: () => null,
  connect({ config, read, commit, skip }) {
    const [owner, name] = (read("BITBUCKET_REPO_FULL_NAME") ?? "").split("/");
    const workspace = read("BITBUCKET_WORKSPACE") || owner;
    const slug = read("BITBUCKET_REPO_SLUG") || name;
    if (!workspace || !slug) {
      return skip(
        "BITBUCKET_WORKSPACE and BITBUCKET_REPO_SLUG (or BITBUCKET_REPO_FULL_NAME) are not set",
      );
    }
    const repository = `${encodeURIComponent(workspace)}/${encodeURIComponent(slug)}`;
    return {
      apiUrl: `http://api.bitbucket.org/2.0/repositories/${repository}/commit/${commit}`,
      token: null,
      proxy: config.bitbucketProxy ?? BITBUCKET_PROXY,
      repository,
      gate: { workflow: "", job: "" },
    };
  },
  exchange: (target, setup) => _proxyExchange(target.proxy ?? BITBUCKET_PROXY, setup),
  /**
   * Keyed by the agent's UUID (Bitbucket allows 40 characters): a later run replaces the same
   * status. Bitbucket requires a `url`: the CI job's, or else the commit's, when no run gave one.
   */
  statuses(target, http, { buildUrl }) {
    const url = `${target.apiUrl}/statuses/build`;
    const proxy = target.proxy ?? BITBUCKET_PROXY;
    const fallbackLink = httpLink(buildUrl) ??
      `https://bitbucket.org/${target.repository}/commits/${target.commit.sha}`;
    return {
      forge: "Bitbucket",
      async write(agentId, { link, ended }, options) {
        const outcome = ended?.agent.outcome ?? "triggered";
        try {
          await http.request("POST", url, {
            key: agentId.toLowerCase(),
            state: _STATES[outcome],
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
            `Bitbucket answered POST …/statuses/build with ${error.status} through the proxy ${proxy}`,
            { status: error.status, cause: error },
          );
        }
      },
      advice: () =>
        `Run the step in Bitbucket Pipelines, whose proxy (${proxy}, ${OPTIONS.bitbucketProxy.variable}) writes build statuses for the step's own repository.`,
      // A 4xx from the proxy would only repeat; no answer or a 5xx might not.
      final: (error) =>
        error instanceof HttpFailure && error.status !== undefined && error.status < 500 &&
        error.kind !== "rate_limited",
    };
  },
};

/** No body read, a 404 to a `DELETE` done, only a rate limit retried, failures the proxy's. */
function _proxyExchange(proxy: string, setup: Parameters<Forge["exchange"]>[1]): Exchange {
  const { http, clock } = setup;
  const secrets = http.secrets ?? [];
  const fetch = boundedFetch(http.makeFetch({ proxy }), setup.requestTimeoutMs, http.timeout);
  return {
    attempts: 1,
    limitedGivesUp: true,
    unreached: (cause) =>
      new HttpFailure("network", `no answer through the proxy ${proxy}`, { cause }),
    async send(method, start, body, { signal, attempt }) {
      const request = { ...jsonRequest(method, body, {}, secrets), signal };
      const answer = await fetchFollowing(start, request, { fetch, log: http.log, attempt }).catch(
        (cause: unknown) => {
          // A redirect the policy did not follow: the proxy's words are the policy's, refused.
          if (cause instanceof HttpFailure) {
            throw new HttpFailure("refused", cause.message, { cause });
          }
          throw networkFailure(cause, secrets, { forge: undefined });
        },
      );
      const { response, method: sent } = answer;
      await response.body?.cancel();
      const status = response.status;
      if ((status >= 200 && status < 300) || (sent === "DELETE" && status === 404)) {
        return { data: null, headers: response.headers };
      }
      const kind = failureKind(status, "forge");
      const retryAfterMs = kind === "rate_limited"
        ? parseRetryAfter(response.headers.get("retry-after"), clock.now()) ??
          MIN_RATE_LIMIT_PAUSE_MS
        : undefined;
      throw new HttpFailure(kind, `${sent} answered ${status}`, { status, retryAfterMs });
    },
  };
}
