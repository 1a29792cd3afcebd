/**
 * One client per forge (GitHub, GitLab) for every writer: the token goes only to the API's origin,
 * a rate limit pauses every writer of the forge, and a refused token (401) ends later requests.
 */

import { exponentialDelay, parseRetryAfter } from "../service/timing.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import type { Clock, ExchangeLog, Http } from "../effects.ts";
import { ForgeLimits, MIN_RATE_LIMIT_PAUSE_MS, type Priority } from "./limits.ts";
import { failureKind, HttpFailure } from "../http/failure.ts";
import {
  fetchFollowing,
  MAX_FORGE_BODY_BYTES,
  proxyAuthRefusal,
  readCapped,
} from "../http/fetch.ts";

/** 5xx or no answer: retried but for `POST`; a rate limit, once paused out, for any method. */
export const MAX_ATTEMPTS = 3;
const MAX_RATE_LIMITED = 3;
const RETRY_DELAY_MS = 1_000;
/** A 5xx's longer `Retry-After` is ignored; a rate limit's is waited out whatever its length. */
const MAX_RETRY_AFTER_MS = 10_000;
/** Its redirects and its answer's body included. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

export interface ForgeHttpOptions {
  readonly forge: string;
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Its token and the run's: masked in its messages and in every request body. */
  readonly secrets: readonly string[];
  readonly fetch: typeof fetch;
  readonly clock: Pick<Clock, "now" | "sleep">;
  /** None for Bitbucket's proxy: its fetch bounds each request itself. */
  readonly timeout: Http["timeout"] | undefined;
  readonly requestTimeoutMs?: number | undefined;
  /** Shared by every client of the run; default limits of its own. */
  readonly limits?: ForgeLimits;
  readonly log?: ExchangeLog | undefined;
  /**
   * Bitbucket's proxy, for messages: no body is read, a 404 to a `DELETE` counts as done, only a
   * rate limit is tried again, and failures are worded as the proxy's.
   */
  readonly proxy?: string;
}

export interface RequestOptions {
  /** Default `background`: the comment's. */
  readonly priority?: Priority;
  /** Ends the request, and its wait for a slot, early. */
  readonly signal?: AbortSignal | undefined;
  readonly attempts?: number;
}

export interface ForgeAnswer {
  readonly data: unknown;
  readonly headers: Headers;
}

export class ForgeHttp {
  readonly #options: ForgeHttpOptions;
  readonly #base: URL;
  readonly forge: string;
  /** The API's origin: the only place the token is sent. */
  readonly origin: string;
  readonly limits: ForgeLimits;
  readonly proxy: string | undefined;

  /** `baseUrl` was checked by the target (`tokenUrlProblem`): https, or http on loopback. */
  constructor(options: ForgeHttpOptions) {
    this.#options = options;
    this.#base = new URL(options.baseUrl.replace(/\/+$/, ""));
    this.forge = options.forge;
    this.origin = this.#base.origin;
    this.limits = options.limits ?? new ForgeLimits(options.forge, options.clock);
    this.proxy = options.proxy;
  }

