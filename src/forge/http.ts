/**
 * One client per forge (GitHub, GitLab) for every writer of the run: the token only ever goes to
 * the API's origin, a rate limit pauses every writer of the forge, and a refused token (401) ends
 * every later request.
 */

import { exponentialDelay, parseRetryAfter } from "../service/backoff.ts";
import {
  fetchFollowing,
  type Followed,
  type ForgeFailure,
  HttpFailure,
  MAX_BODY_BYTES,
  MAX_FORGE_BODY_BYTES,
  proxyAuthRefusal,
  readCapped,
  redirectMessage,
  requestSignal,
} from "../http/policy.ts";
import { sanitize } from "../text/sanitize.ts";
import type { Clock, ExchangeLog, Http } from "../effects.ts";
import { ForgeLimits, MIN_RATE_LIMIT_PAUSE_MS, type Priority } from "./limits.ts";

/**
 * A 5xx or no answer is tried again only for methods other than `POST`; a rate limit, once its
 * pause is over, for every method (it was not handled).
 */
export const MAX_ATTEMPTS = 3;
export const MAX_RATE_LIMITED = 3;
export const RETRY_DELAY_MS = 1_000;
/** A 5xx's longer `Retry-After` is ignored; a rate limit's is waited out whatever its length. */
export const MAX_RETRY_AFTER_MS = 10_000;
/** Its redirects and its answer's body included. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/** What an HTTP status that is no success says, the same for every forge. */
export function failureKind(status: number): ForgeFailure {
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "not_found";
  if (status === 429) return "rate_limited";
  return status >= 500 ? "server" : "unusable";
}

/** None defaults to a real one. */
export interface ForgeEffects {
  readonly fetch: typeof fetch;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly timeout: Http["timeout"];
  readonly requestTimeoutMs?: number;
  /** Shared by every client of the run; default limits of its own. */
  readonly limits?: ForgeLimits;
  readonly log?: ExchangeLog | undefined;
}

/** The optional ones only where set (`exactOptionalPropertyTypes`). */
export function pickEffects(options: ForgeEffects): ForgeEffects {
  const { fetch, clock, timeout, requestTimeoutMs, limits, log } = options;
  return {
    fetch,
    clock,
    timeout,
    ...(requestTimeoutMs ? { requestTimeoutMs } : {}),
    ...(limits ? { limits } : {}),
    ...(log ? { log } : {}),
  };
}

export interface ForgeHttpOptions extends ForgeEffects {
  readonly forge: string;
  readonly baseUrl: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly secrets: readonly string[];
  /**
   * Bitbucket's proxy, for messages: no body is read, a 404 to a `DELETE` counts as done (what
   * was to be deleted is not there), nothing is tried again but a rate limit, and failures are
   * worded as the proxy's.
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
  /** After redirects. */
  readonly url: URL;
}

export class ForgeHttp {
  readonly #options: ForgeHttpOptions;
  readonly #base: URL;
  readonly #limits: ForgeLimits;
  readonly #clock: Pick<Clock, "now" | "sleep">;

