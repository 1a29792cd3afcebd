/**
 * Bitbucket Cloud's client, through the pipeline's authenticated proxy (redirects only on
 * api.bitbucket.org, whose requests the proxy signs).
 */

import { fetchFollowing, RedirectError } from "../http/policy.ts";
import { sanitize } from "../text/sanitize.ts";
import type { Clock, ExchangeLog } from "../effects.ts";
import {
  acquireSlot,
  failureKind,
  ForgeError,
  MAX_RATE_LIMITED,
  type RequestOptions,
} from "./http.ts";
import { ForgeLimits, MIN_RATE_LIMIT_PAUSE_MS } from "./limits.ts";
import { parseRetryAfter } from "../service/backoff.ts";

export interface BitbucketProxyOptions {
  /** For messages. */
  readonly proxy: string;
  /** The fetch through the proxy, each request bounded in time. */
  readonly fetch: typeof fetch;
  /** Shared by every writer of the run; default limits of its own. */
  readonly limits?: ForgeLimits | undefined;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly log?: ExchangeLog | undefined;
}

export class BitbucketProxy {
  readonly forge = "Bitbucket";
  readonly #options: BitbucketProxyOptions;
  readonly #limits: ForgeLimits;

  constructor(options: BitbucketProxyOptions) {
    this.#options = options;
    this.#limits = options.limits ??
      new ForgeLimits({ forge: "Bitbucket", clock: options.clock });
  }

  get proxy(): string {
    return this.#options.proxy;
  }

  /**
   * No body is read. A 404 to a `DELETE` counts as done: what was to be deleted is not there.
   *
   * @throws {ForgeError} For every failure.
   */
  async request(
    method: string,
    url: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<number> {
    for (let limited = 0;; limited++) {
      const slot = await this.#acquire(method !== "GET", options);
      let status: number;
      let retryAfter: string | null = null;
      try {
        const signal = options.signal === undefined
          ? slot.signal
          : AbortSignal.any([slot.signal, options.signal]);
        const { response } = await fetchFollowing(new URL(url), {
          method,
          signal,
          ...(body === undefined
            ? {}
            : { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }),
        }, { fetch: this.#options.fetch, log: this.#options.log, attempt: limited + 1 });
        await response.body?.cancel();
        status = response.status;
        retryAfter = response.headers.get("retry-after");
      } catch (cause) {
        if (cause instanceof RedirectError) {
          throw new ForgeError("refused", cause.message, { cause });
        }
        const text = cause instanceof Error ? cause.message : String(cause);
        throw new ForgeError("network", sanitize(text, { maxLength: 200 }), { cause });
      } finally {
        slot.release();
      }
      if ((status >= 200 && status < 300) || (method === "DELETE" && status === 404)) {
        return status;
      }
      const what = `${method} answered ${status}`;
      if (status === 429 && limited < MAX_RATE_LIMITED) {
        const now = this.#options.clock.now();
        this.#limits.pause(parseRetryAfter(retryAfter, now) ?? MIN_RATE_LIMIT_PAUSE_MS, what);
        continue;
      }
      const kind = failureKind(status);
      const error = new ForgeError(kind, what, { status });
      if (kind === "unauthorized") this.#limits.refuse(error);
      throw error;
    }
  }

  #acquire(write: boolean, options: RequestOptions) {
    return acquireSlot(
      this.#limits,
      write,
      options,
      (error) =>
        new ForgeError("network", `no answer through the proxy ${this.proxy}`, { cause: error }),
    );
  }
}
