/** `--dry-run`: the requests a run would send, with the key masked, and nothing sent. */

import { type CiContext, type CiMetadata, describeCiMetadata } from "../ci/detect.ts";
import type { ServiceClient } from "../service/client.ts";
import { type Config, describeSources } from "../config/resolve.ts";
import { ExitCode } from "../result/exit_code.ts";
import { describeTarget, type ForgeConfig, forgeTarget } from "../forge/target.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import { statusesSkipped } from "../forge/status/output.ts";
import type { Output } from "./streams.ts";
import { VERSION } from "../config/version.ts";

export interface DryRunRequest {
  readonly method: "POST";
  readonly url: string;
  /** The key shown as `***`. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: { readonly ci_metadata: CiMetadata };
}

/** The `--dry-run --json` document. */
export interface DryRunDocument {
  readonly dry_run: true;
  readonly base_url: string;
  readonly base_url_source: string;
  readonly api_key_source: string;
  readonly env_file: string | null;
  readonly requests: readonly DryRunRequest[];
}

export function dryRunDocument(
  client: Pick<ServiceClient, "headers" | "runsUrl">,
  config: Pick<Config, "agents" | "baseUrl" | "sources" | "envFileRead">,
  metadata: CiMetadata,
): DryRunDocument {
  const requests = config.agents.map((agent): DryRunRequest => ({
    method: "POST",
    url: client.runsUrl(agent).href,
    headers: Object.fromEntries(
      [...client.headers("<a new UUID v4 for each trigger>")].map(([name, value]) => [
        name,
        name === "x-api-key" ? "***" : value,
      ]),
    ),
    body: { ci_metadata: metadata },
  }));
  return {
    dry_run: true,
    base_url: config.baseUrl.href,
    base_url_source: config.sources.baseUrl,
    api_key_source: config.sources.apiKey,
    env_file: config.envFileRead ?? null,
    requests,
  };
}

export function renderDryRun(document: DryRunDocument): string {
  return document.requests.map((request) => {
    const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
    return `${request.method} ${request.url}\n${headers.join("\n")}\n\n${
      JSON.stringify(request.body, null, 2)
    }\n\n`;
  }).join("");
}

export function forgeOutputLines(
  config: Pick<Config, "agents" | "prComment" | "commitStatus" | "noWait"> & ForgeConfig,
  build: { readonly metadata: CiMetadata; readonly context: CiContext },
): string[] {
  const off = (option: { flag?: string; variable?: string }, what: string) =>
    `service-ci: ${optionName(option)} is off: ${what} would be written`;
  const comment = (): string => {
    if (!config.prComment) return off(OPTIONS.prComment, "no comment");
    const target = forgeTarget(config, build, "comment");
    return "skip" in target
      ? target.skip
      : `service-ci: the comment would be kept ${describeTarget(target)}`;
  };
  const statuses = (): string => {
    if (!config.commitStatus) return off(OPTIONS.commitStatus, "no commit status");
    const skipped = statusesSkipped(config);
    if (skipped !== null) return skipped;
    const target = forgeTarget(config, build, "statuses");
    const count = config.agents.length;
    return "skip" in target
      ? target.skip
      : `service-ci: ${count} commit status${
        count === 1 ? "" : "es"
      } (one per agent) would be written ${describeTarget(target)}`;
  };
  return [comment(), statuses()];
}

/** Returns 3 when stdout could not take the output. */
export function dryRun(
  client: ServiceClient,
  config: Config,
  { metadata, context }: { readonly metadata: CiMetadata; readonly context: CiContext },
  output: Output,
): number {
  if (config.json) output.commandsToStderr();
  output.stderr(
    `service-ci ${VERSION}: dry run, nothing is sent; ${
      describeCiMetadata(metadata, context)
    }; service address ${config.baseUrl.href}; ${describeSources(config)}\n`,
  );
  for (const line of forgeOutputLines(config, { metadata, context })) {
    output.stderr(`${line}\n`);
  }
  const document = dryRunDocument(client, config, metadata);
  const written = config.json
    ? output.document(`${JSON.stringify(document, null, 2)}\n`)
    : output.stdout(renderDryRun(document));
  return written ? ExitCode.Passed : ExitCode.Unchecked;
}
