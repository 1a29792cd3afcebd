/**
 * The run's forge clients: one per forge, every writer of that forge (the commit statuses, the
 * comment, Code Insights) sharing its limits, each made from a {@linkcode ForgeTarget}. At the
 * end, one line per forge says how many writes a rate limit made the run give up.
 */

import { BitbucketProxy } from "./bitbucket.ts";
import { type ForgeHttp, githubApi, gitlabApi } from "./client.ts";
import { ForgeLimits } from "./limits.ts";
import type { ForgeName, ForgeTarget } from "./target.ts";

/** The effects the clients are made with. */
export interface ForgeClientsOptions {
  /** The `User-Agent` header (GitHub requires one). */
  readonly userAgent: string;
  /** Wall-clock time in epoch milliseconds. */
  readonly now: () => number;
  /** Waits `ms`, or rejects when `signal` aborts (retries, a rate limit's pause). */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** The fetch for GitHub and GitLab. */
  readonly fetch: typeof fetch;
  /**
   * The fetch through Bitbucket's proxy; each request bounded by `timeoutMs()` when given, else
   * by the request time bound.
   */
  readonly proxyFetch: (proxy: string, timeoutMs?: () => number) => typeof fetch;
  /** How long one request may take (`--request-timeout-seconds`). */
  readonly requestTimeoutMs?: number | undefined;
}

/**
 * The clients of one run, by forge.
 *
 * @example
 * ```ts
 * import type { ForgeTarget } from "./target.ts";
 * import { sleep } from "../sleep.ts";
 * declare const target: ForgeTarget;
 * const clients = new ForgeClients({
 *   userAgent: "service-ci/1.0.0",
 *   now: Date.now,
 *   sleep,
 *   fetch,
 *   proxyFetch: () => fetch,
 * });
 * const http = clients.api(target);
 * ```
 */
export class ForgeClients {
  readonly #options: ForgeClientsOptions;
  readonly #limits = new Map<ForgeName, ForgeLimits>();
  readonly #apis = new Map<string, ForgeHttp>();

  /** No client is made until asked for. */
  constructor(options: ForgeClientsOptions) {
    this.#options = options;
  }

  /** The wall clock the clients use, in epoch milliseconds. */
  get now(): () => number {
    return this.#options.now;
  }

  /** The limits of `forge`, shared by all its clients. */
  limits(forge: ForgeName): ForgeLimits {
    let limits = this.#limits.get(forge);
    if (limits === undefined) {
      limits = new ForgeLimits({ forge, now: this.#options.now, sleep: this.#options.sleep });
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
        fetch: this.#options.fetch,
        sleep: this.#options.sleep,
        now: this.#options.now,
        limits: this.limits(target.forge),
        ...(this.#options.requestTimeoutMs === undefined
          ? {}
          : { requestTimeoutMs: this.#options.requestTimeoutMs }),
      });
      this.#apis.set(key, http);
    }
    return http;
  }

  /**
   * The client through Bitbucket's proxy for a Bitbucket target, under the forge's limits; with
   * `timeoutMs`, each request has that bound (a CI channel's, for Code Insights).
   */
  bitbucket(target: ForgeTarget, timeoutMs?: () => number): BitbucketProxy {
    const proxy = target.proxy ?? "";
    return new BitbucketProxy({
      proxy,
      fetch: this.#options.proxyFetch(proxy, timeoutMs),
      limits: this.limits("Bitbucket"),
      now: this.#options.now,
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
