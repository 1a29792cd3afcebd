/**
 * The one transport of every outbound request: trusted CAs and proxies, a per-request time limit,
 * same-origin redirects, capped bodies, the plain-`http://` rule. Clients word and retry failures.
 */

import type { ExchangeLog, FetchSetup } from "../effects.ts";
import { sanitize } from "../text/sanitize.ts";
import { formatBound } from "../text/duration.ts";
import { causeChain, HttpFailure, type Redirect, type RedirectRefusal } from "./failure.ts";
import { isLoopbackHost } from "./url.ts";

export const MAX_REDIRECTS = 5;
/** One run document of the service. */
export const MAX_BODY_BYTES = 1024 * 1024;
/** A page of up to 100 comments, each up to 65,536 characters on GitHub, must fit. */
export const MAX_FORGE_BODY_BYTES = 16 * 1024 * 1024;
/** The Fetch standard's list; any other 3xx is not followed. */
export const REDIRECT_STATUSES: readonly number[] = [301, 302, 303, 307, 308];

/**
 * Makes an HTTP client that never uses a proxy for `url`'s host. Deno has no per-request switch
 * (denoland/deno#28385), and 2.1 no `tcp` transport (which would send the absolute form too), but
 * it reads `NO_PROXY` as each client is made: src/main.ts's names the host there meanwhile.
 */
export type DirectClient = (url: URL, options: Deno.CreateHttpClientOptions) => Deno.HttpClient;

/**
 * Where `NO_PROXY` cannot be set: the host named as its own proxy. Still direct, but every request
 * goes out in absolute form (`POST http://127.0.0.1:8000/api/v1/…`), which uvicorn answers with 404.
 */
export function selfProxied(url: URL, options: Deno.CreateHttpClientOptions): Deno.HttpClient {
  return Deno.createHttpClient({ ...options, proxy: { url: url.origin } });
}

/**
 * Without `setup.proxy`, Deno's proxy variables apply, except to a plain-`http://` loopback
 * address, always reached directly by `direct`'s client: a proxy would read its headers (the key)
 * in clear. An `https://` one still follows them: the proxy sees no more than `CONNECT host:port`.
 *
 * @throws {TypeError} When Deno refuses the certificates or the proxy address.
 */
export function makePolicyFetch(
  setup: FetchSetup = {},
  direct: DirectClient = selfProxied,
): typeof fetch {
  const options: Deno.CreateHttpClientOptions = {
    ...(setup.caCerts === undefined ? {} : { caCerts: [setup.caCerts] }),
    ...(setup.proxy === undefined ? {} : { proxy: { url: setup.proxy } }),
  };
  const client = Object.keys(options).length === 0 ? undefined : Deno.createHttpClient(options);
  const configured: typeof fetch = client === undefined
    ? fetch
    : (input, init) => fetch(input, { ...init, client });
  // A proxy the program was given (Bitbucket's, itself on loopback) is meant for every request.
  if (setup.proxy !== undefined) return configured;
  const clients = new Map<string, Deno.HttpClient>();
  return (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input);
    if (url.protocol !== "http:" || !isLoopbackHost(url.hostname)) return configured(input, init);
    const loopback = clients.get(url.host) ?? direct(url, options);
    clients.set(url.host, loopback);
    return fetch(input, { ...init, client: loopback });
  };
}

/** A proxy's 407 as one line, or `null`; it names the variables, never their value (a password). */
export function proxyAuthRefusal(error: unknown, url: URL): string | null {
  // How Deno's fetch reports a proxy that answered its CONNECT with 407.
  const refused = causeChain(error).slice(0, 4)
    .some((link) => link instanceof Error && /proxy authentication required/i.test(link.message));
  if (!refused) return null;
  const variable = url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY";
  return `the proxy in ${variable}/ALL_PROXY refused the credentials it was given (407 Proxy Authentication Required): check the user and password in that variable; a retry would send the same ones`;
}

