/** The run's forge clients: one per forge, shared by every writer of that forge with its limits. */

import type { Clock, Http } from "../effects.ts";
import { boundedFetch } from "../http/policy.ts";
import { bitbucketApi, DEFAULT_REQUEST_TIMEOUT_MS, type ForgeHttp, tokenApi } from "./http.ts";
import { ForgeLimits } from "./limits.ts";
import type { ForgeName, ForgeTarget } from "./target.ts";

export interface ForgeClientsOptions {
  /** GitHub requires one. */
  readonly userAgent: string;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly http: Http;
  /** `--request-timeout-seconds`. */
  readonly requestTimeoutMs?: number | undefined;
}

export class ForgeClients {
  readonly #options: ForgeClientsOptions;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly #limits = new Map<ForgeName, ForgeLimits>();
  readonly #apis = new Map<string, ForgeHttp>();
  #fetch: typeof fetch | undefined;

  constructor(options: ForgeClientsOptions) {
    this.#options = options;
    this.clock = options.clock;
  }

  limits(forge: ForgeName): ForgeLimits {
    const limits = this.#limits.get(forge) ?? new ForgeLimits({ forge, clock: this.clock });
    this.#limits.set(forge, limits);
    return limits;
  }

  /**
   * The same client for the same forge, address and token.
   *
   * @throws {TypeError} For a Bitbucket target, which has {@linkcode ForgeClients.bitbucket}.
   */
  api(target: ForgeTarget): ForgeHttp {
    if (target.forge === "Bitbucket" || target.token === null) {
      throw new TypeError(`${target.forge} has no REST client with a token here`);
    }
    const key = `${target.forge} ${target.apiUrl} ${target.token.value}`;
    const http = this.#apis.get(key) ?? tokenApi(target.forge, {
      token: target.token.value,
      apiUrl: target.apiUrl,
      userAgent: this.#options.userAgent,
      fetch: this.#fetch ??= this.#options.http.makeFetch({}),
      clock: this.clock,
      timeout: this.#options.http.timeout,
      limits: this.limits(target.forge),
      log: this.#options.http.log,
      requestTimeoutMs: this.#options.requestTimeoutMs,
    });
    this.#apis.set(key, http);
    return http;
  }

  /** `timeoutMs` bounds each request (a CI channel's bound, for Code Insights). */
  bitbucket(target: ForgeTarget, timeoutMs?: () => number): ForgeHttp {
    const proxy = target.proxy ?? "";
    const { http, requestTimeoutMs } = this.#options;
    return bitbucketApi({
      proxy,
      fetch: boundedFetch(
        http.makeFetch({ proxy }),
        timeoutMs ?? (() => requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
        http.timeout,
      ),
      limits: this.limits("Bitbucket"),
      clock: this.clock,
      log: http.log,
    });
  }

  /** The lines to print once every writer has finished; ends the limits' timers. */
  settle(): string[] {
    const lines: string[] = [];
    for (const limits of this.#limits.values()) {
      limits.close();
      const { count, why } = limits.givenUp;
      if (count === 0) continue;
      const requests = count === 1 ? "1 request was" : `${count} requests were`;
      lines.push(
        `service-ci: ${limits.forge} asked to wait out a rate limit past the time left to finish (${why}); ${requests} given up. The gate's verdict and exit code are not affected.`,
      );
    }
    return lines;
  }
}
