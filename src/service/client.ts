/** The service's two operations, one attempt each: the poller retries where an HttpFailure may. */

import { parseRetryAfter } from "./timing.ts";
import type { CiMetadata } from "../ci/detect.ts";
import type { Clock, ExchangeLog, Http } from "../effects.ts";
import { DEFAULT_MAX_LENGTH, sanitize } from "../text/sanitize.ts";
import { formatBound } from "../text/duration.ts";
import { duplicateMember, isObject } from "./verdict.ts";
import { failureKind, HttpFailure, networkFailure } from "../http/failure.ts";
import { Slots } from "../http/slots.ts";
import {
  fetchFollowing,
  proxyAuthRefusal,
  readCapped,
  REDIRECT_STATUSES,
  requestSignal,
} from "../http/fetch.ts";

/** A run id that makes a longer address is an unusable answer. */
const MAX_RUN_URL_LENGTH = 8_000;

export interface ApiAnswer {
  readonly document: Readonly<Record<string, unknown>>;
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  /** A member the answer repeats on the verdict's path: such an answer is no verdict. */
  readonly duplicate?: string | undefined;
}

/** Its `runId` as the service spelled it: checked usable, not sanitized. */
export type TriggerAnswer = ApiAnswer & { readonly runId: string };

export interface ServiceClientOptions {
  /** A path prefix is kept. */
  readonly baseUrl: URL;
  /** Sent only in `X-API-Key`. */
  readonly apiKey: string;
  readonly userAgent: string;
  readonly requestTimeoutMs: number;
  /** Across all agents. */
  readonly maxConcurrentRequests?: number;
  readonly fetch: typeof fetch;
  readonly clock: Pick<Clock, "now">;
  readonly timeout: Http["timeout"];
  /** Named (`--base-url`, …) when nothing can be reached there. */
  readonly baseUrlSource?: string;
  readonly log?: ExchangeLog | undefined;
}

/** One instance serves every agent of an invocation, so they share its request slots. */
export class ServiceClient {
  readonly #options: ServiceClientOptions;
  readonly #slots: Slots;
  // Once any answer has come, a refused connection is an outage, not a wrong address.
  #answered = false;

  constructor(options: ServiceClientOptions) {
    this.#options = options;
    const inFlight = options.maxConcurrentRequests ?? 8;
    this.#slots = new Slots({ inFlight, writes: inFlight }, "the service");
  }

