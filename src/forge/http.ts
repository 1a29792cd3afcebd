/**
 * One client per forge (GitHub, GitLab) for every writer of the run, sent by the one HTTP policy
 * (`http/policy.ts`) under the forge's limits (`limits.ts`): the token only ever goes to the
 * API's origin, answers are read up to a cap, every failure becomes one {@linkcode ForgeError},
 * transient faults are retried a bounded number of times with an injected sleep, a rate limit
 * pauses every writer of the forge, and a refused token (401) ends every later request.
 */

import { exponentialDelay, parseRetryAfter } from "../service/backoff.ts";
import {
  BodyTooLargeError,
  fetchFollowing,
  type Followed,
  MAX_FORGE_BODY_BYTES,
  MAX_REDIRECTS,
  proxyAuthRefusal,
  readCapped,
  RedirectError,
  requestSignal,
} from "../http/policy.ts";
import { sanitize } from "../text/sanitize.ts";
import type { Clock, ExchangeLog, Http } from "../effects.ts";
import {
  ForgeLimits,
  LimitRefusal,
  MIN_RATE_LIMIT_PAUSE_MS,
  type Priority,
  type Slot,
} from "./limits.ts";

/**
 * Attempts per request, in all. A 5xx answer or no answer is tried again only for methods other
 * than `POST`; a rate limit, once the pause it asks for is over, for every method (it was not
 * handled), at most {@linkcode MAX_RATE_LIMITED} times.
 */
export const MAX_ATTEMPTS = 3;
/** The most times one request is sent again after a rate limit's pause. */
export const MAX_RATE_LIMITED = 3;
/**
 * The wait before the second attempt; it doubles for each further one. A 5xx's `Retry-After` up
 * to {@linkcode MAX_RETRY_AFTER_MS} replaces it.
 */
export const RETRY_DELAY_MS = 1_000;
/**
 * The longest `Retry-After` of a 5xx waited out; a longer one is ignored, and the attempt waits
 * {@linkcode RETRY_DELAY_MS} doubled as usual. (A rate limit's is waited out whatever its length,
 * within the time left to finish: `limits.ts`.)
 */
export const MAX_RETRY_AFTER_MS = 10_000;
/** The default time one attempt (its redirects and its answer's body included) may take. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

/**
 * Why a forge request failed. Refused: `unauthorized` (final for the run) and `forbidden`;
 * rate-limited: `rate_limited` (with {@linkcode ForgeError.until}); not found: `not_found`;
 * unreachable: `network`; answered badly: `server`, `refused`, `unusable`.
 *
 * - `unauthorized`: 401, the token is missing, wrong or expired; no later request of the run
 *   is sent to that forge;
 * - `forbidden`: 403 without a rate limit, e.g. a read-only token;
 * - `not_found`: 404, the repository, pull request or comment is not visible to the token;
 * - `rate_limited`: 429, or 403 with `x-ratelimit-remaining: 0`, a `Retry-After` or a message
 *   that says so (GitHub's secondary limit), after waiting the pause out, or given up because
 *   the pause outlasts the time left ({@linkcode ForgeError.givenUp});
 * - `server`: 5xx, after the retries ({@linkcode MAX_ATTEMPTS}; none for a `POST`);
 * - `network`: no answer (refused, reset, DNS, timeout), after the retries (none for a `POST`);
 * - `refused`: a redirect to another origin or to an address with credentials, or too many; or
 *   the proxy from the environment refused its credentials (407), which no retry changes;
 * - `unusable`: another status, a 2xx answer that is not the JSON expected, or an answer over
 *   the cap of the HTTP policy.
 */
export type ForgeFailure =
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "rate_limited"
  | "server"
  | "network"
  | "refused"
  | "unusable";

/**
 * A forge request that failed; `message` is one line, without the token.
 *
 * @example
 * ```ts
 * const error = new ForgeError("forbidden", "GitHub answered 403: Resource not accessible", {
 *   status: 403,
 * });
 * error.kind; // "forbidden"
 * ```
 */
export class ForgeError extends Error {
  /** Names the error. */
  override name = "ForgeError";
  /** Why it failed. */
  readonly kind: ForgeFailure;
  /** The HTTP status, when there was an answer. */
  readonly status: number | null;
  /** A rate limit's end, in epoch milliseconds, when the forge said (or a minute on). */
  readonly until: number | null;
  /** The request was never sent: a rate limit's pause outlasts the time left to finish. */
  readonly givenUp: boolean;

