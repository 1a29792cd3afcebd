/**
 * The two HTTP operations of the service, one attempt each: their headers and addresses, sent by
 * the one HTTP policy (`http/policy.ts`: time limit, same-origin redirects within the agent's
 * runs, bounded answers), and every failure turned into an {@linkcode ApiError} that says whether
 * a retry may help. Retrying is the poller's job.
 */

import { parseRetryAfter } from "./backoff.ts";
import type { CiMetadata } from "../ci/detect.ts";
import {
  BodyTooLargeError,
  fetchFollowing,
  MAX_REDIRECTS,
  proxyAuthRefusal,
  readCapped,
  REDIRECT_STATUSES,
  RedirectError,
  requestSignal,
} from "../http/policy.ts";
import type { Clock, ExchangeLog, Http } from "../effects.ts";
import { sanitize } from "../text/sanitize.ts";
import { duplicateMember } from "./verdict.ts";

// How Deno (rustls) reports a server certificate it does not accept: UnknownIssuer,
// NotValidForName, Expired, BadSignature, … ("invalid peer certificate: <why>").
const CERTIFICATE_ERROR = /invalid peer certificate|certificate verify failed/i;
// How the OS reports that nothing listens at the address and port (Linux/macOS "Connection
// refused (os error 111)", Windows "… actively refused it. (os error 10061)").
const CONNECTION_REFUSED_ERROR = /connection refused|actively refused|os error (?:111|61|10061)\b/i;
// How a host name that does not resolve is reported: "dns error: failed to lookup address
// information: Name or service not known" (glibc), "nodename nor servname provided" (macOS),
// "No such host is known" (Windows).
const DNS_ERROR =
  /dns error|failed to lookup address|name or service not known|nodename nor servname|no such host|temporary failure in name resolution/i;
// rustls: `certificate not valid for name "127.0.0.1"; certificate is only valid for
// DnsName("other.example")` (older versions: NotValidForName).
const NAME_MISMATCH_ERROR = /not valid for name|NotValidForName/i;
// How rustls reports an `https://` request answered in plain HTTP: the first bytes it read were
// not a TLS record ("received corrupt message of type InvalidContentType").
const PLAIN_HTTP_ERROR = /InvalidContentType|corrupt message/i;
/** The longest run address used; a run id that makes a longer one is an unusable answer. */
export const MAX_RUN_URL_LENGTH = 8_000;

/**
 * Why a request did not give a usable answer.
 *
 * - `auth`: 401/403; the key is wrong or lacks CI access.
 * - `not_found`: 404; the agent or run does not exist (or is not readable yet).
 * - `refused`: another 4xx; the service refused (inactive agent, no quality gate, bad request).
 * - `transient`: 408, 425, 429, 5xx, a network error, a per-request timeout, a body that is not
 *   a JSON object; a retry may help. A refused connection or a host name that does not resolve,
 *   before the service has ever answered, is transient too but marked
 *   {@linkcode ApiError.unreachable}: most often a wrong address, retried only briefly.
 * - `tls`: the service's certificate is not trusted or not valid for its name; a retry would
 *   meet the same certificate, so it is not retried (fix with `--ca-cert` or `--base-url`).
 * - `plain_http`: an `https://` address whose port answers in plain HTTP (the TLS handshake read
 *   an HTTP answer); a retry would meet the same server, so it is not retried.
 * - `proxy`: the proxy from the environment refused its credentials (407); a retry would send
 *   the same ones, so it is not retried.
 * - `redirect`: a redirect that is not followed (other origin, outside the API path, too many).
 * - `unusable`: an answer that cannot be used and that a retry would not fix.
 */
export type ApiErrorKind =
  | "auth"
  | "not_found"
  | "refused"
  | "transient"
  | "tls"
  | "plain_http"
  | "proxy"
  | "redirect"
  | "unusable";

/** A request that did not give a usable answer. Its message is one sanitized line. */
export class ApiError extends Error {
  /** Names the error. */
  override name = "ApiError";
  /** What kind of failure this is; decides whether it is retried. */
  readonly kind: ApiErrorKind;
  /** The HTTP status, when there was an answer. */
  readonly status: number | undefined;
  /** The service's `Retry-After`, in milliseconds, when it sent one. */
  readonly retryAfterMs: number | undefined;
  /**
   * The service's error code (`{"error": {"code": …}}`), when it sent one; for a TLS certificate
   * issued for another name, `certificate_name_mismatch`.
   */
  readonly code: string | undefined;
  /**
   * Set when nothing at the address could be reached (`refused`: connection refused; `dns`: the
   * host name does not resolve) and the service has not answered this client yet.
   */
  readonly unreachable: Unreachable | undefined;

