/** A forge's API client as a writer gets it, from a test's fetch, clock and timer. */

import type { Clock } from "../../src/effects.ts";
import { apiExchange, ForgeHttp } from "../../src/forge/http.ts";

export function apiClient(options: {
  readonly forge?: string;
  readonly baseUrl: string;
  readonly token: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** The run's, beside the token. */
  readonly secrets?: readonly string[];
  readonly fetch: typeof fetch;
  readonly timeout: (ms: number) => AbortSignal;
  readonly clock: Pick<Clock, "now" | "sleep">;
  readonly requestTimeoutMs?: number;
}): ForgeHttp {
  const forge = options.forge ?? "GitHub";
  const target = { apiUrl: options.baseUrl, token: { value: options.token, variable: "TOKEN" } };
  const headers = options.headers ?? { Authorization: `Bearer ${options.token}` };
  const exchange = apiExchange(forge, target, headers, {
    userAgent: "service-ci/test",
    http: { makeFetch: () => options.fetch, timeout: options.timeout, secrets: options.secrets },
    clock: options.clock,
    requestTimeoutMs: () => options.requestTimeoutMs ?? 10_000,
    fetch: () => options.fetch,
  });
  return new ForgeHttp(forge, { baseUrl: options.baseUrl, exchange, clock: options.clock });
}
