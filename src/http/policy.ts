/**
 * The one HTTP policy of every outbound request (the service, the forges, Bitbucket's proxy):
 * the fetch that trusts a private CA or goes through a proxy, a per-request time limit within the
 * caller's deadline, same-origin redirects with one limit, a cap on every body read, and the rule
 * for plain `http://`. Each client turns its failures into errors of its own; how it retries is
 * its own too, with the delays and `Retry-After` reading of `backoff.ts`.
 */

import type { Exchange, ExchangeLog, FetchSetup } from "../effects.ts";
import { sanitize } from "../text/sanitize.ts";

/** The most redirects followed for one request, by every client. */
export const MAX_REDIRECTS = 5;
/** The most bytes read from an answer of the service (one run document). */
export const MAX_BODY_BYTES = 1024 * 1024;
/**
 * The most bytes read from an answer of a forge: a page of up to 100 comments, each up to
 * 65,536 characters on GitHub, must fit.
 */
export const MAX_FORGE_BODY_BYTES = 16 * 1024 * 1024;
/** The statuses that are redirects (the Fetch standard's list); any other 3xx is not followed. */
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

// Plain http:// stays on this machine: anyone on the path would read every header.
const _LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether `hostname` (as `URL.hostname` spells it) is this machine: `localhost`, 127.0.0.0/8 or
 * `[::1]`.
 *
 * @example
 * ```ts
 * isLoopbackHost("127.0.0.2"); // true
 * isLoopbackHost("service.example"); // false
 * ```
 */
export function isLoopbackHost(hostname: string): boolean {
  return _LOOPBACK_HOST.test(hostname);
}

/**
 * What is wrong with `url`, given as text in the variable `name`, as the API address a token is
 * sent to, or `null`: it must parse, carry no credentials, and pass {@linkcode checkHttps}.
 *
 * @example
 * ```ts
 * tokenUrlProblem("https://gitlab.example/api/v4", "CI_API_V4_URL"); // null
 * tokenUrlProblem("gitlab", "CI_API_V4_URL"); // 'CI_API_V4_URL is not a URL (got "gitlab")'
 * ```
 */
export function tokenUrlProblem(url: string, name: string): string | null {
  if (!URL.canParse(url)) return `${name} is not a URL (got ${JSON.stringify(url)})`;
  const parsed = new URL(url);
  if (parsed.username !== "" || parsed.password !== "") {
    return `${name} must not contain credentials`;
  }
  return checkHttps(parsed, name, `${parsed.protocol}//${parsed.host}`);
}

/**
 * What is wrong with `url` as an address a secret is sent to, or `null`: it must be `https://`,
 * or `http://` to a loopback host ({@linkcode isLoopbackHost}). The message names the input
 * `name` and shows `given` (default the URL).
 *
 * @example
 * ```ts
 * checkHttps(new URL("http://127.0.0.1:8787"), "--base-url"); // null
 * checkHttps(new URL("http://service.example"), "--base-url");
 * // '--base-url must use https:// for a remote host; plain http:// is only allowed for …'
 * ```
 */
export function checkHttps(url: URL, name: string, given: string = url.href): string | null {
  if (url.protocol === "https:") return null;
  if (url.protocol !== "http:") {
    return `${name} must be an https:// URL (got ${JSON.stringify(given)})`;
  }
  if (isLoopbackHost(url.hostname)) return null;
  return `${name} must use https:// for a remote host; plain http:// is only allowed for localhost, 127.0.0.0/8 and [::1] (got ${
    JSON.stringify(given)
  })`;
}

/**
 * The fetch for one kind of request: the global one, or one whose client trusts `caCerts` and/or
 * sends through `proxy`. Without a proxy, Deno's own `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY`/
 * `NO_PROXY` apply, except to a plain-`http://` loopback address, which is always reached
 * directly: a proxy would read its headers (the key) in clear. (An `https://` loopback address
 * still follows the variables: Deno can bypass them only without TLS, and the proxy sees no more
 * than `CONNECT host:port`.)
 *
 * @example
 * ```ts
 * const fetcher = makePolicyFetch({ proxy: "http://localhost:29418" });
 * ```
 *
 * @throws {TypeError} When Deno refuses the certificates or the proxy address.
 */
