/**
 * The verbose mode: one inert line per HTTP exchange on stderr, turned on by `--verbose` or by the
 * CI's own debug switch, and then in that CI's debug format.
 */

import type { Clock, Exchange, ExchangeLog } from "../effects.ts";
import { neutralizeLine } from "../text/log_commands.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import type { Output } from "./streams.ts";

// The CIs whose own debug switch turns the verbose mode on, each line in that CI's debug format:
// GitHub shows `::debug::` lines only with RUNNER_DEBUG=1 (a re-run with debug logging), Azure
// shows `##[debug]` in grey; GitLab's CI_DEBUG_TRACE has no format of its own, so plain lines.
const _CI_DEBUG: Readonly<
  Record<
    string,
    { variable: string; on: (value: string) => boolean; format: "github" | "azure" | "plain" }
  >
> = {
  github_actions: { variable: "RUNNER_DEBUG", on: (value) => value === "1", format: "github" },
  gitlab: { variable: "CI_DEBUG_TRACE", on: (value) => value === "true", format: "plain" },
  azure_pipelines: {
    variable: "SYSTEM_DEBUG",
    on: (value) => value.toLowerCase() === "true",
    format: "azure",
  },
};

/** The CIs' debug switches read by {@linkcode exchangeLog}. */
export const DEBUG_ENV_VARIABLES: readonly string[] = Object.values(_CI_DEBUG).map((ci) =>
  ci.variable
);

/** The most characters of an error answer's body a verbose line shows. */
export const ERROR_EXCERPT_LENGTH = 200;

/** What decides the verbose mode, and where its lines go. */
export interface ExchangeLogOptions {
  /** `--verbose` / `SERVICE_VERBOSE`: `undefined` when not given, so the CI's switch decides. */
  readonly verbose: boolean | undefined;
  /** The detected CI's id (`CiMetadata.provider`). */
  readonly provider: string;
  /** Reads a declared variable (the CI's debug switch). */
  readonly read: (name: string) => string | undefined;
  /** The run's clock, to time each exchange. */
  readonly clock: Pick<Clock, "monotonic">;
}

/**
 * Where the HTTP exchanges are told, or `undefined` when the verbose mode is off: on with
 * `--verbose`, off with `SERVICE_VERBOSE=false`, else on when the CI runs in its debug mode
 * (GitHub `RUNNER_DEBUG=1`, GitLab `CI_DEBUG_TRACE=true`, Azure `SYSTEM_DEBUG=true`). Lines go
 * to stderr, in the CI's debug format when its switch is on, else plain.
 *
 * @example
 * ```ts
 * import { Output } from "./streams.ts";
 * const output = new Output({ stdout: () => {}, stderr: (text: string) => console.log(text) });
 * const log = exchangeLog(output, {
 *   verbose: true,
 *   provider: "local",
 *   read: () => undefined,
 *   clock: { monotonic: () => 0 },
 * });
 * log?.tell({
 *   method: "GET",
 *   host: "service.example",
 *   path: "/api/v1/agents/a/runs/r",
 *   status: 200,
 *   durationMs: 12,
 *   attempt: 1,
 *   requestId: "req_1",
 *   errorBody: null,
 * });
 * // service-ci: GET service.example/api/v1/agents/a/runs/r → 200 in 12 ms, attempt 1, request id req_1
 * ```
 */
export function exchangeLog(output: Output, options: ExchangeLogOptions): ExchangeLog | undefined {
  const ci = _CI_DEBUG[options.provider];
  const debug = ci !== undefined && ci.on(options.read(ci.variable)?.trim() ?? "");
  if (!(options.verbose ?? debug)) return undefined;
  const format = debug ? ci.format : "plain";
  return {
    monotonic: options.clock.monotonic,
    tell: (exchange) => {
      const line = exchangeLine(exchange, output.secrets);
      if (format === "plain") output.stderr(`service-ci: ${line}\n`);
      // Our own command: its data is inert already (exchangeLine), `%` escaped for GitHub.
      else if (format === "github") {
        output.command(`::debug::${line.replaceAll("%", "%25")}`, "stderr");
      } else output.command(`##[debug]${line}`, "stderr");
    },
  };
}

/**
 * One exchange as one inert line: every part that came from elsewhere (the path, the request id,
 * the error body) sanitized and masked of `secrets`, the body cut to
 * {@linkcode ERROR_EXCERPT_LENGTH} characters, and the whole unable to form a CI log command.
 *
 * @example
 * ```ts
 * exchangeLine({
 *   method: "POST",
 *   host: "service.example",
 *   path: "/api/v1/agents/a/runs",
 *   status: 401,
 *   durationMs: 3.4,
 *   attempt: 2,
 *   requestId: null,
 *   errorBody: '{"error": "key sk_1 refused"}',
 * }, ["sk_1"]);
 * // 'POST service.example/api/v1/agents/a/runs → 401 in 3 ms, attempt 2, body: {"error": "key *** refused"}'
 * ```
 */
export function exchangeLine(exchange: Exchange, secrets: readonly string[]): string {
  const clean = (text: string, maxLength: number) => sanitize(text, { secrets, maxLength });
  const status = exchange.status === null ? "no answer" : String(exchange.status);
  const parts = [
    `${exchange.method} ${clean(exchange.host + exchange.path, 300)} → ${status} in ${
      Math.round(exchange.durationMs)
    } ms`,
    `attempt ${exchange.attempt}`,
    ...(exchange.requestId === null ? [] : [`request id ${clean(exchange.requestId, 100)}`]),
    ...(exchange.errorBody === null || exchange.status === null || exchange.status < 400
      ? []
      : [`body: ${clean(exchange.errorBody, ERROR_EXCERPT_LENGTH) || "(empty)"}`]),
  ];
  return neutralizeLine(maskSecrets(parts.join(", "), secrets));
}
