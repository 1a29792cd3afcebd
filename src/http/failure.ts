/** One failure type for every request: its kinds, what a status says, what no answer says. */

import { sanitize } from "../text/sanitize.ts";
import { errorMessage } from "../text/quote.ts";

// rustls: "invalid peer certificate: <UnknownIssuer, Expired, BadSignature, …>".
const CERTIFICATE_ERROR = /invalid peer certificate|certificate verify failed/i;
// "Connection refused (os error 111)" (Linux/macOS), "… actively refused it. (os error 10061)".
const CONNECTION_REFUSED_ERROR = /connection refused|actively refused|os error (?:111|61|10061)\b/i;
// "Name or service not known" (glibc), "nodename nor servname provided" (macOS), "No such host
// is known" (Windows).
const DNS_ERROR =
  /dns error|failed to lookup address|name or service not known|nodename nor servname|no such host|temporary failure in name resolution/i;
// rustls: `certificate not valid for name "127.0.0.1"; certificate is only valid for
// DnsName("other.example")` (older versions: NotValidForName).
const NAME_MISMATCH_ERROR = /not valid for name|NotValidForName/i;
// rustls when plain HTTP answers `https://`: "received corrupt message of type InvalidContentType".
const PLAIN_HTTP_ERROR = /InvalidContentType|corrupt message/i;

export type RedirectRefusal =
  | "no_location"
  | "not_followed"
  | "invalid"
  | "other_origin"
  | "credentials"
  | "outside"
  | "too_many";

/** A redirect {@linkcode fetchFollowing} did not follow. */
export interface Redirect {
  readonly reason: RedirectRefusal;
  readonly from: URL;
  readonly to: URL | undefined;
}

type _ServiceKind = "auth" | "transient" | "tls" | "plain_http" | "proxy" | "redirect";
type _ForgeKind = "unauthorized" | "forbidden" | "rate_limited" | "server" | "network";

/**
 * Both clients give `not_found`, `refused` and `unusable`. The service retries only `transient`
 * (408, 425, 429, 5xx, no answer, timeout, a non-object body) and `not_found` for a new run: `tls`,
 * `plain_http` and `proxy` would meet the same certificate, server or credentials again. A forge's
 * `refused` (off-origin redirect, to credentials or too many; a proxy's 407) is final.
 */
export type FailureKind = _ServiceKind | _ForgeKind | "not_found" | "refused" | "unusable";

/** What an HTTP status that is no success says to the service's client, or to a forge's. */
export function failureKind(status: number, to: "service" | "forge"): FailureKind {
  if (to === "forge") {
    if (status === 401) return "unauthorized";
    if (status === 403) return "forbidden";
    if (status === 404) return "not_found";
    if (status === 429) return "rate_limited";
    return status >= 500 ? "server" : "unusable";
  }
  if (status === 401 || status === 403) return "auth";
  if (status === 404) return "not_found";
  if (status === 408 || status === 425 || status === 429 || status >= 500) return "transient";
  return status >= 400 ? "refused" : "unusable";
}

/** A transient failure marked so is most often a wrong address: it is retried only briefly. */
export type Unreachable = "refused" | "dns";

type _Detail = "status" | "retryAfterMs" | "code" | "unreachable" | "givenUp" | "redirect";

/** Its message is one sanitized line, without the credential. */
export class HttpFailure extends Error {
  override name = "HttpFailure";
  declare readonly status: number | undefined;
  declare readonly retryAfterMs: number | undefined;
  /** The service's `{"error": {"code"}}`, or `certificate_name_mismatch`. */
  declare readonly code: string | undefined;
  /** Set only while the service has not answered this client yet. */
  declare readonly unreachable: Unreachable | undefined;
  /** Never sent: a rate limit's pause outlasts the time left to finish. */
  declare readonly givenUp: boolean | undefined;
  declare readonly redirect: Redirect | undefined;

  constructor(
    readonly kind: FailureKind,
    message: string,
    { cause, ...details }: Partial<Pick<HttpFailure, _Detail>> & { readonly cause?: unknown } = {},
  ) {
    super(message, cause === undefined ? undefined : { cause });
    Object.assign(this, details);
  }

  get retryable(): boolean {
    return ["transient", "rate_limited", "server", "network"].includes(this.kind);
  }
}