export function makePolicyFetch(setup: FetchSetup = {}): typeof fetch {
  const client = setup.caCerts === undefined && setup.proxy === undefined
    ? undefined
    : Deno.createHttpClient({
      ...(setup.caCerts === undefined ? {} : { caCerts: [setup.caCerts] }),
      ...(setup.proxy === undefined ? {} : { proxy: { url: setup.proxy } }),
    });
  const configured: typeof fetch = client === undefined
    ? fetch
    : (input, init) => fetch(input, { ...init, client });
  // A proxy the program was given (Bitbucket's, itself on loopback) is meant for every request.
  if (setup.proxy !== undefined) return configured;
  const direct = new Map<string, Deno.HttpClient>();
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== "http:" || !isLoopbackHost(url.hostname)) return configured(input, init);
    // Deno has no switch to ignore the proxy variables for one request (denoland/deno#28385).
    // Named as its own proxy, the service gets a direct connection: for plain http a proxy is
    // only sent the request with its absolute URL, which servers must accept (RFC 9112 §3.2.2).
    // (The "tcp" transport does the same, but Deno 2.1, the oldest supported, lacks it.)
    let loopback = direct.get(url.host);
    if (loopback === undefined) {
      loopback = Deno.createHttpClient({ proxy: { url: url.origin } });
      direct.set(url.host, loopback);
    }
    return fetch(input, { ...init, client: loopback });
  };
}

// How Deno's fetch reports a proxy that answered its CONNECT with 407.
const _PROXY_AUTH_ERROR = /proxy authentication required/i;

/**
 * The one line for a fetch to `url` that failed because the proxy from the environment refused
 * its credentials (407), or `null` for any other failure. It names the variables the proxy can
 * have come from, never their value (which holds the password).
 *
 * @example
 * ```ts
 * const error = new TypeError("fetch failed", {
 *   cause: new Error("client error (Connect): proxy authentication required"),
 * });
 * proxyAuthRefusal(error, new URL("https://service.example"));
 * // "the proxy in HTTPS_PROXY/ALL_PROXY refused the credentials it was given (407 Proxy …"
 * ```
 */
export function proxyAuthRefusal(error: unknown, url: URL): string | null {
  for (let current = error, depth = 0; current instanceof Error && depth < 4; depth++) {
    if (_PROXY_AUTH_ERROR.test(current.message)) {
      const variable = url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY";
      return `the proxy in ${variable}/ALL_PROXY refused the credentials it was given (407 Proxy Authentication Required): check the user and password in that variable; a retry would send the same ones`;
    }
    current = current.cause;
  }
  return null;
}

/** A request's signal and the time limit inside it. */
export interface RequestSignal {
  /** Aborts when the caller's signal does or the time is up; give it to fetch and the body read. */
  readonly signal: AbortSignal;
  /** Aborts only when the time is up: tells a timeout from the caller's own abort. */
  readonly timeout: AbortSignal;
}

/**
 * The signal of one request: `timeout`, the request's timer (from the run's clock, `Clock.timeout`)
 * for all of it (redirects and body included), ended sooner by `caller` (a deadline, an
 * interrupt).
 *
 * @example
 * ```ts
 * import { systemClock } from "../platform/clock.ts";
 * const { signal, timeout } = requestSignal(systemClock.timeout(30_000), new AbortController().signal);
 * timeout.aborted; // false
 * ```
 */
export function requestSignal(timeout: AbortSignal, caller?: AbortSignal): RequestSignal {
  return { signal: caller === undefined ? timeout : AbortSignal.any([caller, timeout]), timeout };
}