  /**
   * `target`: a path under the API root or a URL on its origin (a pagination link). A POST is not
   * retried after a 5xx or network error, which may have created what it asked for.
   *
   * @throws {HttpFailure} For every failure; never another error.
   */
  async request(
    method: string,
    target: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<ForgeAnswer> {
    const url = this.#resolve(target);
    const write = method !== "GET";
    let limited = 0;
    for (let attempt = 1;;) {
      const priority = options.priority ?? "background";
      // No slot comes once a 401 has ended the run's requests to this forge.
      const slot = await this.limits.acquire({ write, priority }, options.signal).catch(
        (cause: unknown) => {
          if (cause instanceof HttpFailure) throw cause;
          if (this.proxy === undefined) throw this.#unreached(cause);
          throw new HttpFailure("network", `no answer through the proxy ${this.proxy}`, { cause });
        },
      );
      let failure: HttpFailure;
      try {
        return await this.#attempt(method, url, body, {
          bounds: [slot.signal, options.signal],
          attempt: attempt + limited,
        });
      } catch (error) {
        if (!(error instanceof HttpFailure)) throw error;
        if (error.kind === "unauthorized") this.limits.refuse(error);
        if (!error.retryable) throw error;
        failure = error;
      } finally {
        slot.release();
      }
      if (failure.kind === "rate_limited") {
        // The proxy gives up on its last rate limit without another pause.
        if (this.proxy !== undefined && limited === MAX_RATE_LIMITED) throw failure;
        this.limits.pause(failure.retryAfterMs ?? MIN_RATE_LIMIT_PAUSE_MS, failure.message);
        if (++limited > MAX_RATE_LIMITED) throw failure;
        continue;
      }
      const attempts = options.attempts ?? (this.proxy === undefined ? MAX_ATTEMPTS : 1);
      if (method === "POST" || attempt >= attempts) throw failure;
      const delayMs = failure.retryAfterMs ?? exponentialDelay(attempt, RETRY_DELAY_MS);
      await this.#options.clock.sleep(delayMs, new AbortController().signal);
      attempt++;
    }
  }

  #resolve(target: string): URL {
    const url = target.startsWith("/")
      ? new URL(`${this.#base.href.replace(/\/+$/, "")}${target}`)
      : URL.parse(target);
    if (url === null || url.origin !== this.origin) {
      const outside = `gave a link outside ${this.origin}; the token is only sent there`;
      throw new HttpFailure("refused", `${this.forge} ${outside}`);
    }
    return url;
  }

  /** `bounds`: the slot's preemption and the caller's signal. */
  async #attempt(
    method: string,
    start: URL,
    body: unknown,
    { bounds, attempt }: { bounds: (AbortSignal | undefined)[]; attempt: number },
  ): Promise<ForgeAnswer> {
    const { timeout, requestTimeoutMs } = this.#options;
    const timer = timeout?.(requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS);
    const signal = AbortSignal.any([...bounds, timer].filter((bound) => bound !== undefined));
    const sendsBody = body !== undefined && method !== "GET";
    const answer = await fetchFollowing(start, {
      method,
      headers: {
        ...this.#options.headers,
        ...(sendsBody ? { "Content-Type": "application/json" } : {}),
      },
      // Masked as every report file is: a link the service spelled in another case reaches here
      // normalised (a URL's host in lower case), spelling the key itself.
      body: sendsBody ? maskSecrets(JSON.stringify(body), this.#options.secrets) : undefined,
      signal,
    }, {
      fetch: this.#options.fetch,
      log: this.#options.log,
      attempt,
      ...(this.proxy === undefined ? { api: this } : {}),
    }).catch((cause: unknown) => {
      // A redirect the policy did not follow: the proxy's words are the policy's, refused.
      if (cause instanceof HttpFailure && this.proxy !== undefined) {
        throw new HttpFailure("refused", cause.message, { cause });
      }
      if (cause instanceof HttpFailure) throw cause;
      const proxyRefusal = this.proxy === undefined ? proxyAuthRefusal(cause, start) : null;
      if (proxyRefusal !== null) {
        throw new HttpFailure("refused", `${this.forge}: ${proxyRefusal}`, { cause });
      }
      throw this.#unreached(cause);
    });
    const { response, url, method: sent } = answer;
    if (this.proxy !== undefined) {
      await response.body?.cancel();
      const status = response.status;
      if ((status >= 200 && status < 300) || (sent === "DELETE" && status === 404)) {
        return { data: null, headers: response.headers };
      }
      const kind = failureKind(status, "forge");
      const retryAfterMs = kind === "rate_limited"
        ? parseRetryAfter(response.headers.get("retry-after"), this.#options.clock.now()) ??
          MIN_RATE_LIMIT_PAUSE_MS
        : undefined;
      throw new HttpFailure(kind, `${sent} answered ${status}`, { status, retryAfterMs });
    }
    const text = await readCapped(response, { signal, maxBytes: MAX_FORGE_BODY_BYTES }).catch(
      (cause: unknown) => {
        // An error answer is classified by its status, whatever became of its body.
        if (!response.ok) return "";
        if (!(cause instanceof HttpFailure)) throw this.#unreached(cause);
        const what = `${this.forge} answered ${sent} with ${response.status}`;
        const message = `${what} and more than ${MAX_FORGE_BODY_BYTES} bytes`;
        throw new HttpFailure("unusable", message, { status: response.status, cause });
      },
    );
    return this.#read(response, text, url, sent);
  }

  #unreached(cause: unknown): HttpFailure {
    const text = cause instanceof Error ? cause.message : String(cause);
    const direct = this.proxy === undefined;
    const named = direct && cause instanceof Error ? `${cause.name}: ${text}` : text;
    const shown = sanitize(named, { maxLength: 200, secrets: this.#options.secrets });
    const message = direct ? `${this.forge} could not be reached (${shown})` : shown;
    return new HttpFailure("network", message, { cause });
  }

  #read(response: Response, text: string, url: URL, method: string): ForgeAnswer {
    const status = response.status;
    if (status >= 200 && status < 300) {
      try {
        return { data: text === "" ? null : JSON.parse(text), headers: response.headers };
      } catch (cause) {
        const message = `${this.forge} answered ${method} with ${status} but not JSON`;
        throw new HttpFailure("unusable", message, { status, cause });
      }
    }
    const detail = this.#detail(text);
    const what = `${this.forge} answered ${method} ${url.pathname} with ${status}${detail}`;
    const now = this.#options.clock.now();
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), now);
    const exhausted = response.headers.get("x-ratelimit-remaining") === "0";
    // GitHub's secondary limit may come as a 403 with neither header: its message says so.
    const says = /rate limit/i.test(detail);
    if (status === 429 || (status === 403 && (exhausted || retryAfterMs !== undefined || says))) {
      // GitHub's `x-ratelimit-reset` is epoch seconds; waited for only once the limit is spent.
      const resetAt = Number(response.headers.get("x-ratelimit-reset")) * 1000;
      const known = Number.isFinite(resetAt) && resetAt > 0;
      const left = resetAt - now;
      const reset = known
        ? ` (the limit resets in ${Math.max(0, Math.ceil(left / 60_000))} min)`
        : "";
      const waitMs = retryAfterMs ??
        (known && exhausted && left > 0 ? left : MIN_RATE_LIMIT_PAUSE_MS);
      throw new HttpFailure("rate_limited", `${what}${reset}`, { status, retryAfterMs: waitMs });
    }
    // Only a 5xx is retried, and never after a longer wait than this.
    const retry = (retryAfterMs ?? Infinity) <= MAX_RETRY_AFTER_MS ? retryAfterMs : undefined;
    throw new HttpFailure(failureKind(status, "forge"), what, { status, retryAfterMs: retry });
  }

  // The forge's own explanation: GitHub `{message}`, GitLab `{message}` or `{error}`.
  #detail(text: string): string {
    let message: unknown = text;
    try {
      const data: unknown = JSON.parse(text);
      if (typeof data === "object" && data !== null) {
        const record = data as Record<string, unknown>;
        message = record.message ?? record.error ?? "";
        if (typeof message !== "string") message = JSON.stringify(message);
      }
    } catch {
      // Not JSON: the plain text is the explanation.
    }
    const line = sanitize(String(message), { maxLength: 200, secrets: this.#options.secrets });
    return line === "" ? "" : `: ${line}`;
  }
}

/** RFC 8288 `Link` header. */
export function nextLink(header: string | null): string | null {
  if (header === null) return null;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^,;]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match[2] ?? "")?.[1] ?? "";
    if (rel.toLowerCase().split(/\s+/).includes("next")) return match[1] ?? null;
  }
  return null;
}
