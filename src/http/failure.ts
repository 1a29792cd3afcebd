/** One failure type for every request, its kinds, and what an HTTP status says to each client. */

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
 * Both clients give `not_found`, `refused` and `unusable`. The service's retries only `transient`
 * (408, 425, 429, 5xx, a network error, a timeout, a body not a JSON object), and `not_found` for a
 * run just triggered: `tls`, `plain_http` and `proxy` would meet the same certificate, server or
 * credentials again. A forge's `refused` (a redirect off origin, to credentials or too many, or a
 * proxy's 407): no retry changes it.
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
