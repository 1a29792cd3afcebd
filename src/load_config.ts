/**
 * Loads the configuration of one invocation: the `.env` file laid under the environment, the
 * flags resolved against both, the report paths checked and the CA file read, all before
 * anything is sent. Every failure is a {@linkcode UsageError} naming the input at fault.
 */

import { type Config, resolveConfig } from "./config.ts";
import type { Flags } from "./options.ts";
import { firstLine, UsageError } from "./errors.ts";
import { mergeEnv, parseEnvFile } from "./env_file.ts";
import { optionName, OPTIONS, secretValues } from "./options.ts";
import { refusedReadError } from "./refused_env.ts";

/** The effects loading needs. */
export interface LoadDeps {
  /** Reads one environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Whether Deno's permission list refused reading the variable `env` said was unset. */
  readonly envRefused?: (name: string) => boolean;
  /** Reads a regular text file; rejects as `Deno.readTextFile` does, or with `FileRefused`. */
  readonly readTextFile: (path: string) => Promise<string>;
  /** Told each secret value as soon as it is read, before anything is checked. */
  readonly addSecret?: (secret: string) => void;
  /** The absolute working directory, for saying which `.env` was read. */
  readonly cwd?: string;
}

/** A loaded configuration and what it was loaded from. */
export interface LoadedConfig {
  /** The validated configuration. */
  readonly config: Config;
  /** Every variable the program reads, with `.env` values under the ones that were unset. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The PEM text of `--ca-cert`, when given. */
  readonly caCerts: string | undefined;
}

const CA_CERT = `${optionName(OPTIONS.caCert)}/${OPTIONS.caCert.variable}`;

/**
 * Loads and checks the configuration for the parsed `flags`, reading only `names` from the
 * environment. The API key is never part of a message.
 *
 * @example
 * ```ts
 * const flags = {
 *   agent: ["0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"],
 *   baseUrl: "https://x.example",
 * };
 * const { config } = await loadConfig(flags, ["SERVICE_API_KEY"], {
 *   env: (name) => ({ SERVICE_API_KEY: "sk_test" })[name],
 *   readTextFile: () => Promise.reject(new Deno.errors.NotFound("no .env")),
 * });
 * config.baseUrl.host; // "x.example"
 * ```
 *
 * @throws {UsageError} For any input that is missing or invalid.
 */
export async function loadConfig(
  flags: Flags,
  names: readonly string[],
  deps: LoadDeps,
): Promise<LoadedConfig> {
  const { values: dotenv, note: envFileNote } = await _readDotenv(deps, flags.envFile);
  const env = mergeEnv(names, deps.env, dotenv);
  for (const secret of secretValues((name) => env[name])) deps.addSecret?.(secret);
  const fromDotenv = new Set(
    names.filter((name) => env[name] !== undefined && !deps.env(name) && name in dotenv),
  );
  let config: Config;
  try {
    config = resolveConfig(flags, env, { fromDotenv, envFileNote });
  } catch (error) {
    throw refusedReadError(flags, env, deps.envRefused) ?? error;
  }
  const caCerts = config.caCert === undefined ? undefined : await _readCaCerts(deps, config.caCert);
  return { config, env, caCerts };
}

/**
 * Wraps a fetch maker so that a malformed certificate file, which Deno rejects when the client
 * is made, is a usage error naming `--ca-cert` rather than an internal one.
 *
 * @example
 * ```ts
 * const fetcher = makeTrustingFetch((caCerts) => fetch, undefined, undefined);
 * ```
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

// The `.env` values, and which file that was for a message: only the working directory's is read
// unless --env-file names another, so one in the repository's root is missed from a subdirectory.
async function _readDotenv(
  deps: LoadDeps,
  explicit: string | undefined,
): Promise<{ values: Record<string, string>; note: string }> {
  const path = explicit ?? ".env";
  const where = deps.cwd === undefined ? "the working directory" : deps.cwd;
  try {
    const values = await parseEnvFile(await deps.readTextFile(path));
    const shown = explicit ?? (deps.cwd === undefined ? ".env" : _join(deps.cwd, ".env"));
    return { values, note: `read ${shown}` };
  } catch (error) {
    if (explicit === undefined && error instanceof Deno.errors.NotFound) {
      return {
        values: {},
        note:
          `no .env in ${where}; only the working directory's .env is read, so run from the directory that holds it or pass ${
            optionName(OPTIONS.envFile)
          }`,
      };
    }
    const name = explicit === undefined
      ? "the .env file in the working directory"
      : optionName(OPTIONS.envFile);
    throw new UsageError(`${name} cannot be read (${path}): ${firstLine(error)}`);
  }
}

function _join(directory: string, name: string): string {
  return /[\\/]$/.test(directory) ? `${directory}${name}` : `${directory}/${name}`;
}

// Deno ignores a file without a certificate block, which would leave the CA silently untrusted.
async function _readCaCerts(deps: LoadDeps, path: string): Promise<string> {
  let text: string;
  try {
    text = await deps.readTextFile(path);
  } catch (error) {
    throw new UsageError(
      `${CA_CERT} must name a PEM file that can be read (${path}): ${firstLine(error)}`,
    );
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UsageError(
      `${CA_CERT} must name a PEM file of certificates (-----BEGIN CERTIFICATE-----); ${path} holds none`,
    );
  }
  return text;
}
