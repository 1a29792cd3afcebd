/**
 * The run's forge clients: one per forge, every writer of that forge (the commit statuses, the
 * comment, Code Insights) sharing its limits, each made from a {@linkcode ForgeTarget}. At the
 * end, one line per forge says how many writes a rate limit made the run give up.
 */

import { BitbucketProxy } from "./bitbucket.ts";
import type { Clock, Http } from "../effects.ts";
import { boundedFetch } from "../http/policy.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS, type ForgeHttp, githubApi, gitlabApi } from "./http.ts";
import { ForgeLimits } from "./limits.ts";
import type { ForgeName, ForgeTarget } from "./target.ts";

/** The effects the clients are made with. */
export interface ForgeClientsOptions {
  /** The `User-Agent` header (GitHub requires one). */
  readonly userAgent: string;
  /** The run's clock: retries, a rate limit's pause, `Retry-After` dates. */
  readonly clock: Pick<Clock, "now" | "sleep">;
  /**
   * The network: GitHub and GitLab directly, Bitbucket through its proxy, each request on the
   * run's request timer.
   */
  readonly http: Http;
  /** How long one request may take (`--request-timeout-seconds`). */
  readonly requestTimeoutMs?: number | undefined;
}

/**
 * The clients of one run, by forge.
 */
export class ForgeClients {
  readonly #options: ForgeClientsOptions;
  readonly #limits = new Map<ForgeName, ForgeLimits>();
  readonly #apis = new Map<string, ForgeHttp>();
  #fetch: typeof fetch | undefined;

  /** No client is made until asked for. */
  constructor(options: ForgeClientsOptions) {
    this.#options = options;
  }

  /** The clock the clients use. */
  get clock(): Pick<Clock, "now" | "sleep"> {
    return this.#options.clock;
  }

  /** The limits of `forge`, shared by all its clients. */
  limits(forge: ForgeName): ForgeLimits {
    let limits = this.#limits.get(forge);
    if (limits === undefined) {
      limits = new ForgeLimits({ forge, clock: this.#options.clock });
      this.#limits.set(forge, limits);
    }
    return limits;
  }

  /**
   * The REST client of a GitHub or GitLab target (the same one for the same forge, address and
   * token).
   *
   * @throws {TypeError} For a Bitbucket target, which has {@linkcode ForgeClients.bitbucket}.
   */
  api(target: ForgeTarget): ForgeHttp {
    if (target.forge === "Bitbucket" || target.token === null) {
      throw new TypeError(`${target.forge} has no REST client with a token here`);
    }
    const key = `${target.forge} ${target.apiUrl} ${target.token.value}`;
    let http = this.#apis.get(key);
    if (http === undefined) {
      const make = target.forge === "GitHub" ? githubApi : gitlabApi;
      http = make({
        token: target.token.value,
        apiUrl: target.apiUrl,
        userAgent: this.#options.userAgent,
        fetch: this.#fetch ??= this.#options.http.makeFetch({}),
        clock: this.#options.clock,
        timeout: this.#options.http.timeout,
        limits: this.limits(target.forge),
        log: this.#options.http.log,
        ...(this.#options.requestTimeoutMs === undefined
          ? {}
          : { requestTimeoutMs: this.#options.requestTimeoutMs }),
      });
      this.#apis.set(key, http);
    }
    return http;
  }

  /**
   * The client through the pipeline's proxy, for a Bitbucket target, under the forge's limits;
   * with `timeoutMs`, each request has that bound (a CI channel's, for Code Insights).
   */
  bitbucket(target: ForgeTarget, timeoutMs?: () => number): BitbucketProxy {
    const proxy = target.proxy ?? "";
    const { http, requestTimeoutMs } = this.#options;
    return new BitbucketProxy({
      proxy,
      fetch: boundedFetch(
        http.makeFetch({ proxy }),
        timeoutMs ?? (() => requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
        http.timeout,
      ),
      limits: this.limits("Bitbucket"),
      clock: this.#options.clock,
      log: http.log,
    });
  }

  /**
   * The lines to print once every writer has finished: per forge, how many writes a rate limit
   * made the run give up, and why. Ends the limits' timers.
   */
  settle(): string[] {
    const lines: string[] = [];
    for (const limits of this.#limits.values()) {
      limits.close();
      const { count, why } = limits.givenUp;
      if (count === 0) continue;
      lines.push(
        `service-ci: ${limits.forge} asked to wait out a rate limit past the time left to finish (${why}); ${count} ${
          count === 1 ? "request was" : "requests were"
        } given up. The gate's verdict and exit code are not affected.`,
      );
    }
    return lines;
  }
}
