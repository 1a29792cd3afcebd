/** The run's forge clients: one per forge, shared by every writer of that forge with its limits. */

import type { Clock, Http } from "../effects.ts";
import { DEFAULT_REQUEST_TIMEOUT_MS, type ExchangeSetup, ForgeHttp } from "./http.ts";
import { ForgeLimits } from "./limits.ts";
import type { ForgeTarget } from "./forge.ts";
import { forgeNamed } from "./registry.ts";

export class ForgeClients {
  readonly #limits = new Map<string, ForgeLimits>();
  readonly #clients = new Map<string, ForgeHttp>();
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

  /**
   * The target's forge, with its token or via its proxy: one client per forge, address and token.
   * `timeoutMs` (Code Insights) replaces `--request-timeout-seconds`, in a client of its own.
   */
  http(target: ForgeTarget, timeoutMs?: () => number): ForgeHttp {
    const forge = forgeNamed(target.forge);
    const key = [forge.name, target.apiUrl, target.token?.value, target.proxy].join(" ");
    const cached = timeoutMs === undefined ? this.#clients.get(key) : undefined;
    if (cached !== undefined) return cached;
    const { userAgent, clock, http, requestTimeoutMs } = this.options;
    const limits = this.#limits.get(forge.name) ??
      new ForgeLimits(forge.name, clock, forge.concurrency);
    this.#limits.set(forge.name, limits);
    const setup: ExchangeSetup = {
      userAgent,
      http,
      clock,
      requestTimeoutMs: timeoutMs ?? (() => requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
      fetch: () => this.#fetch ??= http.makeFetch({}),
    };
    const client = new ForgeHttp(forge.name, {
      baseUrl: target.apiUrl,
      exchange: forge.exchange(target, setup),
      clock,
      limits,
    });
    if (timeoutMs === undefined) this.#clients.set(key, client);
    return client;
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
