/** `--dry-run`: the requests a run would send, with the key masked, and nothing sent. */

import { type CiContext, type CiMetadata, describeCiMetadata } from "../ci/detect.ts";
import type { ServiceClient } from "../service/client.ts";
import { type Config, describeSources } from "../config/load.ts";
import { ExitCode } from "../config/exit_codes.ts";
import { describeTarget, forgeTarget } from "../forge/target.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import { statusesSkipped } from "./statuses.ts";
import type { Output } from "./streams.ts";
import { VERSION } from "../config/version.ts";

/** Returns 3 when stdout could not take the output. */
export function dryRun(
  client: ServiceClient,
  config: Config,
  build: { readonly metadata: CiMetadata; readonly context: CiContext },
  output: Output,
): number {
  if (config.json) output.commandsToStderr();
  const ci = describeCiMetadata(build.metadata, build.context);
  const sources = describeSources(config);
  output.stderr(
    `service-ci ${VERSION}: dry run, nothing is sent; ${ci}; service address ${config.baseUrl.href}; ${sources}\n`,
  );
  const off = (option: { flag?: string; variable?: string }, what: string) =>
    `service-ci: ${optionName(option)} is off: ${what} would be written`;
  const comment = config.prComment
    ? forgeTarget(config, build, "comment")
    : { skip: off(OPTIONS.prComment, "no comment") };
  const skipped = config.commitStatus
    ? statusesSkipped(config)
    : off(OPTIONS.commitStatus, "no commit status");
  const statuses = skipped === null ? forgeTarget(config, build, "statuses") : { skip: skipped };
  const count = config.agents.length;
  const es = count === 1 ? "" : "es";
  const commentLine = "skip" in comment
    ? comment.skip
    : `service-ci: the comment would be kept ${describeTarget(comment)}`;
  const statusLine = "skip" in statuses
    ? statuses.skip
    : `service-ci: ${count} commit status${es} (one per agent) would be written ${
      describeTarget(statuses)
    }`;
  output.stderr(`${commentLine}\n${statusLine}\n`);
  const headers = Object.fromEntries(client.headers("<a new UUID v4 for each trigger>"));
  headers["x-api-key"] = "***";
  const requests = config.agents.map((agent) => ({
    method: "POST",
    url: client.runsUrl(agent).href,
    headers,
    body: { ci_metadata: build.metadata },
  }));
  const document = {
    dry_run: true,
    base_url: config.baseUrl.href,
    base_url_source: config.sources.baseUrl,
    api_key_source: config.sources.apiKey,
    env_file: config.envFileRead ?? null,
    requests,
  };
  const text = requests.map((request) => {
    const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
    const body = JSON.stringify(request.body, null, 2);
    return `${request.method} ${request.url}\n${headers.join("\n")}\n\n${body}\n\n`;
  });
  const written = config.json
    ? output.document(`${JSON.stringify(document, null, 2)}\n`)
    : output.stdout(text.join(""));
  return written ? ExitCode.Passed : ExitCode.Unchecked;
}
