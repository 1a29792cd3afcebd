/** `--dry-run`: the requests a run would send, with the key masked, and nothing sent. */

import { type CiContext, type CiMetadata, describeCiMetadata } from "./ci_metadata.ts";
import type { ServiceClient } from "./client.ts";
import type { Config } from "./config.ts";
import { ExitCode } from "./exit_code.ts";
import type { Output } from "./output.ts";
import { VERSION } from "./version.ts";

/** One request a run would send. */
export interface DryRunRequest {
  /** Always `POST`: a dry run shows the trigger. */
  readonly method: "POST";
  /** The trigger's address. */
  readonly url: string;
  /** The headers, with the key shown as `***`. */
  readonly headers: Readonly<Record<string, string>>;
  /** The body, exactly as a run would send it. */
  readonly body: { readonly ci_metadata: CiMetadata };
}

/** The `--dry-run --json` document. */
export interface DryRunDocument {
  /** Marks the document as a dry run: nothing was sent. */
  readonly dry_run: true;
  /** The service address the requests go to, and where it came from. */
  readonly base_url: string;
  /** Where the address came from: a flag, a variable, `.env` or the built-in default. */
  readonly base_url_source: Config["baseUrlSource"];
  /** One request per agent, in the order of `--agent`. */
  readonly requests: readonly DryRunRequest[];
}

/**
 * The requests one trigger per agent would send.
 *
 * @example
 * ```ts
 * import type { CiMetadata } from "./ci_metadata.ts";
 * import type { ServiceClient } from "./client.ts";
 * import type { Config } from "./config.ts";
 * declare const client: ServiceClient;
 * declare const config: Config;
 * declare const metadata: CiMetadata;
 * const document = dryRunDocument(client, config, metadata);
 * document.requests.length === config.agents.length; // true
 * ```
 */
export function dryRunDocument(
  client: Pick<ServiceClient, "headers" | "runsUrl">,
  config: Pick<Config, "agents" | "baseUrl" | "baseUrlSource">,
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
    base_url_source: config.baseUrlSource,
    requests,
  };
}

/**
 * The dry run as text: each request as it would go on the wire, headers then body.
 *
 * @example
 * ```ts
 * declare const document: DryRunDocument;
 * console.log(renderDryRun(document));
 * ```
 */
export function renderDryRun(document: DryRunDocument): string {
  return document.requests.map((request) => {
    const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
    return `${request.method} ${request.url}\n${headers.join("\n")}\n\n${
      JSON.stringify(request.body, null, 2)
    }\n\n`;
  }).join("");
}

/**
 * Runs `--dry-run`: one line on stderr saying what was detected and where requests would go,
 * then the requests (the `--json` document, or text) on stdout. Nothing is sent. Resolves with
 * 0, or 3 when stdout could not take the output.
 *
 * @example
 * ```ts
 * import type { CiContext, CiMetadata } from "./ci_metadata.ts";
 * import type { ServiceClient } from "./client.ts";
 * import type { Config } from "./config.ts";
 * import type { Output } from "./output.ts";
 * declare const client: ServiceClient;
 * declare const config: Config;
 * declare const build: { metadata: CiMetadata; context: CiContext };
 * declare const output: Output;
 * const code = dryRun(client, config, build, output);
 * ```
 */
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
    }; service address ${config.baseUrl.href} from ${config.baseUrlSource}\n`,
  );
  const document = dryRunDocument(client, config, metadata);
  const written = config.json
    ? output.document(`${JSON.stringify(document, null, 2)}\n`)
    : output.stdout(renderDryRun(document));
  return written ? ExitCode.Passed : ExitCode.Unchecked;
}