/** One timer for a request, its redirects and body; `timeout` tells it from the caller's abort. */
export function requestSignal(
  timeout: AbortSignal,
  caller?: AbortSignal,
): { readonly signal: AbortSignal; readonly timeout: AbortSignal } {
  return { signal: caller === undefined ? timeout : AbortSignal.any([caller, timeout]), timeout };
}

/** `timeoutMs()` is asked as each request starts. */
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

/** The one wording of a refused redirect: the service's (address sanitized) or a forge's. */
function _refused(
  redirect: Redirect,
  { method, status, follows }: { method: string; status: number; follows: readonly number[] },
  { within, secrets = [], api }: Parameters<typeof fetchFollowing>[2],
): HttpFailure {
  const reason = redirect.reason;
  if (api !== undefined) {
    const by = `${api.forge} redirected`;
    const words: Partial<Record<RedirectRefusal, string>> = {
      other_origin: `${by} to ${redirect.to?.origin}; the token is only sent to ${api.origin}`,
      credentials: `${by} to an address with credentials`,
      too_many: `${by} more than ${MAX_REDIRECTS} times`,
      not_followed: `${api.forge} answered ${method} ${redirect.from.pathname} with ${status}`,
    };
    const message = words[reason] ?? `${api.forge} answered ${status} without a usable Location`;
    const refused = ["other_origin", "credentials", "too_many"].includes(reason);
    return new HttpFailure(refused ? "refused" : "unusable", message, { status });
  }
  const what = `${method} answered ${status} redirect`;
  const address = redirect.to === undefined ? "" : redirect.to.origin + redirect.to.pathname;
  const to = sanitize(address, { maxLength: 200, secrets });
  const message = {
    no_location: `${what} without a Location header`,
    not_followed: `${what}; only ${follows.join("/")} are followed`,
    invalid: `${what} to an invalid address`,
    other_origin: `${what} to another origin (${to}); refused`,
    credentials: `${what} to an address with credentials (${to}); refused`,
    outside: `${what} outside ${within} (${to}); refused`,
    too_many: `${what}: more than ${MAX_REDIRECTS} redirects; refused`,
  }[reason];
  const kind = reason === "no_location" ? "unusable" : "redirect";
  return new HttpFailure(kind, message, { status, redirect });
}

/**
 * Follows redirects only on the same origin, so no header (the credentials included) ever
 * reaches another. The last answer's body is the caller's to read, with {@linkcode readCapped}.
 *
 * @throws {HttpFailure} With `redirect`, for a redirect that is not followed (kind `unusable`
 * without a Location, `redirect` otherwise); fetch's own errors otherwise.
 */
