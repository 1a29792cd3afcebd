/**
 * Says that a required setting is missing because Deno's permission list refused to let it be
 * read, naming `--allow-env`, where the configuration would otherwise call it "not set".
 */

import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { UsageError } from "./errors.ts";
import { type Flags, OPTIONS } from "./options.ts";

/**
 * For the required settings (key, agent, address) that nothing gave and whose variable
 * `envRefused` says the permissions did not let the program read.
 */
export function refusedReadError(
  flags: Flags,
  env: Readonly<Record<string, string | undefined>>,
  envRefused: ((name: string) => boolean) | undefined,
  defaultBaseUrl: string | undefined = DEFAULT_BASE_URL,
): UsageError | undefined {
  if (envRefused === undefined) return undefined;
  const needed = [
    OPTIONS.apiKey.variable,
    ...(flags.agents === undefined || flags.agents.length === 0 ? [OPTIONS.agents.variable] : []),
    ...(flags.baseUrl === undefined && defaultBaseUrl === undefined
      ? [OPTIONS.baseUrl.variable]
      : []),
  ];
  const refused = needed.filter((name) => (env[name] ?? "") === "" && envRefused(name));
  if (refused.length === 0) return undefined;
  const names = refused.join(" and ");
  const them = refused.length === 1 ? "it" : "them";
  return new UsageError(
    `${names} cannot be read: Deno's permissions do not grant ${them} (--allow-env); run with the --allow-env list of docs/install.md ('--allow-env=SERVICE_*,…'), or use the release binary`,
  );
}