  /** Makes the error; `options.cause` keeps the underlying error. */
  constructor(
    kind: ForgeFailure,
    message: string,
    options: {
      readonly status?: number;
      readonly cause?: unknown;
      readonly until?: number;
      readonly givenUp?: boolean;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.kind = kind;
    this.status = options.status ?? null;
    this.until = options.until ?? null;
    this.givenUp = options.givenUp ?? false;
  }
}

/** The effects a forge client is given: none defaults to a real one. */
export interface ForgeEffects {
  /** The fetch of the HTTP policy. */
  readonly fetch: typeof fetch;
  /**
   * The clock: the waits between attempts and out of a rate limit's pause, and the wall clock
   * for `Retry-After` dates and rate-limit resets.
   */
  readonly clock: Pick<Clock, "now" | "sleep">;
  /** The timer of each request (`Http.timeout`). */
  readonly timeout: Http["timeout"];
  /** How long one attempt may take; default {@linkcode DEFAULT_REQUEST_TIMEOUT_MS}. */
  readonly requestTimeoutMs?: number;
  /** The forge's limits, shared by every client of the run; default limits of its own. */
  readonly limits?: ForgeLimits;
  /** Where each exchange is told (the verbose mode); default nowhere. */
  readonly log?: ExchangeLog | undefined;
}

/**
 * The effects of `options`, ready to spread into another client's options (the optional ones only
 * where set).
 */
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

/** Options of {@linkcode ForgeHttp}. */
export interface ForgeHttpOptions extends ForgeEffects {
  /** The forge's name for messages: `"GitHub"`. */
  readonly forge: string;
  /** The API root (`https://api.github.com`, `https://gitlab.example/api/v4`); http(s) only. */
  readonly baseUrl: string;
  /** Headers of every request: the token's header, `Accept`, `User-Agent`. */
  readonly headers: Readonly<Record<string, string>>;
  /** Values never to show in a message (the token). */
  readonly secrets: readonly string[];
}

/** How one request goes: how urgent it is, and what ends it early. */
export interface RequestOptions {
  /** Default `background`: the comment's. */
  readonly priority?: Priority;
  /** Ends the request (and its wait for a slot) early: the end of the time left to finish. */
  readonly signal?: AbortSignal | undefined;
  /** Attempts after a 5xx or no answer; default {@linkcode MAX_ATTEMPTS}. */
  readonly attempts?: number;
}

/** A successful answer: its JSON, its headers and the address that gave it. */
export interface ForgeAnswer {
  /** The parsed JSON body. */
  readonly data: unknown;
  /** The answer's headers (pagination). */
  readonly headers: Headers;
  /** The address that answered, after redirects. */
  readonly url: URL;
}

/**
 * A slot to send one request under a forge's limits, or the `ForgeError` that says why there is
 * none: the forge refused the run (a 401 is final), a rate limit's pause outlasts the time left
 * (`rate_limited`, `givenUp`), or what `unreached` makes of anything else. Every client of a
 * forge acquires through this.
 *
 * @example
 * ```ts
 * import { ForgeLimits } from "./limits.ts";
 *  * const limits = new ForgeLimits({ forge: "GitHub", clock: systemClock });
 * const slot = await acquireSlot(limits, true, {}, () => new ForgeError("network", "no answer"));
 * slot.release();
 * ```
 *
 * @throws {ForgeError} When no slot will come.
 */
export async function acquireSlot(
  limits: ForgeLimits,
  write: boolean,
  options: RequestOptions,
  unreached: (error: unknown) => ForgeError,
): Promise<Slot> {
  try {
    return await limits.acquire(
      { write, priority: options.priority ?? "background" },
      options.signal,
    );
  } catch (error) {
    if (error instanceof LimitRefusal && error.reason === "refused") {
      throw error.error instanceof ForgeError
        ? error.error
        : new ForgeError("unauthorized", error.message);
    }
    if (error instanceof LimitRefusal) {
      throw new ForgeError("rate_limited", error.message, { givenUp: true });
    }
    throw unreached(error);
  }
}

/**
 * One forge API: sends JSON requests with the token to its origin and nowhere else.
 *
 * @example
 * ```ts
 * const http = new ForgeHttp({
 *   forge: "GitHub",
 *   baseUrl: "https://api.github.com",
 *   headers: { Authorization: "Bearer ghs_example" },
 *   secrets: ["ghs_example"],
 * });
 * // await http.request("GET", "/repos/acme/widgets/issues/42/comments?per_page=100");
 * ```
 */
export class ForgeHttp {
  readonly #options: ForgeHttpOptions;
  readonly #base: URL;
  readonly #limits: ForgeLimits;
  readonly #clock: Pick<Clock, "now" | "sleep">;

