/**
 * One client per forge for every writer: requests wait for the forge's limits, a rate limit
 * pauses every writer, a refused token (401) ends later requests. An attempt is the forge's
 * {@linkcode Exchange}: with a token to its API (here), or through a CI's proxy.
 */

import { exponentialDelay, parseRetryAfter } from "../service/timing.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import { formatBound } from "../text/duration.ts";
import type { Clock, Http } from "../effects.ts";
import { ForgeLimits, MIN_RATE_LIMIT_PAUSE_MS, type Priority } from "./limits.ts";
import { failureKind, HttpFailure, networkFailure } from "../http/failure.ts";
import { retrying } from "../http/retry.ts";
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

/** How one attempt of a request reaches a forge. */
export interface Exchange {
  /** `signal`: the slot's preemption and the caller's. @throws {HttpFailure} For every failure. */
  send(
    method: string,
    url: URL,
    body: unknown,
    options: { readonly signal: AbortSignal; readonly attempt: number },
  ): Promise<ForgeAnswer>;
  /** No slot came. */
  unreached(cause: unknown): HttpFailure;
  /** For a request that does not say, after a 5xx or no answer. */
  readonly attempts: number;
  /** The last of the rate limits is given up at once, not paused out first. */
  readonly limitedGivesUp: boolean;
}

export interface ExchangeSetup {
  readonly userAgent: string;
  readonly http: Http;
  readonly clock: Pick<Clock, "now" | "sleep">;
  /** A request's time; asked as each starts. */
  readonly requestTimeoutMs: () => number;
  /** The run's direct fetch, shared by every API client. */
  readonly fetch: () => typeof fetch;
}

export interface RequestOptions {
  /** Default `background`: the comment's. */
  readonly priority?: Priority;
  readonly signal?: AbortSignal | undefined;
  readonly attempts?: number;
}

export interface ForgeAnswer {
  readonly data: unknown;
  readonly headers: Headers;
}

export class ForgeHttp {
  readonly #base: URL;
  readonly #exchange: Exchange;
  readonly #clock: Pick<Clock, "now" | "sleep">;
  readonly limits: ForgeLimits;

  /** `baseUrl` was checked by the target (`tokenUrlProblem`): https, or http on loopback. */
  constructor(
    readonly forge: string,
    options: {
      readonly baseUrl: string;
      readonly exchange: Exchange;
      readonly clock: Pick<Clock, "now" | "sleep">;
      /** Shared by every client of the run; default limits of its own. */
      readonly limits?: ForgeLimits | undefined;
    },
  ) {
    this.#base = new URL(options.baseUrl.replace(/\/+$/, ""));
    this.#exchange = options.exchange;
    this.#clock = options.clock;
    this.limits = options.limits ?? new ForgeLimits(forge, options.clock);
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
    const exchange = this.#exchange;
    const priority = options.priority ?? "background";
    let limited = 0;
    // No slot came (a 401, a pause past the time left, the caller's signal): that is final.
    let unsent: HttpFailure | undefined;
    // The proxy gives up on its last rate limit without pausing first.
    const lastLimit = () => exchange.limitedGivesUp && limited === MAX_RATE_LIMITED;
    return await retrying(async (tries) => {
      const slot = await this.limits.acquire({ write, priority }, options.signal).catch(
        (cause: unknown) => {
          throw unsent = cause instanceof HttpFailure ? cause : exchange.unreached(cause);
        },
      );
      try {
        const bounds = [slot.signal, options.signal].filter((bound) => bound !== undefined);
        return await exchange.send(method, url, body, {
          signal: AbortSignal.any(bounds),
          attempt: tries,
        });
      } catch (error) {
        // Before the slot is free: no other request goes out before the pause or the refusal.
        if (error instanceof HttpFailure && error.kind === "unauthorized") {
          this.limits.refuse(error);
        }
        if (error instanceof HttpFailure && error.kind === "rate_limited" && !lastLimit()) {
          this.limits.pause(error.retryAfterMs ?? MIN_RATE_LIMIT_PAUSE_MS, error.message);
        }
        throw error;
      } finally {
        slot.release();
      }
    }, (failure, tries) => {
      if (!failure.retryable || failure === unsent) return undefined;
      // The limits' pause is the wait.
      if (failure.kind === "rate_limited") {
        return lastLimit() || ++limited > MAX_RATE_LIMITED ? undefined : 0;
      }
      const attempt = tries - limited;
      if (method === "POST" || attempt >= (options.attempts ?? exchange.attempts)) return undefined;
      return failure.retryAfterMs ?? exponentialDelay(attempt, RETRY_DELAY_MS);
    }, (ms) => this.#clock.sleep(ms, new AbortController().signal));
  }

  #resolve(target: string): URL {
    const url = target.startsWith("/")
      ? new URL(`${this.#base.href.replace(/\/+$/, "")}${target}`)
      : URL.parse(target);
    const origin = this.#base.origin;
    if (url === null || url.origin !== origin) {
      const outside = `gave a link outside ${origin}; the token is only sent there`;
      throw new HttpFailure("refused", `${this.forge} ${outside}`);
    }
    return url;
  }
}

