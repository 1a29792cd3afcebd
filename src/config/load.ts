/** One invocation's config, before any send: `.env` under the environment, flags over both, CAs. */

import { UsageError } from "./errors.ts";
import {
  ENV_FILE_VARIABLES,
  type Flags,
  nearMissNames,
  OPTION_LIST,
  optionName,
  OPTIONS,
  type OptionSpec,
  type OptionValues,
} from "./options.ts";
import type { GitRunner } from "../effects.ts";
import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { andList, firstLine } from "../text/quote.ts";

/**
 * Each option of {@linkcode OPTIONS}, typed by the table, and its source: its flag, its variable,
 * `.env`, the release's `built-in default` address, the table's `default`, or `unset`.
 */
export type Config = OptionValues & {
  readonly envFileRead: string | undefined;
  /** Every CI variable detection and the verbose mode read, as the environment gave it. */
  readonly ci: Readonly<Record<string, string | undefined>>;
  /** `NO_COLOR` is set and not empty. */
  readonly noColor: boolean;
};

interface ResolveOptions {
  readonly fromDotenv?: ReadonlySet<string>;
  /** For a missing setting's message: `"read ./.env"`, `"no .env in the working directory"`. */
  readonly envFileNote?: string;
}

interface LoadDeps {
  readonly env: (name: string) => string | undefined;
  /** Whether Deno's permission list refused reading the variable `env` said was unset. */
  readonly envRefused?: (name: string) => boolean;
  /** Rejects as `Deno.readTextFile` does, or with `FileRefused`. */
  readonly readTextFile: (path: string) => Promise<string>;
  /** Told each secret value as soon as it is read, before anything is checked. */
  readonly addSecret?: (secret: string) => void;
  /** Read-only git in the working directory: asked whether its `.env` is tracked. */
  readonly git: GitRunner;
  readonly cwd?: string;
  /** The CI's variables (ci/detect.ts): kept in `Config.ci`; any one set means CI for `.env`. */
  readonly ciVariables: readonly string[];
}

const CA_CERT = `${optionName(OPTIONS.caCert)}/${OPTIONS.caCert.variable}`;

/**
 * Reads only `names` from the environment. The API key is never part of a message.
 *
 * @throws {UsageError} For any input that is missing or invalid.
 */
export async function loadConfig(
  flags: Flags,
  names: readonly string[],
  deps: LoadDeps,
): Promise<{
  readonly config: Config;
  readonly caCerts: string | undefined;
  /** A `.env` not used (in CI or tracked by git), or the variables a file set but may not give. */
  readonly warning: string | undefined;
}> {
  const file = await _readDotenv(deps, flags.envFile);
  const dotenv = Object.fromEntries(
    Object.entries(file.values).filter(([name]) => ENV_FILE_VARIABLES.includes(name)),
  );
  const env = mergeEnv(names, deps.env, dotenv);
  // A file's secrets are masked even where the file may not give them.
  for (const read of [(name: string) => env[name], (name: string) => file.values[name]]) {
    for (const secret of secretValues(read)) deps.addSecret?.(secret);
  }
  const fromDotenv = new Set(names.filter((name) => name in dotenv && !deps.env(name)));
  let config: Config;
  try {
    config = Object.freeze({
      ...resolveConfig(flags, env, { fromDotenv, envFileNote: file.note }),
      envFileRead: file.shown,
      ci: Object.fromEntries(deps.ciVariables.map((name) => [name, env[name]])),
      noColor: Boolean(env.NO_COLOR),
    });
  } catch (error) {
    throw refusedReadError(flags, env, deps.envRefused) ?? error;
  }
  const caCerts = config.caCert === undefined ? undefined : await _readCaCerts(deps, config.caCert);
  const ignored = names.filter((name) => name in file.values && !(name in dotenv)).join(", ");
  // Only a file that is used (file.shown) has values; one that is not says so itself.
  const warning = file.unused ??
    (ignored === ""
      ? undefined
      : `${file.shown} sets ${ignored}, which a file never gives: only service-ci's own SERVICE_* settings come from a file; a CI's variables, forge addresses and tokens, proxies and the CA come only from the environment (SECURITY.md)`);
  return { config, caCerts, warning };
}

/**
 * Deno refuses a bad certificate file only as the client is made: a usage error naming `--ca-cert`.
 *
 * @throws {UsageError} When the certificates cannot be used.
 */
