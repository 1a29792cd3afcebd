/** The verbose mode: one inert line per HTTP exchange on stderr. */

import type { Clock, Exchange, ExchangeLog } from "../effects.ts";
import { neutralizeLine } from "../text/log_commands.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import type { Output } from "./streams.ts";

// GitHub shows `::debug::` lines only with RUNNER_DEBUG=1 (a re-run with debug logging), Azure
// shows `##[debug]` in grey; GitLab's CI_DEBUG_TRACE has no format of its own.
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

export const DEBUG_ENV_VARIABLES: readonly string[] = Object.values(_CI_DEBUG).map((ci) =>
  ci.variable
);

/** `verbose` is `undefined` when not given, so the CI's debug switch decides. */
export function exchangeLog(
  output: Output,
  verbose: boolean | undefined,
  provider: string,
  env: Readonly<Record<string, string | undefined>>,
  clock: Pick<Clock, "monotonic">,
): ExchangeLog | undefined {
  const ci = _CI_DEBUG[provider];
  const debug = ci !== undefined && ci.on(env[ci.variable]?.trim() ?? "");
  if (!(verbose ?? debug)) return undefined;
  const format = debug ? ci.format : "plain";
  return {
    monotonic: clock.monotonic,
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
      : [`body: ${clean(exchange.errorBody, 200) || "(empty)"}`]),
  ];
  return neutralizeLine(maskSecrets(parts.join(", "), secrets));
}