  /** Makes an error of the given kind. */
  constructor(
    kind: ApiErrorKind,
    message: string,
    options: {
      status?: number | undefined;
      retryAfterMs?: number | undefined;
      code?: string | undefined;
      unreachable?: Unreachable | undefined;
      cause?: unknown;
    } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.kind = kind;
    this.status = options.status;
    this.retryAfterMs = options.retryAfterMs;
    this.code = options.code;
    this.unreachable = options.unreachable;
  }
}

/** Why nothing could be reached: connection refused, or a host name that does not resolve. */
export type Unreachable = "refused" | "dns";

/** A successful answer: the JSON object and the `Retry-After` that came with it. */
export interface ApiAnswer {
  /** The answer's JSON object. */
  readonly document: Readonly<Record<string, unknown>>;
  /** The answer's HTTP status. */
  readonly status: number;
  /** The wait the answer asked for with `Retry-After`, if any. */
  readonly retryAfterMs: number | undefined;
  /** A member the answer repeats on the verdict's path: such an answer is no verdict. */
  readonly duplicate?: string | undefined;
}

/** What the trigger answered. */
export interface TriggerAnswer extends ApiAnswer {
  /** The run's id, as the service spelled it (checked usable, not sanitized). */
  readonly runId: string;
}

/** Options of {@linkcode ServiceClient}. */
export interface ServiceClientOptions {
  /** The service's base address; a path prefix is kept. */
  readonly baseUrl: URL;
  /** The API key, sent only in `X-API-Key`. */
  readonly apiKey: string;
  /** The `User-Agent` header. */
  readonly userAgent: string;
  /** How long one request (answer and body) may take. */
  readonly requestTimeoutMs: number;
  /** How many requests may be in flight at once across all agents. Default 8. */
  readonly maxConcurrentRequests?: number;
  /** The fetch of the HTTP policy (a private CA, a proxy). */
  readonly fetch: typeof fetch;
  /** The wall clock, for `Retry-After` dates. */
  readonly clock: Pick<Clock, "now">;
  /** The timer of each request (`Http.timeout`). */
  readonly timeout: Http["timeout"];
  /**
   * Where the base address came from (`--base-url`, `SERVICE_BASE_URL`, …), named when nothing
   * can be reached there.
   */
  readonly baseUrlSource?: string;
  /** Where each exchange is told (the verbose mode); default nowhere. */
  readonly log?: ExchangeLog | undefined;
}

/**
 * A client for the two operations. One instance serves every agent of an invocation.
 *
 * @example
 * ```ts
 * import { systemClock } from "../platform/clock.ts";
 * const client = new ServiceClient({
 *   baseUrl: new URL("https://service.example"),
 *   apiKey: "sk_…",
 *   userAgent: "service-ci/1.0.0 (linux; x86_64)",
 *   requestTimeoutMs: 30_000,
 *   fetch,
 *   clock: systemClock,
 *   timeout: systemClock.timeout,
 * });
 * const answer = await client.readRun("0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", "run_1", AbortSignal.timeout(60_000));
 * ```
 */
export class ServiceClient {
  readonly #options: ServiceClientOptions;
  readonly #fetch: typeof fetch;
  readonly #clock: Pick<Clock, "now">;
  readonly #timeout: Http["timeout"];
  readonly #slots: _Semaphore;
  // Whether any HTTP answer has come: from then on a refused connection is an outage, not a
  // wrong address.
  #answered = false;
  // The attempts of each request not yet answered (the poller retries it), for the verbose
  // mode: a trigger by its idempotency key, a read by its address.
  readonly #attempts = new Map<string, number>();

  /** Makes a client; it sends nothing until asked. */
  constructor(options: ServiceClientOptions) {
    this.#options = options;
    this.#fetch = options.fetch;
    this.#clock = options.clock;
    this.#timeout = options.timeout;
    this.#slots = new _Semaphore(options.maxConcurrentRequests ?? 8);
  }

  /** The address of an agent's runs collection: `<base>/api/v1/agents/<agent>/runs`. */
  runsUrl(agentId: string): URL {
    const base = this.#options.baseUrl;
    const prefix = base.pathname.replace(/\/+$/, "");
    const url = new URL(base.href);
    url.pathname = `${prefix}/api/v1/agents/${encodeURIComponent(agentId)}/runs`;
    url.search = "";
    url.hash = "";
    return url;
  }