export function makeTrustingFetch(
  makeFetch: (caCerts: string | undefined) => typeof fetch,
  caCerts: string | undefined,
  path: string | undefined,
): typeof fetch {
  try {
    return makeFetch(caCerts);
  } catch (error) {
    if (caCerts === undefined) throw error;
    throw new UsageError(
      `${CA_CERT} must name a PEM file of valid certificates (${path}): ${firstLine(error)}`,
    );
  }
}

// The working directory's .env is used only outside CI and untracked: in CI the checkout may be an
// attacker's, and a tracked file was written by whoever can push to the branch. A file --env-file
// names is always used. `unused`: the one line saying a file that is there was not used.
async function _readDotenv(
  deps: LoadDeps,
  explicit: string | undefined,
): Promise<{ values: Record<string, string>; note: string; shown?: string; unused?: string }> {
  const envFile = optionName(OPTIONS.envFile);
  if (explicit !== undefined) {
    const text = await deps.readTextFile(explicit).catch((error) => {
      throw new UsageError(`${envFile} cannot be read (${explicit}): ${firstLine(error)}`);
    });
    return { values: await parseEnvFile(text), note: `read ${explicit}`, shown: explicit };
  }
  // Any variable of a CI's that is set (CI among them, with any value: CI=false switches only the
  // metadata detection off), named so that a local shell that happens to set one can tell why.
  const ci = deps.ciVariables.find((name) => Boolean(deps.env(name)?.trim()));
  const cwd = deps.cwd;
  const shown = cwd === undefined ? ".env" : `${cwd}${/[\\/]$/.test(cwd) ? "" : "/"}.env`;
  const inCi = (there: boolean) =>
    `in CI (${ci} is set) the working directory's .env is not read, as the checkout may be someone else's; ${
      there ? `pass ${envFile} .env if it is yours` : `name a file with ${envFile}`
    }`;
  let values: Record<string, string> = {};
  try {
    const text = await deps.readTextFile(".env");
    // In CI it is read only to learn that it is there: its text is never parsed.
    if (ci === undefined) values = await parseEnvFile(text);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) {
      return {
        values,
        note: ci !== undefined
          ? inCi(false)
          : `no .env in ${
            cwd ?? "the working directory"
          }; only the working directory's .env is read, so run from the directory that holds it or pass ${envFile}`,
      };
    }
    // In CI one that cannot be read is not used either, and the same line says so.
    if (ci === undefined) {
      throw new UsageError(
        `the .env file in the working directory cannot be read (.env): ${firstLine(error)}`,
      );
    }
  }
  if (ci !== undefined) return { values, note: inCi(true), unused: inCi(true) };
  if (await deps.git(["ls-files", "--error-unmatch", "--", ".env"]) === undefined) {
    return { values, note: `read ${shown}`, shown };
  }
  // Masked all the same: a key committed by mistake is still a secret.
  for (const secret of secretValues((name) => values[name])) deps.addSecret?.(secret);
  const set = ENV_FILE_VARIABLES.filter((name) => name in values);
  const what = set.length === 0
    ? "it is not used"
    : `its ${andList(set)} ${set.length === 1 ? "is" : "are"} not used`;
  const note =
    `${shown} is tracked by git, so whoever can push to the branch wrote it: ${what}; pass ${envFile} .env if you trust it`;
  return { values: {}, note, ...(set.length === 0 ? {} : { unused: note }) };
}

// Deno ignores a file without a certificate block, which would leave the CA silently untrusted.
async function _readCaCerts(deps: LoadDeps, path: string): Promise<string> {
  const text = await deps.readTextFile(path).catch((error) => {
    throw new UsageError(
      `${CA_CERT} must name a PEM file that can be read (${path}): ${firstLine(error)}`,
    );
  });
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UsageError(
      `${CA_CERT} must name a PEM file of certificates (-----BEGIN CERTIFICATE-----); ${path} holds none`,
    );
  }
  return text;
}

/** The `node:util` `parseEnv` dialect: `KEY=value`, quotes, `#` comments, `export ` stripped. */
export async function parseEnvFile(text: string): Promise<Record<string, string>> {
  // Only with a file: any `node:` import loads Deno's slow Node layer (docs/performance.md).
  const { parseEnv } = await import("node:util");
  return { ...parseEnv(text) } as Record<string, string>;
}

/** A `.env` file's values under the environment's non-empty ones; only `names` are ever read. */
export function mergeEnv(
  names: readonly string[],
  env: (name: string) => string | undefined,
  dotenv: Readonly<Record<string, string>>,
): Record<string, string | undefined> {
  return Object.fromEntries(names.map((name) => [name, env(name) || dotenv[name]]));
}