export async function fetchFollowing(
  url: URL,
  request: {
    readonly method: string;
    /** Credentials included: never sent to another origin. */
    readonly headers?: HeadersInit;
    readonly body?: string | undefined;
    readonly signal?: AbortSignal | undefined;
  },
  options: {
    readonly fetch: typeof fetch;
    readonly follows?: readonly number[];
    /** A path every redirect must stay at or under (the service's agent runs). */
    readonly within?: string | undefined;
    /** Masked in a refused redirect's address. */
    readonly secrets?: readonly string[];
    /** Redirects included. */
    readonly onAnswer?: (response: Response) => void;
    readonly log?: ExchangeLog | undefined;
    readonly attempt?: number;
    /** A forge's client: a refused redirect is worded as the forge's, `refused` or `unusable`. */
    readonly api?: { readonly forge: string; readonly origin: string };
  },
): Promise<{ readonly response: Response; readonly url: URL; readonly method: string }> {
  const follows = options.follows ?? REDIRECT_STATUSES;
  const log = options.log;
  let target = url;
  let method = request.method;
  let body = request.body;
  const headers = new Headers(request.headers);
  for (let redirects = 0;; redirects++) {
    const started = log?.monotonic() ?? 0;
    const tell = (at: number, answer: Response | null, errorBody: string | null) => {
      const durationMs = at - started;
      const requestId = ["x-request-id", "x-github-request-id", "x-correlation-id", "request-id"]
        .map((name) => answer?.headers.get(name) ?? "").find((value) => value !== "") ?? null;
      const { host, pathname: path } = target;
      const status = answer?.status ?? null;
      const attempt = options.attempt ?? 1;
      log?.tell({ method, host, path, status, durationMs, attempt, requestId, errorBody });
    };
    let response: Response;
    try {
      response = await options.fetch(target, {
        method,
        headers,
        ...(body === undefined ? {} : { body }),
        redirect: "manual",
        ...(request.signal === undefined ? {} : { signal: request.signal }),
      });
    } catch (error) {
      if (log !== undefined) tell(log.monotonic(), null, null);
      throw error;
    }
    options.onAnswer?.(response);
    if (log !== undefined) {
      // An error's body (the one worth showing) is told as its caller reads it: the log reads
      // nothing of its own, so --verbose changes no request, no wait and no exit code.
      const answer = response;
      const at = log.monotonic();
      // A status `new Response()` accepts, with a body to read.
      if (answer.status >= 400 && answer.status <= 599 && answer.body !== null) {
        response = _toldAsRead(answer, (text) => tell(at, answer, text));
      } else tell(at, answer, null);
    }
    if (response.status < 300 || response.status >= 400) {
      return { response, url: target, method };
    }
    await response.body?.cancel();
    const refuse = (reason: RedirectRefusal, to?: URL) =>
      _refused({ reason, from: target, to }, { method, status: response.status, follows }, options);
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

/** What the verbose mode shows of an error's body: the start of what its caller read. */
const EXCERPT_BYTES = 4 * 1024;

/**
 * `answer`, its body passing chunks on as read (none ahead); once read to the end, cancelled or
 * failed, `told` gets the first {@linkcode EXCERPT_BYTES} (`null`: none read).
 */
function _toldAsRead(answer: Response, told: (excerpt: string | null) => void): Response {
  const source = answer.body!.getReader();
  const excerpt = new Uint8Array(EXCERPT_BYTES);
  let size = 0;
  let done = false;
  const finish = (ended: boolean) => {
    if (done) return;
    done = true;
    const kept = excerpt.subarray(0, Math.min(size, EXCERPT_BYTES));
    told(ended || size > 0 ? new TextDecoder().decode(kept) : null);
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await source.read();
      } catch (error) {
        finish(false);
        controller.error(error);
        return;
      }
      // Cancelled while it waited.
      if (done) return;
      if (chunk.done) {
        finish(true);
        controller.close();
        return;
      }
      const room = Math.max(0, EXCERPT_BYTES - size);
      excerpt.set(chunk.value.subarray(0, room), EXCERPT_BYTES - room);
      size += chunk.value.byteLength;
      controller.enqueue(chunk.value);
    },
    async cancel(reason) {
      finish(false);
      await source.cancel(reason);
    },
  }, { highWaterMark: 0 });
  const { status, statusText, headers } = answer;
  return new Response(body, { status, statusText, headers });
}

/**
 * A declared `Content-Length` over the cap is refused before any byte is read; a body that grows
 * past it (chunked, or longer than declared) is cancelled there.
 *
 * @throws {HttpFailure} `unusable`, for a body over the cap; `signal.reason` when it aborts.
 */
export async function readCapped(
  response: Response,
  options: { readonly signal?: AbortSignal | undefined; readonly maxBytes?: number } = {},
): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_BODY_BYTES;
  const status = response.status;
  const tooLarge = `answer ${status} is larger than ${maxBytes} bytes`;
  const signal = options.signal ?? new AbortController().signal;
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new HttpFailure("unusable", tooLarge, { status });
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array<ArrayBuffer>[] = [];
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
        throw new HttpFailure("unusable", tooLarge, { status });
      }
      chunks.push(value);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  signal.throwIfAborted();
  return await new Blob(chunks).text();
}