/**
 * `fetcher` with a time bound on each request: `timeoutMs()` milliseconds, asked as it starts,
 * on `timer` (the run's `Http.timeout`). One that has not answered by then (a body being read
 * included) is aborted and rejects with `no answer within <bound>`.
 *
 * @example
 * ```ts
 * import { systemClock } from "../platform/clock.ts";
 * const bounded = boundedFetch(fetch, () => 10_000, systemClock.timeout);
 * ```
 */
export function boundedFetch(
  fetcher: typeof fetch,
  timeoutMs: () => number,
  timer: (ms: number) => AbortSignal,
): typeof fetch {
  return async (input, init) => {
    const ms = timeoutMs();
    const caller = init?.signal ?? undefined;
    const { signal, timeout } = requestSignal(timer(ms), caller);
    try {
      return await fetcher(input, { ...init, signal });
    } catch (error) {
      if (timeout.aborted && !caller?.aborted) {
        throw new Error(`no answer within ${formatBound(ms)}`, { cause: error });
      }
      throw error;
    }
  };
}

/**
 * A duration for messages: whole seconds when it is some (`10 s`), else milliseconds (`250 ms`).
 *
 * @example
 * ```ts
 * formatBound(10_000); // "10 s"
 * ```
 */
export function formatBound(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000} s` : `${Math.round(ms)} ms`;
}

/** One request as it is sent on every hop. */
export interface PolicyRequest {
  /** The HTTP method; a 303 turns it into `GET`. */
  readonly method: string;
  /** The request's headers, credentials included: never sent to another origin. */
  readonly headers?: HeadersInit;
  /** The body, dropped when a 303 turns the request into a `GET`. */
  readonly body?: string | undefined;
  /** Aborts the request, every hop and the body's read. */
  readonly signal?: AbortSignal | undefined;
}

/** Options of {@linkcode fetchFollowing}. */
export interface FollowOptions {
  /** The fetch to send with; default the global one. */
  readonly fetch?: typeof fetch;
  /** The redirect statuses followed; default {@linkcode REDIRECT_STATUSES}. */
  readonly follows?: readonly number[];
  /** A path every redirect must stay at or under (the service's agent runs); default none. */
  readonly within?: string | undefined;
  /** Called with each answer as it comes, redirects included. */
  readonly onAnswer?: (response: Response) => void;
  /** Where each hop is told (the verbose mode); default nowhere. */
  readonly log?: ExchangeLog | undefined;
  /** Which attempt of the caller's request this is, for `log`; default 1. */
  readonly attempt?: number;
  /** The most bytes of an error answer's body read for `log`; default {@linkcode MAX_BODY_BYTES}. */
  readonly maxBytes?: number;
}

/**
 * The headers a request id is read from, first found first: the service's and GitLab's and
 * Bitbucket's `x-request-id`, GitHub's `x-github-request-id`, then the other common spellings.
 */
export const REQUEST_ID_HEADERS: readonly string[] = [
  "x-request-id",
  "x-github-request-id",
  "x-correlation-id",
  "request-id",
];

/** The answer a request ended with, after the redirects it followed. */
export interface Followed {
  /** The final answer: not a followed redirect. */
  readonly response: Response;
  /** The address that answered. */
  readonly url: URL;
  /** The method that got the answer (`GET` after a 303). */
  readonly method: string;
}

/**
 * Why a redirect was not followed: no `Location`, a status not followed, an unreadable
 * address, another origin, credentials in the address, outside the allowed path, or one more
 * than {@linkcode MAX_REDIRECTS}.
 */
export type RedirectRefusal =
  | "no_location"
  | "not_followed"
  | "invalid"
  | "other_origin"
  | "credentials"
  | "outside"
  | "too_many";

/**
 * A redirect {@linkcode fetchFollowing} did not follow. Its message is one line; each client
 * words its own from the fields.
 *
 * @example
 * ```ts
 * const error = new RedirectError("too_many", { method: "GET", status: 302, from: new URL("https://a.example/") });
 * error.message; // "GET answered 302 redirect: more than 5 redirects; refused"
 * ```
 */
export class RedirectError extends Error {
  /** Names the error. */
  override name = "RedirectError";
  /** Why it was not followed. */
  readonly reason: RedirectRefusal;
  /** The method that got the redirect. */
  readonly method: string;
  /** The redirect's status. */
  readonly status: number;
  /** The address that answered with the redirect. */
  readonly from: URL;
  /** Where it pointed, when that was an address. */
  readonly to: URL | undefined;
  /** The statuses that would have been followed. */
  readonly follows: readonly number[];
  /** The path redirects must stay under, when there is one. */
  readonly within: string | undefined;

  /** Makes the error; the message says what was refused, without any credentials. */
  constructor(
    reason: RedirectRefusal,
    details: {
      readonly method: string;
      readonly status: number;
      readonly from: URL;
      readonly to?: URL | undefined;
      readonly follows?: readonly number[];
      readonly within?: string | undefined;
      readonly cause?: unknown;
    },
  ) {
    const follows = details.follows ?? REDIRECT_STATUSES;
    const what = `${details.method} answered ${details.status} redirect`;
    const to = details.to === undefined
      ? ""
      : sanitize(details.to.origin + details.to.pathname, { maxLength: 200 });
    const messages: Record<RedirectRefusal, string> = {
      no_location: `${what} without a Location header`,
      not_followed: `${what}; only ${follows.join("/")} are followed`,
      invalid: `${what} to an invalid address`,
      other_origin: `${what} to another origin (${to}); refused`,
      credentials: `${what} to an address with credentials (${to}); refused`,
      outside: `${what} outside ${details.within} (${to}); refused`,
      too_many: `${what}: more than ${MAX_REDIRECTS} redirects; refused`,
    };
    super(messages[reason], details.cause === undefined ? undefined : { cause: details.cause });
    this.reason = reason;
    this.method = details.method;
    this.status = details.status;
    this.from = details.from;
    this.to = details.to;
    this.follows = follows;
    this.within = details.within;
  }
}

/**
 * Sends `request` to `url` and follows its redirects by the policy: only
 * {@linkcode REDIRECT_STATUSES} (or `options.follows`), only on the same origin (so no header,
 * the credentials included, ever reaches another), never to an address with credentials, only
 * under `options.within` when given, at most {@linkcode MAX_REDIRECTS}. A 303 turns the request
 * into a `GET` without a body; every other redirect repeats it as it was. Redirected answers'
 * bodies are discarded; the last answer's is the caller's to read (with {@linkcode readCapped}).
 *
 * @example
 * ```ts
 * const { response, url } = await fetchFollowing(new URL("https://api.github.com/user"), {
 *   method: "GET",
 *   headers: { Authorization: "Bearer ghs_example" },
 * });
 * ```
 *
 * @throws {RedirectError} For a redirect that is not followed; fetch's own errors otherwise.
 */
export async function fetchFollowing(
  url: URL,
  request: PolicyRequest,
  options: FollowOptions = {},
): Promise<Followed> {
  const send = options.fetch ?? fetch;
  const follows = options.follows ?? REDIRECT_STATUSES;
  let target = url;
  let method = request.method;
  let body = request.body;
  const headers = new Headers(request.headers);
  const attempt = options.attempt ?? 1;
  for (let redirects = 0;; redirects++) {
    const started = options.log?.monotonic() ?? 0;
    let response: Response;
    try {
      response = await send(target, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual",
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    } catch (error) {
      if (options.log !== undefined) {
        const durationMs = options.log.monotonic() - started;
        const hop = { method, url: target, headers: null, status: null, errorBody: null };
        _tell(options.log, { ...hop, durationMs, attempt });
      }
      throw error;
    }
    options.onAnswer?.(response);
    if (options.log !== undefined) {
      const durationMs = options.log.monotonic() - started;
      // A copy of the body, so the caller still reads its own: only an error's, the one worth
      // showing, and only in the verbose mode.
      const errorBody = response.status < 400 ? null : await readCapped(response.clone(), {
        signal: request.signal,
        maxBytes: options.maxBytes ?? MAX_BODY_BYTES,
      }).catch(() => null);
      _tell(options.log, {
        method,
        url: target,
        headers: response.headers,
        status: response.status,
        durationMs,
        attempt,
        errorBody,
      });
    }
    if (response.status < 300 || response.status >= 400) {
      return { response, url: target, method };
    }
    await response.body?.cancel();
    const refuse = (reason: RedirectRefusal, to?: URL, cause?: unknown) =>
      new RedirectError(reason, {
        method,
        status: response.status,
        from: target,
        to,
        follows,
        within: options.within,
        cause,
      });
    const location = response.headers.get("location");
    if (location === null) throw refuse("no_location");
    if (!follows.includes(response.status)) throw refuse("not_followed");
    if (!URL.canParse(location, target)) throw refuse("invalid");
    const to = new URL(location, target);
    if (to.origin !== target.origin) throw refuse("other_origin", to);
    if (to.username !== "" || to.password !== "") throw refuse("credentials", to);
    const within = options.within;
    if (within !== undefined && to.pathname !== within && !to.pathname.startsWith(`${within}/`)) {
      throw refuse("outside", to);
    }
    if (redirects + 1 > MAX_REDIRECTS) throw refuse("too_many", to);
    if (response.status === 303 && method !== "GET" && method !== "HEAD") {
      method = "GET";
      body = undefined;
      headers.delete("content-type");
    }
    target = to;
  }
}

function _tell(
  log: ExchangeLog,
  hop: Omit<Exchange, "host" | "path" | "requestId"> & { url: URL; headers: Headers | null },
): void {
  const { url, headers, ...rest } = hop;
  const requestId = REQUEST_ID_HEADERS.map((name) => headers?.get(name) ?? "")
    .find((value) => value !== "");
  log.tell({ ...rest, host: url.host, path: url.pathname, requestId: requestId ?? null });
}

/**
 * An answer whose body is larger than the cap; the body was not read past it.
 *
 * @example
 * ```ts
 * new BodyTooLargeError(200, 1024).message; // "answer 200 is larger than 1024 bytes"
 * ```
 */
export class BodyTooLargeError extends Error {
  /** Names the error. */
  override name = "BodyTooLargeError";
  /** The answer's status. */
  readonly status: number;
  /** The cap it went over. */
  readonly maxBytes: number;

  /** Makes the error for an answer of `status` over `maxBytes`. */
  constructor(status: number, maxBytes: number) {
    super(`answer ${status} is larger than ${maxBytes} bytes`);
    this.status = status;
    this.maxBytes = maxBytes;
  }
}

/**
 * Reads an answer's body as text, at most `maxBytes` (default {@linkcode MAX_BODY_BYTES}): a
 * declared `Content-Length` over the cap is refused before any byte is read, and a body that
 * grows past it (chunked, or longer than declared) is cancelled there. `signal` ends a body that
 * stalls.
 *
 * @example
 * ```ts
 * await readCapped(new Response("{}")); // "{}"
 * ```
 *
 * @throws {BodyTooLargeError} For a body over the cap; `signal.reason` when it aborts.
 */
export async function readCapped(
  response: Response,
  options: { readonly signal?: AbortSignal | undefined; readonly maxBytes?: number } = {},
): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const signal = options.signal ?? new AbortController().signal;
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new BodyTooLargeError(response.status, maxBytes);
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  // A stream that ignores the request's signal still stops when it aborts.
  const onAbort = () => reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw new BodyTooLargeError(response.status, maxBytes);
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  signal.throwIfAborted();
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return new TextDecoder().decode(bytes);
}