  /**
   * A client for one forge's API.
   *
   * @throws {TypeError} If `baseUrl` is not an http(s) URL.
   */
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

  /** The forge's name for messages: `"GitHub"`. */
  get forge(): string {
    return this.#options.forge;
  }

  /** The limits this client's requests go under (shared with the forge's other clients). */
  get limits(): ForgeLimits {
    return this.#limits;
  }

  /**
   * Sends one request, once the forge's limits let it go, and returns its JSON answer. `target`
   * is a path under the API root (`/repos/…`) or an absolute URL on the API's origin (a
   * pagination link). A POST is not retried after a 5xx or a network error, which may have
   * created what it asked for; a rate limit pauses every request of the forge for the time it
   * gives (a minute when it gives none), then this one is sent again; a 401 ends every later
   * request of the run.
   *
   * @throws {ForgeError} For every failure; never another error.
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
        if (error instanceof ForgeError && error.kind === "unauthorized") {
          this.#limits.refuse(error);
        }
        if (!(error instanceof _Retry)) throw error;
        failure = error;
      } finally {
        slot.release();
      }
      if (failure.error.kind === "rate_limited") {
        this.#limits.pause(failure.waitMs ?? MIN_RATE_LIMIT_PAUSE_MS, failure.error.message);
        if (++limited > MAX_RATE_LIMITED) throw failure.error;
        continue;
      }
      if (!idempotent || attempt >= (options.attempts ?? MAX_ATTEMPTS)) throw failure.error;
      await this.#sleep(failure.waitMs ?? exponentialDelay(attempt, RETRY_DELAY_MS));
      attempt++;
    }
  }

  #acquire(write: boolean, options: RequestOptions) {
    return acquireSlot(this.#limits, write, options, (error) => this.#unreached(error).error);
  }

  #resolve(target: string): URL {
    const url = target.startsWith("/")
      ? new URL(`${this.#base.href.replace(/\/+$/, "")}${target}`)
      : URL.canParse(target)
      ? new URL(target)
      : null;
    if (url === null || url.origin !== this.#base.origin) {
      throw new ForgeError(
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
        maxBytes: MAX_FORGE_BODY_BYTES,
      });
    } catch (cause) {
      if (cause instanceof RedirectError) throw this.#redirectError(cause);
      const proxyRefusal = proxyAuthRefusal(cause, start);
      if (proxyRefusal !== null) {
        throw new ForgeError("refused", `${forge}: ${proxyRefusal}`, { cause });
      }
      throw this.#unreached(cause);
    }
    const { response, url } = answer;
    const text = await readCapped(response, { signal, maxBytes: MAX_FORGE_BODY_BYTES }).catch(
      (cause: unknown) => {
        // An error answer is classified by its status, whatever became of its body.
        if (!response.ok) return "";
        if (!(cause instanceof BodyTooLargeError)) throw this.#unreached(cause);
        throw new ForgeError(
          "unusable",
          `${forge} answered ${answer.method} with ${response.status} and more than ${MAX_FORGE_BODY_BYTES} bytes`,
          { status: response.status, cause },
        );
      },
    );
    return this.#read(response, text, url, answer.method);
  }

  #unreached(cause: unknown): _Retry {
    return new _Retry(
      new ForgeError(
        "network",
        `${this.#options.forge} could not be reached (${this.#describe(cause)})`,
        { cause },
      ),
    );
  }

  // The policy's refusal in the forge's words.
  #redirectError(error: RedirectError): ForgeError {
    const forge = this.#options.forge;
    const status = error.status;
    switch (error.reason) {
      case "other_origin":
        return new ForgeError(
          "refused",
          `${forge} redirected to ${error.to?.origin}; the token is only sent to ${this.#base.origin}`,
          { status },
        );
      case "credentials":
        return new ForgeError("refused", `${forge} redirected to an address with credentials`, {
          status,
        });
      case "too_many":
        return new ForgeError("refused", `${forge} redirected more than ${MAX_REDIRECTS} times`, {
          status,
        });
      case "not_followed":
        return new ForgeError(
          "unusable",
          `${forge} answered ${error.method} ${error.from.pathname} with ${status}`,
          { status },
        );
      default:
        return new ForgeError("unusable", `${forge} answered ${status} without a usable Location`, {
          status,
        });
    }
  }

  #read(response: Response, text: string, url: URL, method: string): ForgeAnswer {
    const forge = this.#options.forge;
    const status = response.status;
    if (status >= 200 && status < 300) {
      try {
        return { data: text === "" ? null : JSON.parse(text), headers: response.headers, url };
      } catch (cause) {
        throw new ForgeError(
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
      const waitMs = retryAfterMs ?? this.#resetMs(response, now) ?? MIN_RATE_LIMIT_PAUSE_MS;
      const error = new ForgeError("rate_limited", `${what}${this.#reset(response, now)}`, {
        status,
        until: now + waitMs,
      });
      throw new _Retry(error, waitMs);
    }
    if (status >= 500) {
      const error = new ForgeError("server", what, { status });
      throw new _Retry(
        error,
        retryAfterMs !== undefined && retryAfterMs <= MAX_RETRY_AFTER_MS ? retryAfterMs : undefined,
      );
    }
    const kind: ForgeFailure = status === 401
      ? "unauthorized"
      : status === 403
      ? "forbidden"
      : status === 404
      ? "not_found"
      : "unusable";
    throw new ForgeError(kind, what, { status });
  }

  // How long until the rate limit resets (GitHub's `x-ratelimit-reset`, epoch seconds), when the
  // limit is used up and the reset is ahead.
  #resetMs(response: Response, now: number): number | undefined {
    if (response.headers.get("x-ratelimit-remaining") !== "0") return undefined;
    const reset = Number(response.headers.get("x-ratelimit-reset"));
    if (!Number.isFinite(reset) || reset * 1000 <= now) return undefined;
    return reset * 1000 - now;
  }

  // When the rate limit resets, from GitHub's `x-ratelimit-reset` (epoch seconds).
  #reset(response: Response, now: number): string {
    const reset = Number(response.headers.get("x-ratelimit-reset"));
    if (!Number.isFinite(reset) || reset <= 0) return "";
    const minutes = Math.max(0, Math.ceil((reset * 1000 - now) / 60_000));
    return ` (the limit resets in ${minutes} min)`;
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

/**
 * The token's own user, `GET /user`: its JSON, or `null` when the token may not read it (403,
 * 404: GitHub's workflow token). Any other failure is thrown: a 401 is final, and no further
 * request is sent to the forge.
 */
export async function tokenUser(
  http: ForgeHttp,
  options: RequestOptions = {},
): Promise<unknown> {
  try {
    return (await http.request("GET", "/user", undefined, options)).data;
  } catch (error) {
    if (
      error instanceof ForgeError && ["forbidden", "not_found"].includes(error.kind)
    ) {
      return null;
    }
    throw error;
  }
}

// A failure worth another attempt; `waitMs` is what the forge asked for with Retry-After.
class _Retry {
  constructor(readonly error: ForgeError, readonly waitMs?: number) {}
}

/** What a forge's API client needs: the token, the API root and who is asking. */
export interface ForgeApiOptions extends ForgeEffects {
  /** The token; sent to `apiUrl`'s origin only. */
  readonly token: string;
  /** The API root. */
  readonly apiUrl: string;
  /** The `User-Agent` header (GitHub requires one). */
  readonly userAgent: string;
}

/**
 * GitHub's REST API with a token (`Authorization: Bearer`), as the comment and the check runs
 * both use it: one place for how GitHub is spoken to.
 *
 * @example
 * ```ts
 * const http = githubApi({
 *   token: "ghs_example",
 *   apiUrl: "https://api.github.com",
 *   userAgent: "service-ci/1.0.0",
 * });
 * http.origin; // "https://api.github.com"
 * ```
 */
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

/**
 * GitLab's REST API (v4) with a token (`PRIVATE-TOKEN`), as the comment and the commit statuses
 * both use it.
 *
 * @example
 * ```ts
 * const http = gitlabApi({
 *   token: "glpat-example",
 *   apiUrl: "https://gitlab.example/api/v4",
 *   userAgent: "service-ci/1.0.0",
 * });
 * http.origin; // "https://gitlab.example"
 * ```
 */
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

/**
 * The `rel="next"` address of an RFC 8288 `Link` header, or `null`.
 *
 * @example
 * ```ts
 * nextLink('<https://api.github.com/x?page=2>; rel="next", <https://api.github.com/x?page=5>; rel="last"');
 * // "https://api.github.com/x?page=2"
 * ```
 */
export function nextLink(header: string | null): string | null {
  if (header === null) return null;
  for (const match of header.matchAll(/<([^>]*)>((?:\s*;\s*[^,;]+)*)/g)) {
    const rel = /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match[2] ?? "")?.[1] ?? "";
    if (rel.toLowerCase().split(/\s+/).includes("next")) return match[1] ?? null;
  }
  return null;
}