  runsUrl(agentId: string): URL {
    const url = new URL(this.#options.baseUrl.href);
    const prefix = url.pathname.replace(/\/+$/, "");
    url.pathname = `${prefix}/api/v1/agents/${encodeURIComponent(agentId)}/runs`;
    url.search = "";
    url.hash = "";
    return url;
  }

  runUrl(agentId: string, runId: string): URL {
    const url = this.runsUrl(agentId);
    // A lone surrogate (valid in a JSON string) has no percent-encoding: encodeURIComponent throws.
    const segment = runId.isWellFormed() ? encodeURIComponent(runId) : "";
    const path = `${url.pathname}/${segment}`;
    url.pathname = path;
    if (segment === "" || url.pathname !== path) {
      const shown = JSON.stringify(this.#shown(runId));
      throw new HttpFailure("unusable", `run id ${shown} is not usable`);
    }
    if (url.href.length > MAX_RUN_URL_LENGTH) {
      const shown = JSON.stringify(this.#shown(runId, 40));
      const length = `an address of ${url.href.length} characters`;
      const message = `run id ${shown} makes ${length}; at most ${MAX_RUN_URL_LENGTH} are usable`;
      throw new HttpFailure("unusable", message);
    }
    return url;
  }

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

  /** Pass the same `idempotencyKey` on every retry, so the run is never started twice. */
  async trigger(
    agentId: string,
    metadata: CiMetadata,
    idempotencyKey: string,
    signal: AbortSignal,
    attempt = 1,
  ): Promise<TriggerAnswer> {
    const body = JSON.stringify({ ci_metadata: metadata });
    const request = { body, idempotencyKey, signal, attempt };
    const answer = await this.#request("POST", this.runsUrl(agentId), agentId, request);
    const runId = answer.document.run_id;
    let problem: string | undefined;
    if (typeof runId !== "string" || runId === "" || runId === "." || runId === "..") {
      const got = runId === undefined
        ? "nothing"
        : typeof runId === "string"
        ? JSON.stringify(this.#shown(runId, 40))
        : runId === null
        ? "null"
        : typeof runId;
      problem = `without a usable run_id (got ${got})`;
    } else {
      try {
        this.runUrl(agentId, runId);
        return { ...answer, runId };
      } catch (error) {
        problem = `with an unusable run_id: ${(error as Error).message}`;
      }
    }
    const message =
      `the trigger answered ${answer.status} ${problem}; a run may have started: look in the agent's dashboard`;
    throw new HttpFailure("unusable", message, { status: answer.status });
  }

  readRun(agentId: string, runId: string, signal: AbortSignal, attempt = 1): Promise<ApiAnswer> {
    return this.#request("GET", this.runUrl(agentId, runId), agentId, { signal, attempt });
  }

  async #request(
    method: "GET" | "POST",
    url: URL,
    agentId: string,
    options: { body?: string; idempotencyKey?: string; signal: AbortSignal; attempt: number },
  ): Promise<ApiAnswer> {
    options.signal.throwIfAborted();
    const slot = await this.#slots.acquire({ write: false, rank: 0 }, options.signal);
    const timer = this.#options.timeout(this.#options.requestTimeoutMs);
    const { signal, timeout } = requestSignal(timer, options.signal);
    try {
      // The key is never sent to another origin, nor outside the agent's runs.
      const { response } = await fetchFollowing(url, {
        method,
        headers: this.headers(options.idempotencyKey),
        body: options.body,
        signal,
      }, {
        fetch: this.#options.fetch,
        follows: method === "POST" ? [307, 308] : REDIRECT_STATUSES,
        within: this.runsUrl(agentId).pathname,
        secrets: [this.#options.apiKey],
        onAnswer: () => this.#answered = true,
        log: this.#options.log,
        attempt: options.attempt,
      });
      return await this.#answer(method, response, signal);
    } catch (error) {
      throw this.#asFailure(error, options.signal, timeout, url);
    } finally {
      slot.release();
    }
  }

  async #answer(method: string, response: Response, signal: AbortSignal): Promise<ApiAnswer> {
    const status = response.status;
    const retryAfter = response.headers.get("retry-after");
    const retryAfterMs = parseRetryAfter(retryAfter, this.#options.clock.now());
    const text = await readCapped(response, { signal }).catch((error: unknown) => {
      // An error answer is classified by its status: one too large to show is shown without body.
      if (status < 300 || !(error instanceof HttpFailure)) throw error;
      return "";
    });
    const statusText = response.statusText ? ` ${this.#shown(response.statusText, 60)}` : "";
    const what = `${method} answered ${status}${statusText}`;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: what it was is reported below.
    }
    const document = isObject(parsed) ? parsed : undefined;
    if (status >= 200 && status < 300) {
      if (document === undefined) {
        const type = response.headers.get("content-type")?.split(";")[0]?.trim();
        const kind = type ? this.#shown(type, 60) : "no content type";
        const content = text === "" ? `empty, ${kind}` : `${kind}, ${text.length} characters`;
        const message = `${what} with a body that is not a JSON object (${content})`;
        throw new HttpFailure("transient", message, { status, retryAfterMs });
      }
      return { document, status, retryAfterMs, duplicate: duplicateMember(text) };
    }
    // The service's words: `{"error": {"code", "message"}}`, `{"error"}`, `{"message"}`,
    // `{"detail"}` or text; an HTML page (nginx's 502, a login portal) is described, not quoted.
    const error = document?.error;
    const inner = isObject(error) ? error : undefined;
    const html = document === undefined && text.trim() !== "" &&
      _isHtml(response.headers.get("content-type"), text);
    const said: unknown = document === undefined
      ? text
      : inner?.message ?? (typeof error === "string" ? error : undefined) ?? document.message ??
        document.detail;
    const words = typeof said === "string" ? said : said === undefined ? "" : JSON.stringify(said);
    const message = this.#shown(words, 300);
    const code = typeof inner?.code === "string" ? this.#shown(inner.code, 300) : undefined;
    const detail = html
      ? " (an HTML page: a proxy in front of the service?)"
      : message
      ? `: ${message}`
      : "";
    const kind = failureKind(status, "service");
    throw new HttpFailure(kind, `${what}${detail}`, { status, retryAfterMs, code });
  }

  // Every piece of service text this module prints goes through here, as one safe line: the key
  // is masked (in every spelling) before the text is cut, so no cut can leave a part of it.
  #shown(text: string, maxLength = DEFAULT_MAX_LENGTH): string {
    return sanitize(text, { secrets: [this.#options.apiKey], maxLength });
  }

  #asFailure(error: unknown, caller: AbortSignal, timeout: AbortSignal, url: URL): unknown {
    // The key is only sent to the origin it was given for.
    if (error instanceof HttpFailure && error.redirect?.reason === "other_origin") {
      const note = `, the API key is only sent to ${error.redirect.from.origin}`;
      return new HttpFailure(error.kind, `${error.message}${note}`, { status: error.status });
    }
    if (error instanceof HttpFailure) return error;
    // The caller's abort (deadline or interrupt) is not a fault of the request: pass it on.
    if (caller.aborted) return caller.reason;
    if (timeout.aborted) {
      const after = formatBound(this.#options.requestTimeoutMs);
      return new HttpFailure("transient", `request timed out after ${after}`, { cause: error });
    }
    const proxyRefusal = proxyAuthRefusal(error, url);
    if (proxyRefusal !== null) return new HttpFailure("proxy", proxyRefusal, { cause: error });
    const asked = { url, answered: this.#answered, source: this.#options.baseUrlSource };
    return networkFailure(error, [this.#options.apiKey], asked);
  }
}

/** Whether an answer is an HTML page, by its type or, without one, by how its text starts. */
function _isHtml(contentType: string | null, text: string): boolean {
  return /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType ?? "") ||
    /^\s*<(!doctype\s+html|html|head|body|title)\b/i.test(text);
}