/** A required setting unset only because `--allow-env` refused its read: the error saying so. */
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
  const names = andList(refused);
  const them = refused.length === 1 ? "it" : "them";
  return new UsageError(
    `${names} cannot be read: Deno's permissions do not grant ${them} (--allow-env); run with the --allow-env list of docs/install.md ('--allow-env=SERVICE_*,…'), or use the release binary`,
  );
}

/** The values of the secret variables set in `env`, as given and trimmed: what every output masks. */
export function secretValues(env: (name: string) => string | undefined): string[] {
  return OPTION_LIST.flatMap((option) => {
    const value = option.secret === true ? env(option.variable!) : undefined;
    if (value === undefined || value.trim() === "") return [];
    return value === value.trim() ? [value] : [value, value.trim()];
  });
}

/**
 * Each value goes through its option's `parse` under the name it came by; an empty one is unset.
 *
 * @throws {UsageError} For a value that is not valid, or a required option given nowhere.
 */
export function resolveConfig(
  flags: Flags,
  env: ConfigEnv,
  options: ResolveOptions = {},
): OptionValues {
  const values: Record<string, unknown> = {};
  const sources: Record<string, string> = {};
  for (const [key, option] of Object.entries(OPTIONS as Record<string, OptionSpec>)) {
    if (option === OPTIONS.help || option === OPTIONS.version) continue;
    [values[key], sources[key]] = _resolve(key, option, flags, env, options);
  }
  const config = Object.freeze({ ...values, sources: Object.freeze(sources) }) as OptionValues;
  if (config.runId !== undefined) {
    const [name, agent] = [optionName(OPTIONS.runId), optionName(OPTIONS.agents)];
    if (config.agents.length !== 1) {
      throw new UsageError(`${name} needs exactly one ${agent} (got ${config.agents.length})`);
    }
    if (config.noWait) {
      throw new UsageError(
        `${name} waits for a run; it cannot be used with ${optionName(OPTIONS.noWait)}`,
      );
    }
  }
  return config;
}

/** Where the address and the key came from, for the first line printed; never a value. */
export function describeSources(config: Pick<Config, "sources" | "envFileRead">): string {
  const from = (source: string) =>
    source === ".env" && config.envFileRead !== undefined ? config.envFileRead : source;
  return `address from ${from(config.sources.baseUrl)}, key from ${from(config.sources.apiKey)}`;
}

/** The variables, with `.env` values under the names that were unset (`mergeEnv`). */
type ConfigEnv = Readonly<Record<string, string | undefined>>;

function _resolve(
  key: string,
  option: OptionSpec,
  flags: Flags,
  env: ConfigEnv,
  options: ResolveOptions,
): [value: unknown, source: string] {
  const parse = option.parse as ((input: unknown, name: string) => unknown) | undefined;
  const flag = (flags as Record<string, unknown>)[key];
  if (flag !== undefined && !(Array.isArray(flag) && flag.length === 0)) {
    const name = optionName(option);
    const takesValue = option.type !== "boolean" && option.type !== "switch";
    return [takesValue && parse !== undefined ? parse(flag, name) : flag, name];
  }
  const variable = option.variable;
  const text = variable === undefined ? undefined : env[variable];
  if (variable !== undefined && text !== undefined && text !== "") {
    const input = option.type === "list"
      ? text.split(",").map((item) => item.trim()).filter((item) => item !== "")
      : text;
    const value = Array.isArray(input) && input.length === 0 ? undefined : parse?.(input, variable);
    if (value !== undefined) {
      return [value, options.fromDotenv?.has(variable) ? ".env" : variable];
    }
  }
  if (option === OPTIONS.baseUrl && DEFAULT_BASE_URL !== undefined) {
    return [parse!(DEFAULT_BASE_URL, "the built-in default service address"), "built-in default"];
  }
  if (option.default !== undefined) return [option.default, "default"];
  if (option.missing !== undefined) {
    const note = variable === undefined ? "" : _missingNote(variable, env, options);
    throw new UsageError(`${option.missing(option)}${note}`);
  }
  return [undefined, "unset"];
}

// A near miss that is set (its name, never its value), and which .env file was read.
function _missingNote(variable: string, env: ConfigEnv, options: ResolveOptions): string {
  const set = nearMissNames(variable).filter((name) => (env[name] ?? "").trim() !== "");
  const notes = set.length === 0 ? [] : [
    `${andList(set)} ${set.length === 1 ? "is" : "are"} set: did you mean ${variable}?`,
  ];
  if (options.envFileNote !== undefined) notes.push(options.envFileNote);
  return notes.length === 0 ? "" : ` (${notes.join("; ")})`;
}