/** A forge's REST API, a token in `headers`: JSON answers, its words on a failure, rate limits. */
export function apiExchange(
  forge: string,
  target: { readonly apiUrl: string; readonly token: { readonly value: string } | null },
  headers: Readonly<Record<string, string>>,
  { http, clock, requestTimeoutMs, fetch }: ExchangeSetup,
): Exchange {
  const api = { forge, origin: new URL(target.apiUrl).origin };
  // Its token and the run's: masked in its messages and in every request body.
  const secrets = [target.token?.value ?? "", ...http.secrets ?? []];
  const unreached = (cause: unknown) => networkFailure(cause, secrets, { forge });
  // The forge's own explanation: GitHub `{message}`, GitLab `{message}` or `{error}`.
  const detail = (text: string) => {
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
    const line = sanitize(String(message), { maxLength: 200, secrets });
    return line === "" ? "" : `: ${line}`;
  };
  const read = (response: Response, text: string, url: URL, method: string): ForgeAnswer => {
    const status = response.status;
    if (status >= 200 && status < 300) {
      try {
        return { data: text === "" ? null : JSON.parse(text), headers: response.headers };
      } catch (cause) {
        const message = `${forge} answered ${method} with ${status} but not JSON`;
        throw new HttpFailure("unusable", message, { status, cause });
      }
    }
    const explained = detail(text);
    const what = `${forge} answered ${method} ${url.pathname} with ${status}${explained}`;
    const now = clock.now();
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), now);
    const exhausted = response.headers.get("x-ratelimit-remaining") === "0";
    // GitHub's secondary limit may come as a 403 with neither header: its message says so.
    const says = /rate limit/i.test(explained);
    if (status === 429 || (status === 403 && (exhausted || retryAfterMs !== undefined || says))) {
      // GitHub's `x-ratelimit-reset` is epoch seconds; waited for only once the limit is spent.
      const resetAt = Number(response.headers.get("x-ratelimit-reset")) * 1000;
      const known = Number.isFinite(resetAt) && resetAt > 0;
      const left = resetAt - now;
      const reset = known
        ? ` (the limit resets in ${formatBound(Math.max(0, Math.ceil(left / 60_000)) * 60_000)})`
        : "";
      const waitMs = retryAfterMs ??
        (known && exhausted && left > 0 ? left : MIN_RATE_LIMIT_PAUSE_MS);
      throw new HttpFailure("rate_limited", `${what}${reset}`, { status, retryAfterMs: waitMs });
    }
    // Only a 5xx is retried, and never after a longer wait than this.
    const retry = (retryAfterMs ?? Infinity) <= MAX_RETRY_AFTER_MS ? retryAfterMs : undefined;
    throw new HttpFailure(failureKind(status, "forge"), what, { status, retryAfterMs: retry });
  };
  return {
    attempts: MAX_ATTEMPTS,
    limitedGivesUp: false,
    unreached,
    async send(method, start, body, { signal: bounds, attempt }) {
      const signal = AbortSignal.any([bounds, http.timeout(requestTimeoutMs())]);
      const request = { ...jsonRequest(method, body, headers, secrets), signal };
      const answer = await fetchFollowing(start, request, {
        fetch: fetch(),
        log: http.log,
        attempt,
        api,
      }).catch((cause: unknown) => {
        if (cause instanceof HttpFailure) throw cause;
        const proxyRefusal = proxyAuthRefusal(cause, start);
        if (proxyRefusal !== null) {
          throw new HttpFailure("refused", `${forge}: ${proxyRefusal}`, { cause });
        }
        throw unreached(cause);
      });
      const { response, url, method: sent } = answer;
      const text = await readCapped(response, { signal, maxBytes: MAX_FORGE_BODY_BYTES }).catch(
        (cause: unknown) => {
          // An error answer is classified by its status, whatever became of its body.
          if (!response.ok) return "";
          if (!(cause instanceof HttpFailure)) throw unreached(cause);
          const what = `${forge} answered ${sent} with ${response.status}`;
          const message = `${what} and more than ${MAX_FORGE_BODY_BYTES} bytes`;
          throw new HttpFailure("unusable", message, { status: response.status, cause });
        },
      );
      return read(response, text, url, sent);
    },
  };
}

/**
 * A request with its body as JSON (none for a `GET`), masked as every report file is: a link the
 * service spelled in another case reaches here normalised (a URL's host in lower case), spelling
 * the key itself.
 */
export function jsonRequest(
  method: string,
  body: unknown,
  headers: Readonly<Record<string, string>>,
  secrets: readonly string[],
): { method: string; headers: Record<string, string>; body: string | undefined } {
  if (body === undefined || method === "GET") {
    return { method, headers: { ...headers }, body: undefined };
  }
  const json = maskSecrets(JSON.stringify(body), secrets);
  return { method, headers: { ...headers, "Content-Type": "application/json" }, body: json };
}

/** A JSON value's fields, none for anything but an object. */
export function jsonFields(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null ? value as Record<string, unknown> : {};
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