  /** The address of one run, with `runId` percent-encoded as one path segment. */
  runUrl(agentId: string, runId: string): URL {
    const collection = this.runsUrl(agentId);
    const url = new URL(collection.href);
    // A lone surrogate (valid in a JSON string) has no percent-encoding: encodeURIComponent throws.
    const segment = runId.isWellFormed() ? encodeURIComponent(runId) : "";
    url.pathname = `${collection.pathname}/${segment}`;
    if (segment === "" || url.pathname !== `${collection.pathname}/${segment}`) {
      throw new ApiError("unusable", `run id ${JSON.stringify(this.#shown(runId))} is not usable`);
    }
    if (url.href.length > MAX_RUN_URL_LENGTH) {
      throw new ApiError(
        "unusable",
        `run id ${
          JSON.stringify(this.#shown(runId, 40))
        } makes an address of ${url.href.length} characters; at most ${MAX_RUN_URL_LENGTH} are usable`,
      );
    }
    return url;
  }

  /** The headers every request carries, and the trigger's extra ones. */
  headers(idempotencyKey?: string): Headers {
    const headers = new Headers({
      "X-API-Key": this.#options.apiKey,
      "Accept": "application/json",
      "User-Agent": this.#options.userAgent,
    });
    if (idempotencyKey !== undefined) {
      headers.set("Content-Type", "application/json");
      headers.set("Idempotency-Key", idempotencyKey);
    }
    return headers;
  }