  /** @throws {TypeError} If `baseUrl` is not an http(s) URL. */
  constructor(options: ForgeHttpOptions) {
    if (!URL.canParse(options.baseUrl) || !/^https?:$/.test(new URL(options.baseUrl).protocol)) {
      throw new TypeError(
        `The ${options.forge} API address must be an http(s) URL (got ${
          JSON.stringify(options.baseUrl)
        })`,
      );
    }
    this.#options = options;
    this.#clock = options.clock;
    this.#base = new URL(options.baseUrl.replace(/\/+$/, ""));
    this.#limits = options.limits ?? new ForgeLimits({
      forge: options.forge,
      clock: this.#clock,
    });
  }

  /** The API's origin: the only place the token is sent. */
  get origin(): string {
    return this.#base.origin;
  }

  get forge(): string {
    return this.#options.forge;
  }

  get limits(): ForgeLimits {
    return this.#limits;
  }

  get proxy(): string | undefined {
    return this.#options.proxy;
  }

  /**
   * `target` is a path under the API root or an absolute URL on its origin (a pagination link).
   * A POST is not retried after a 5xx or a network error, which may have created what it asked
   * for.
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
    const idempotent = method !== "POST";
    const write = method !== "GET";
    let limited = 0;
    for (let attempt = 1;;) {
      const slot = await this.#acquire(write, options);
      let failure: _Retry;
      try {
        return await this.#attempt(method, url, body, {
          preempted: slot.signal,
          caller: options.signal,
          attempt: attempt + limited,
        });
      } catch (error) {
        if (error instanceof HttpFailure && error.kind === "unauthorized") {
          this.#limits.refuse(error);
        }
        if (!(error instanceof _Retry)) throw error;
        failure = error;
      } finally {
        slot.release();
      }
      if (failure.error.kind === "rate_limited") {
        // The proxy gives up on its last rate limit without another pause.
        if (this.proxy !== undefined && limited === MAX_RATE_LIMITED) throw failure.error;
        this.#limits.pause(failure.waitMs ?? MIN_RATE_LIMIT_PAUSE_MS, failure.error.message);
        if (++limited > MAX_RATE_LIMITED) throw failure.error;
        continue;
      }
      const attempts = options.attempts ?? (this.proxy === undefined ? MAX_ATTEMPTS : 1);
      if (!idempotent || attempt >= attempts) throw failure.error;
      await this.#sleep(failure.waitMs ?? exponentialDelay(attempt, RETRY_DELAY_MS));
      attempt++;
    }
  }

  /** @throws {HttpFailure} When no slot will come: a 401 is final for the run. */
  async #acquire(write: boolean, options: RequestOptions) {
    try {
      const priority = options.priority ?? "background";
      return await this.#limits.acquire({ write, priority }, options.signal);
    } catch (error) {
      if (error instanceof HttpFailure) throw error;
      if (this.proxy === undefined) throw this.#unreached(error).error;
      throw new HttpFailure("network", `no answer through the proxy ${this.proxy}`, {
        cause: error,
      });
    }
  }

  #resolve(target: string): URL {
    const url = target.startsWith("/")
      ? new URL(`${this.#base.href.replace(/\/+$/, "")}${target}`)
      : URL.canParse(target)
      ? new URL(target)
      : null;
    if (url === null || url.origin !== this.#base.origin) {
      throw new HttpFailure(
        "refused",
        `${this.#options.forge} gave a link outside ${this.#base.origin}; the token is only sent there`,
      );
    }
    return url;
  }

  async #attempt(
    method: string,
    start: URL,
    body: unknown,
    { preempted, caller, attempt }: {
      preempted: AbortSignal;
      caller: AbortSignal | undefined;
      attempt: number;
    },
  ): Promise<ForgeAnswer> {
    const forge = this.#options.forge;
    const { signal } = requestSignal(
      this.#options.timeout(
        this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      ),
      caller === undefined ? preempted : AbortSignal.any([preempted, caller]),
    );
    const sendsBody = body !== undefined && method !== "GET";
    let answer: Followed;
    try {
      answer = await fetchFollowing(start, {
        method,
        headers: {
          ...this.#options.headers,
          ...(sendsBody ? { "Content-Type": "application/json" } : {}),
        },
        body: sendsBody ? JSON.stringify(body) : undefined,
        signal,
      }, {
        fetch: this.#options.fetch,
        log: this.#options.log,
        attempt,
        maxBytes: this.proxy === undefined ? MAX_FORGE_BODY_BYTES : MAX_BODY_BYTES,
      });
    } catch (cause) {
      if (cause instanceof HttpFailure) throw this.#redirectError(cause);
      const proxyRefusal = this.proxy === undefined ? proxyAuthRefusal(cause, start) : null;
      if (proxyRefusal !== null) {
        throw new HttpFailure("refused", `${forge}: ${proxyRefusal}`, { cause });
      }
      throw this.#unreached(cause);
    }
    const { response, url } = answer;
    if (this.proxy !== undefined) {
      await response.body?.cancel();
      return this.#proxied(response, url, answer.method);
    }
    const text = await readCapped(response, { signal, maxBytes: MAX_FORGE_BODY_BYTES }).catch(
      (cause: unknown) => {
        // An error answer is classified by its status, whatever became of its body.
        if (!response.ok) return "";
        if (!(cause instanceof HttpFailure)) throw this.#unreached(cause);
        throw new HttpFailure(
          "unusable",
          `${forge} answered ${answer.method} with ${response.status} and more than ${MAX_FORGE_BODY_BYTES} bytes`,
          { status: response.status, cause },
        );
      },
    );
    return this.#read(response, text, url, answer.method);
  }

  #unreached(cause: unknown): _Retry {
    const message = this.proxy === undefined
      ? `${this.#options.forge} could not be reached (${this.#describe(cause)})`
      : sanitize(cause instanceof Error ? cause.message : String(cause), { maxLength: 200 });
    return new _Retry(new HttpFailure("network", message, { cause }));
  }

  #redirectError(error: HttpFailure): HttpFailure {
    const redirect = error.redirect!;
    if (this.proxy !== undefined) {
      return new HttpFailure("refused", error.message, { cause: error });
    }
    const refused = ["other_origin", "credentials", "too_many"].includes(redirect.reason);
    const forge = { name: this.#options.forge, origin: this.#base.origin };
    return new HttpFailure(
      refused ? "refused" : "unusable",
      redirectMessage(redirect, (address) => address, forge),
      { status: redirect.status },
    );
  }

  #proxied(response: Response, url: URL, method: string): ForgeAnswer {
    const status = response.status;
    if ((status >= 200 && status < 300) || (method === "DELETE" && status === 404)) {
      return { data: null, headers: response.headers, url };
    }
    const what = `${method} answered ${status}`;
    const kind = failureKind(status);
    if (kind !== "rate_limited") throw new HttpFailure(kind, what, { status });
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), this.#clock.now());
    throw new _Retry(
      new HttpFailure(kind, what, { status }),
      retryAfterMs ?? MIN_RATE_LIMIT_PAUSE_MS,
    );
  }

  #read(response: Response, text: string, url: URL, method: string): ForgeAnswer {
    const forge = this.#options.forge;
    const status = response.status;
    if (status >= 200 && status < 300) {
      try {
        return { data: text === "" ? null : JSON.parse(text), headers: response.headers, url };
      } catch (cause) {
        throw new HttpFailure(
          "unusable",
          `${forge} answered ${method} with ${status} but not JSON`,
          {
            status,
            cause,
          },
        );
      }
    }
    const detail = this.#detail(text);
    const what = `${forge} answered ${method} ${url.pathname} with ${status}${detail}`;
    const now = this.#clock.now();
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), now);
    const exhausted = response.headers.get("x-ratelimit-remaining") === "0";
    // GitHub's secondary limit may come as a 403 with neither header: its message says so.
    const says = /rate limit/i.test(detail);
    if (status === 429 || (status === 403 && (exhausted || retryAfterMs !== undefined || says))) {
      const reset = _rateLimitReset(response.headers, now);
      const error = new HttpFailure("rate_limited", `${what}${reset.words}`, { status });
      throw new _Retry(error, retryAfterMs ?? reset.ms ?? MIN_RATE_LIMIT_PAUSE_MS);
    }
    if (status >= 500) {
      const error = new HttpFailure("server", what, { status });
      throw new _Retry(
        error,
        retryAfterMs !== undefined && retryAfterMs <= MAX_RETRY_AFTER_MS ? retryAfterMs : undefined,
      );
    }
    throw new HttpFailure(failureKind(status), what, { status });
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

  #describe(cause: unknown): string {
    const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    return sanitize(text, { maxLength: 200, secrets: this.#options.secrets });
  }

  #sleep(ms: number): Promise<void> {
    return this.#clock.sleep(ms, new AbortController().signal);
  }
}

