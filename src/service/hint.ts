/** What to fix, added to a refusal or failure the service or the network gave. */

import { optionName, OPTIONS } from "../config/options.ts";
import { type FailureKind, type HttpFailure } from "../http/failure.ts";

/** `reason (fix: …)` when the status, the kind or the service's error code says what to fix. */
export function withHint(
  reason: string,
  error: HttpFailure | undefined,
  /** `duringTrigger`: before a run id was known. */
  context: { readonly duringTrigger: boolean; readonly runIdGiven: boolean },
): string {
  const hint = error === undefined ? undefined : _hint(error, context);
  return hint === undefined ? reason : `${reason} (fix: ${hint})`;
}

function _hint(error: HttpFailure, context: Parameters<typeof withHint>[2]): string | undefined {
  const baseUrl = optionName(OPTIONS.baseUrl);
  const code = (error.code ?? "").toLowerCase();
  if (error.status === 401) {
    return `check that ${OPTIONS.apiKey.variable} holds a current API key of this service`;
  }
  if (error.status === 403) {
    // The service's own message may name the fix already (where keys are made): say it once.
    return /api keys/i.test(error.message)
      ? undefined
      : "the API key needs CI access: use a key created with it under Settings → API Keys";
  }
  if (error.kind === "not_found") {
    if (context.duringTrigger) {
      return `check the agent UUID and ${baseUrl}: the service knows no such agent`;
    }
    const runId = optionName(OPTIONS.runId);
    return context.runIdGiven
      ? `check the run id given with ${runId}: the service knows no such run of this agent`
      : "the run is no longer readable on the service";
  }
  if (code.includes("inactive")) {
    return "the agent is inactive: activate it in the service's dashboard";
  }
  if (code.includes("gate")) return "the agent has no quality gate: configure one on the agent";
  if (code.includes("system") || code.includes("endpoint")) {
    return "the agent's system has no reachable endpoint: configure it on the system";
  }
  if (code === "certificate_name_mismatch") {
    return `give ${baseUrl} the host name the certificate was issued for, or have the service's certificate list this name`;
  }
  const caCert = optionName(OPTIONS.caCert);
  const byKind: Partial<Record<FailureKind, string>> = {
    tls:
      `trust the service's CA with ${caCert} <pem> (or ${OPTIONS.caCert.variable}, DENO_CERT, DENO_TLS_CA_STORE=system), or check ${baseUrl}'s host name`,
    plain_http: `check ${baseUrl}'s scheme and port (http:// is allowed only for loopback hosts)`,
    redirect: `check ${baseUrl}: redirects are only followed within the API on the same origin`,
  };
  return byKind[error.kind];
}