/** `error` and its causes, outermost first: fetch's own message ("fetch failed") hides the rest. */
export function causeChain(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let link = error; link !== undefined && chain.length < 8;) {
    chain.push(link);
    link = link instanceof Error ? link.cause : undefined;
  }
  return chain;
}

/** The service as asked: where, whether it answered before, where its address came from. */
export type ServiceAsked = { url: URL; answered: boolean; source?: string | undefined };

/**
 * The one wording of a request that got no answer (but a timeout or a proxy's 407). The service's
 * says what the causes mean: a refused connection or DNS (`unreachable` until it has answered), a
 * plain-HTTP port, a refused certificate, else the causes. A forge's is one `network` line.
 */
export function networkFailure(
  error: unknown,
  secrets: readonly string[],
  /** A forge's name, unset through Bitbucket's proxy: its words are shown as they are. */
  asker: ServiceAsked | { readonly forge: string | undefined },
): HttpFailure {
  const shown = (text: string) => sanitize(text, { secrets, maxLength: 200 });
  const cause = { cause: error };
  if ("forge" in asker) {
    const { forge } = asker;
    const text = errorMessage(error);
    if (forge === undefined) return new HttpFailure("network", shown(text), cause);
    const named = error instanceof Error ? `${error.name}: ${text}` : text;
    return new HttpFailure("network", `${forge} could not be reached (${shown(named)})`, cause);
  }
  const { url, answered } = asker;
  const causes: string[] = [];
  for (const link of causeChain(error)) {
    const message = errorMessage(link);
    if (!causes.some((seen) => seen.includes(message))) causes.push(message);
    if (causes.length === 4) break;
  }
  // The URL is already known to the reader; the connection error after it is the news.
  const reason = causes.join(": ").replace(
    /error sending request (?:for url \([^)]*\)|from \S+ for \S+ \([^)]*\)): */,
    "",
  );
  const from = asker.source === undefined ? "" : ` (from ${asker.source})`;
  // Deno reports a failing proxy in the same words, naming the service's URL: the proxy is a
  // suspect too. Kept short: a progress line shows 200 characters.
  const proxy = `any proxy in ${url.protocol === "https:" ? "HTTPS" : "HTTP"}_PROXY/ALL_PROXY`;
  // Before the service has answered, most often a wrong address; after, an outage.
  const refused = CONNECTION_REFUSED_ERROR.test(reason);
  if (refused || DNS_ERROR.test(reason)) {
    const message = refused
      ? answered
        ? `connection refused by ${url.host}, which answered before: check that the service (and ${proxy}) is up`
        : `connection refused by ${url.host}${from}: check the address and its port, that the service is up, and ${proxy}`
      : answered
      ? `could not resolve host ${url.hostname}, which resolved before: check this machine's DNS (and ${proxy})`
      : `could not resolve host ${url.hostname}${from}: check the address, this machine's DNS, and ${proxy}`;
    const unreachable = answered ? undefined : refused ? "refused" : "dns";
    return new HttpFailure("transient", message, { ...cause, unreachable });
  }
  // A plain-HTTP port and a refused certificate are configuration errors, the same on every
  // retry. What rustls says is kept, without the layers of the HTTP stack it came through.
  if (PLAIN_HTTP_ERROR.test(reason)) {
    const message = `TLS handshake with ${url.host} failed: the port answers in plain HTTP`;
    return new HttpFailure("plain_http", message, cause);
  }
  if (NAME_MISMATCH_ERROR.test(reason)) {
    const names = /only valid for (.*)$/i.exec(reason)?.[1]
      ?.replace(/DnsName\("([^"]*)"\)|IpAddress\(([^)]*)\)/g, "$1$2");
    const named = names === undefined ? "" : ` (it names ${shown(names)})`;
    const message = `the TLS certificate of ${url.host} is not valid for the name ${url.hostname}`;
    return new HttpFailure("tls", message + named, { ...cause, code: "certificate_name_mismatch" });
  }
  if (CERTIFICATE_ERROR.test(reason)) {
    const tlsReason = reason.replace(/^(?:fetch failed: )?(?:client error \([^)]*\): )?/, "");
    const message = `the TLS certificate of ${url.host} was refused: ${shown(tlsReason)}`;
    return new HttpFailure("tls", message, cause);
  }
  return new HttpFailure("transient", `network error: ${shown(reason)}`, cause);
}