/** `null` when the token may not read it (403, 404: GitHub's workflow token). */
export async function tokenUser(
  http: ForgeHttp,
  options: RequestOptions = {},
): Promise<unknown> {
  try {
    return (await http.request("GET", "/user", undefined, options)).data;
  } catch (error) {
    if (
      error instanceof HttpFailure && ["forbidden", "not_found"].includes(error.kind)
    ) {
      return null;
    }
    throw error;
  }
}

// `waitMs`: what the forge asked for with Retry-After.
class _Retry {
  constructor(readonly error: HttpFailure, readonly waitMs?: number) {}
}

// GitHub's `x-ratelimit-reset` is in epoch seconds; `ms` only once the limit is exhausted.
function _rateLimitReset(headers: Headers, now: number): { ms?: number; words: string } {
  const reset = Number(headers.get("x-ratelimit-reset")) * 1000;
  if (!Number.isFinite(reset) || reset <= 0) return { words: "" };
  const left = reset - now;
  const words = ` (the limit resets in ${Math.max(0, Math.ceil(left / 60_000))} min)`;
  return headers.get("x-ratelimit-remaining") === "0" && left > 0 ? { ms: left, words } : { words };
}

export interface ForgeApiOptions extends ForgeEffects {
  readonly token: string;
  readonly apiUrl: string;
  /** GitHub requires one. */
  readonly userAgent: string;
}

export function githubApi(options: ForgeApiOptions): ForgeHttp {
  return new ForgeHttp({
    forge: "GitHub",
    baseUrl: options.apiUrl,
    headers: {
      Authorization: `Bearer ${options.token}`,
      Accept: "application/vnd.github+json",
      "X-GitHub-Api-Version": "2022-11-28",
      "User-Agent": options.userAgent,
    },
    secrets: [options.token],
    ...pickEffects(options),
  });
}

/** Bitbucket Cloud through the pipeline's authenticated proxy, which signs its requests. */
export function bitbucketApi(
  options: Omit<ForgeEffects, "timeout" | "requestTimeoutMs"> & { readonly proxy: string },
): ForgeHttp {
  return new ForgeHttp({
    forge: "Bitbucket",
    baseUrl: "http://api.bitbucket.org",
    headers: {},
    secrets: [],
    ...pickEffects({ ...options, timeout: _unbounded }),
    proxy: options.proxy,
  });
}

// The proxy's fetch bounds each request itself.
const _unbounded: Http["timeout"] = () => new AbortController().signal;

export function gitlabApi(options: ForgeApiOptions): ForgeHttp {
  return new ForgeHttp({
    forge: "GitLab",
    baseUrl: options.apiUrl,
    headers: {
      "PRIVATE-TOKEN": options.token,
      Accept: "application/json",
      "User-Agent": options.userAgent,
    },
    secrets: [options.token],
    ...pickEffects(options),
  });
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
