/** The run's forge clients: one per forge, shared by every writer of that forge with its limits. */

import type { Clock, Http } from "../effects.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS, ForgeHttp } from "./http.ts";
import { ForgeLimits } from "./limits.ts";
import type { ForgeName, ForgeTarget } from "./target.ts";
import { boundedFetch } from "../http/fetch.ts";

export class ForgeClients {
  readonly #limits = new Map<ForgeName, ForgeLimits>();
  readonly #apis = new Map<string, ForgeHttp>();
  #fetch: typeof fetch | undefined;

  constructor(
    readonly options: {
      /** GitHub requires one. */
      readonly userAgent: string;
      readonly clock: Pick<Clock, "now" | "sleep">;
      readonly http: Http;
      /** `--request-timeout-seconds`. */
      readonly requestTimeoutMs?: number | undefined;
    },
  ) {}

  /** A writer's time to finish, from its window: no forge's pause is waited out past `deadline`. */
  finishBy(deadline: number): void {
    for (const limits of this.#limits.values()) limits.finishBy(deadline);
  }

  #limitsOf(forge: ForgeName): ForgeLimits {
    const limits = this.#limits.get(forge) ?? new ForgeLimits(forge, this.options.clock);
    this.#limits.set(forge, limits);
    return limits;
  }

  /**
   * GitHub's or GitLab's API with the target's token: one client per forge, address and token.
   *
   * @throws {TypeError} For a Bitbucket target, which has {@linkcode ForgeClients.bitbucket}.
   */
  api(target: ForgeTarget): ForgeHttp {
    if (target.forge === "Bitbucket" || target.token === null) {
      throw new TypeError(`${target.forge} has no REST client with a token here`);
    }
    const { forge, apiUrl, token: { value: token } } = target;
    const { userAgent, clock, http, requestTimeoutMs } = this.options;
    const key = `${forge} ${apiUrl} ${token}`;
    const api = this.#apis.get(key) ?? new ForgeHttp({
      forge,
      baseUrl: apiUrl,
      headers: forge === "GitHub"
        ? {
          Authorization: `Bearer ${token}`,
          Accept: "application/vnd.github+json",
          "X-GitHub-Api-Version": "2022-11-28",
          "User-Agent": userAgent,
        }
        : { "PRIVATE-TOKEN": token, Accept: "application/json", "User-Agent": userAgent },
      secrets: [token, ...http.secrets ?? []],
      fetch: this.#fetch ??= http.makeFetch({}),
      clock,
      timeout: http.timeout,
      limits: this.#limitsOf(forge),
      log: http.log,
      requestTimeoutMs,
    });
    this.#apis.set(key, api);
    return api;
  }

  /** Bitbucket via the pipeline's signing proxy; `timeoutMs` bounds a request (Code Insights). */
  bitbucket(target: ForgeTarget, timeoutMs?: () => number): ForgeHttp {
    const proxy = target.proxy ?? "";
    const { http, requestTimeoutMs } = this.options;
    return new ForgeHttp({
      forge: "Bitbucket",
      baseUrl: "http://api.bitbucket.org",
      headers: {},
      secrets: http.secrets ?? [],
      proxy,
      fetch: boundedFetch(
        http.makeFetch({ proxy }),
        timeoutMs ?? (() => requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
        http.timeout,
      ),
      timeout: undefined,
      limits: this.#limitsOf("Bitbucket"),
      clock: this.options.clock,
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