  /**
   * Triggers a run of the agent: one attempt. The same `idempotencyKey` must be passed on every
   * retry of one trigger, so that a service honouring it never starts the run twice.
   */
  async trigger(
    agentId: string,
    metadata: CiMetadata,
    idempotencyKey: string,
    signal: AbortSignal,
  ): Promise<TriggerAnswer> {
    const body = JSON.stringify({ ci_metadata: metadata });
    const answer = await this.#request("POST", this.runsUrl(agentId), agentId, {
      body,
      idempotencyKey,
      signal,
    });
    const runId = answer.document.run_id;
    if (typeof runId !== "string" || runId === "" || runId === "." || runId === "..") {
      throw new ApiError(
        "unusable",
        `the trigger answered ${answer.status} without a usable run_id (got ${
          _describeValue(runId, this.#options.apiKey)
        }); a run may have started: look in the agent's dashboard`,
        { status: answer.status },
      );
    }
    try {
      this.runUrl(agentId, runId);
    } catch (error) {
      throw new ApiError(
        "unusable",
        `the trigger answered ${answer.status} with an unusable run_id: ${
          (error as Error).message
        }; a run may have started: look in the agent's dashboard`,
        { status: answer.status },
      );
    }
    return { ...answer, runId };
  }

  /** Reads one run: one attempt. */
  readRun(agentId: string, runId: string, signal: AbortSignal): Promise<ApiAnswer> {
    return this.#request("GET", this.runUrl(agentId, runId), agentId, { signal });
  }

  async #request(
    method: "GET" | "POST",
    url: URL,
    agentId: string,
    options: { body?: string; idempotencyKey?: string; signal: AbortSignal },
  ): Promise<ApiAnswer> {
    const release = await this.#slots.acquire(options.signal);
    const request = options.idempotencyKey ?? `${method} ${url.href}`;
    const attempt = (this.#attempts.get(request) ?? 0) + 1;
    this.#attempts.set(request, attempt);
    const { signal, timeout } = requestSignal(
      this.#timeout(this.#options.requestTimeoutMs),
      options.signal,
    );
    try {
      // The key is never sent to another origin, nor outside the agent's runs.
      const { response } = await fetchFollowing(url, {
        method,
        headers: this.headers(options.idempotencyKey),
        body: options.body,
        signal,
      }, {
        fetch: this.#fetch,
        follows: method === "POST" ? [307, 308] : REDIRECT_STATUSES,
        within: this.runsUrl(agentId).pathname,
        onAnswer: () => this.#answered = true,
        log: this.#options.log,
        attempt,
      });
      const answer = await this.#answer(method, response, signal);
      this.#attempts.delete(request);
      return answer;
    } catch (error) {
      throw this.#asApiError(error, options.signal, timeout, url);
    } finally {
      release();
    }
  }

  // The policy's refusal in the service's words; the key is masked in the address shown.
  #redirectError(error: RedirectError): ApiError {
    const { status, to } = error;
    const what = `${error.method} answered ${status} redirect`;
    const shown = to === undefined ? "" : this.#shown(to.origin + to.pathname, 200);
    const message = {
      no_location: `${what} without a Location header`,
      not_followed: `${what}; only ${error.follows.join("/")} are followed`,
      invalid: `${what} to an invalid address`,
      other_origin:
        `${what} to another origin (${shown}); refused, the API key is only sent to ${error.from.origin}`,
      credentials: `${what} to an address with credentials (${shown}); refused`,
      outside: `${what} outside ${error.within} (${shown}); refused`,
      too_many: `${what}: more than ${MAX_REDIRECTS} redirects; refused`,
    }[error.reason];
    const kind = error.reason === "no_location" ? "unusable" : "redirect";
    return new ApiError(kind, message, { status });
  }

  async #answer(method: string, response: Response, signal: AbortSignal): Promise<ApiAnswer> {
    const status = response.status;
    const retryAfterMs = parseRetryAfter(response.headers.get("retry-after"), this.#clock.now());
    const text = await readCapped(response, { signal }).catch((error: unknown) => {
      // An error answer is classified by its status: one too large to show is shown without body.
      if (status < 300 || !(error instanceof BodyTooLargeError)) throw error;
      return "";
    });
    const what = `${method} answered ${status}${
      response.statusText ? ` ${this.#shown(response.statusText, 60)}` : ""
    }`;
    if (status >= 200 && status < 300) {
      const document = _parseObject(text);
      if (document === undefined) {
        throw new ApiError(
          "transient",
          `${what} with a body that is not a JSON object (${
            _contentKind(response, text, this.#options.apiKey)
          })`,
          { status, retryAfterMs },
        );
      }
      return { document, status, retryAfterMs, duplicate: duplicateMember(text) };
    }
    const { message, code } = _errorBody(text, this.#options.apiKey);
    const detail = message ? `: ${message}` : "";
    const options = { status, retryAfterMs, code };
    if (status === 401 || status === 403) throw new ApiError("auth", `${what}${detail}`, options);
    if (status === 404) throw new ApiError("not_found", `${what}${detail}`, options);
    // Not retried here: the poller (src/service/poll.ts) retries a transient error after backoff.ts's
    // delay, or after the Retry-After kept in the error.
    if (status === 408 || status === 425 || status === 429 || status >= 500) {
      throw new ApiError("transient", `${what}${detail}`, options);
    }
    if (status >= 400) throw new ApiError("refused", `${what}${detail}`, options);
    throw new ApiError("unusable", `${what}${detail}`, options);
  }

  // Service text as one safe line: the key masked (in every spelling) before any cut.
  #shown(text: string, maxLength?: number): string {
    return _shown(text, this.#options.apiKey, maxLength);
  }

  #asApiError(error: unknown, caller: AbortSignal, timeout: AbortSignal, url: URL): unknown {
    if (error instanceof ApiError) return error;
    if (error instanceof RedirectError) return this.#redirectError(error);
    if (error instanceof BodyTooLargeError) {
      return new ApiError("unusable", error.message, { status: error.status });
    }
    // The caller's abort (deadline or interrupt) is not a fault of the request: pass it on.
    if (caller.aborted) return caller.reason;
    if (timeout.aborted) {
      const seconds = this.#options.requestTimeoutMs / 1000;
      return new ApiError("transient", `request timed out after ${seconds} s`, { cause: error });
    }
    const proxyRefusal = proxyAuthRefusal(error, url);
    if (proxyRefusal !== null) return new ApiError("proxy", proxyRefusal, { cause: error });
    // The URL is already known to the reader; the connection error after it is the news.
    const reason = _causes(error).join(": ").replace(
      /error sending request (?:for url \([^)]*\)|from \S+ for \S+ \([^)]*\)): */,
      "",
    );
    const shown = (text: string) => this.#shown(text, 200);
    const from = this.#options.baseUrlSource === undefined
      ? ""
      : ` (from ${this.#options.baseUrlSource})`;
    // Deno reports a proxy that refuses, or whose name does not resolve, in the same words as the
    // service (the URL it names is the service's): the proxy is named as a suspect too. Kept
    // short: a progress line shows 200 characters, and a long host name must still fit.
    const proxy = `any proxy in ${
      url.protocol === "https:" ? "HTTPS_PROXY" : "HTTP_PROXY"
    }/ALL_PROXY`;
    // Before the service has answered, most often a wrong address; after, an outage.
    if (CONNECTION_REFUSED_ERROR.test(reason)) {
      return new ApiError(
        "transient",
        this.#answered
          ? `connection refused by ${url.host}, which answered before: check that the service (and ${proxy}) is up`
          : `connection refused by ${url.host}${from}: check the address and its port, that the service is up, and ${proxy}`,
        { cause: error, unreachable: this.#answered ? undefined : "refused" },
      );
    }
    if (DNS_ERROR.test(reason)) {
      return new ApiError(
        "transient",
        this.#answered
          ? `could not resolve host ${url.hostname}, which resolved before: check this machine's DNS (and ${proxy})`
          : `could not resolve host ${url.hostname}${from}: check the address, this machine's DNS, and ${proxy}`,
        { cause: error, unreachable: this.#answered ? undefined : "dns" },
      );
    }
    // A plain-HTTP port and a refused certificate are configuration errors, the same on every
    // retry. What rustls says is kept, without the layers of the HTTP stack it came through.
    const tlsReason = reason.replace(/^(?:fetch failed: )?(?:client error \([^)]*\): )?/, "");
    if (PLAIN_HTTP_ERROR.test(reason)) {
      return new ApiError(
        "plain_http",
        `TLS handshake with ${url.host} failed: the port answers in plain HTTP`,
        { cause: error },
      );
    }
    if (NAME_MISMATCH_ERROR.test(reason)) {
      const names = /only valid for (.*)$/i.exec(reason)?.[1];
      return new ApiError(
        "tls",
        `the TLS certificate of ${url.host} is not valid for the name ${url.hostname}${
          names === undefined
            ? ""
            : ` (it names ${
              shown(names.replace(/DnsName\("([^"]*)"\)|IpAddress\(([^)]*)\)/g, "$1$2"))
            })`
        }`,
        { cause: error, code: "certificate_name_mismatch" },
      );
    }
    if (CERTIFICATE_ERROR.test(reason)) {
      return new ApiError(
        "tls",
        `the TLS certificate of ${url.host} was refused: ${shown(tlsReason)}`,
        { cause: error },
      );
    }
    return new ApiError("transient", `network error: ${shown(reason)}`, { cause: error });
  }
}

// fetch's own message ("fetch failed") hides the useful part in its causes.
function _causes(error: unknown): string[] {
  const messages: string[] = [];
  for (let current = error; current !== undefined && messages.length < 4;) {
    const message = current instanceof Error ? current.message : String(current);
    if (!messages.some((seen) => seen.includes(message))) messages.push(message);
    current = current instanceof Error ? current.cause : undefined;
  }
  return messages;
}

function _parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "object" && value !== null && !Array.isArray(value)) {
      return value as Record<string, unknown>;
    }
  } catch {
    // Not JSON: the caller reports what it was.
  }
  return undefined;
}

function _contentKind(response: Response, text: string, apiKey: string): string {
  const type = response.headers.get("content-type")?.split(";")[0]?.trim();
  const kind = type ? _shown(type, apiKey, 60) : "no content type";
  return text === "" ? `empty, ${kind}` : `${kind}, ${text.length} characters`;
}

/** Reads `{"error": {"code", "message"}}`, `{"message"}`, `{"detail"}` or plain text. */
function _errorBody(text: string, apiKey: string): { message: string; code: string | undefined } {
  const clean = (value: string) => _shown(value, apiKey, 300);
  const document = _parseObject(text);
  if (document === undefined) return { message: clean(text), code: undefined };
  const error = document.error;
  let message: unknown = undefined;
  let code: unknown = undefined;
  if (typeof error === "object" && error !== null) {
    message = (error as Record<string, unknown>).message;
    code = (error as Record<string, unknown>).code;
  } else if (typeof error === "string") {
    message = error;
  }
  message ??= document.message ?? document.detail;
  const text2 = typeof message === "string"
    ? message
    : message === undefined
    ? ""
    : JSON.stringify(message);
  return {
    message: clean(text2),
    code: typeof code === "string" ? clean(code) : undefined,
  };
}

// Every piece of service text this module prints goes through here: the key is masked before
// the text is cut, so no cut can leave a part of it.
function _shown(text: string, apiKey: string, maxLength?: number): string {
  return sanitize(text, { secrets: [apiKey], ...(maxLength === undefined ? {} : { maxLength }) });
}

function _describeValue(value: unknown, apiKey: string): string {
  if (value === undefined) return "nothing";
  if (typeof value === "string") return JSON.stringify(_shown(value, apiKey, 40));
  return value === null ? "null" : typeof value;
}

/** Bounds the requests in flight, so 100 agents do not open 100 sockets at once. */
class _Semaphore {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  async acquire(signal: AbortSignal): Promise<() => void> {
    signal.throwIfAborted();
    if (this.#free > 0) {
      this.#free--;
    } else {
      await new Promise<void>((resolve, reject) => {
        const grant = () => {
          signal.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const index = this.#waiting.indexOf(grant);
          if (index >= 0) this.#waiting.splice(index, 1);
          reject(signal.reason);
        };
        signal.addEventListener("abort", onAbort, { once: true });
        this.#waiting.push(grant);
      });
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    };
  }
}
