/**
 * Flags, environment and `.env` → one validated, immutable {@linkcode Config}, or a
 * {@linkcode UsageError} naming the input at fault and what would be valid.
 * Precedence: flag, then environment, then `.env`, then default.
 */

import type { MetadataOverrides } from "./ci_metadata.ts";
import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { checkHttps, isLoopbackHost } from "./http_policy.ts";
import {
  type Flags,
  nearMissNames,
  OPTION_NAMES,
  optionName,
  OPTIONS,
  type OptionSpec,
} from "./options.ts";
import { quoteValue, UsageError } from "./errors.ts";
import { parseArgTokens, type TokenOption } from "./parse_args.ts";

export type { Flags } from "./options.ts";

/**
 * Everything one invocation needs, validated. A field named after an option (see
 * {@linkcode OPTIONS}) holds that option's value.
 */
export interface Config {
  /** Agent UUIDs, as given, in order, without duplicates. */
  readonly agents: readonly string[];
  /** The service's base address (https, or http to a loopback host). */
  readonly baseUrl: URL;
  /** Where the base address came from. */
  readonly baseUrlSource: BaseUrlSource;
  /** The whole wait, in milliseconds. */
  readonly timeoutMs: number;
  /** The API key. */
  readonly apiKey: string;
  /** Metadata values given on the command line. */
  readonly overrides: MetadataOverrides;
  /** One JSON document on stdout. */
  readonly json: boolean;
  /** Where to write the JUnit XML report. */
  readonly junitPath: string | undefined;
  /** Print the request that would be sent, send nothing. */
  readonly dryRun: boolean;
  /** Trigger, print the run ids, exit 0. */
  readonly noWait: boolean;
  /** Attach to this run instead of triggering one. */
  readonly runId: string | undefined;
  /** A failed gate exits 0. */
  readonly warnOnly: boolean;
  /** A PEM file of extra trusted certificates. */
  readonly caCertPath: string | undefined;
  /** The longest one request may take. */
  readonly requestTimeoutMs: number;
  /** The longest wait between two polls of a run. */
  readonly maxPollIntervalMs: number;
  /** Write the detected CI's native output. */
  readonly ciNative: boolean;
  /** Keep one comment on the pull or merge request. */
  readonly prComment: boolean;
  /**
   * Part of the comment's marker, so jobs that gate the same agents (the legs of a matrix) keep
   * one comment each.
   */
  readonly prCommentKey: string | undefined;
  /** One commit status per agent on the forge that hosts the code. */
  readonly commitStatus: boolean;
}

/** The four places the service address can come from, in precedence order. */
export type BaseUrlSource =
  | `--${typeof OPTIONS.baseUrl.flag}`
  | typeof OPTIONS.baseUrl.variable
  | ".env"
  | "built-in default";

/** Options of {@linkcode resolveConfig}. */
export interface ResolveOptions {
  /** The variables whose value in `env` came from the `.env` file rather than the environment. */
  readonly fromDotenv?: ReadonlySet<string>;
  /** The release's built-in service address; default {@linkcode DEFAULT_BASE_URL}. */
  readonly defaultBaseUrl?: string | undefined;
  /**
   * Which `.env` file was read, or that none was, for the message of a missing setting:
   * `"read ./.env"`, `"no .env in the working directory"`.
   */
  readonly envFileNote?: string;
}

/** What the command line asks for. */
export type Invocation =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly flags: Flags };

type _Entry = readonly [key: string, option: OptionSpec];

// Each flag's table entry, and the parser's view of it (the table spells a switch such as
// --no-ci-native as a flag alone).
const BY_FLAG: ReadonlyMap<string, _Entry> = new Map(
  Object.entries(OPTIONS as Record<string, OptionSpec>).flatMap(([key, option]) =>
    option.flag === undefined ? [] : [[option.flag, [key, option] as const]]
  ),
);
const TOKEN_OPTIONS: Readonly<Record<string, TokenOption>> = Object.fromEntries(
  [...BY_FLAG].map(([flag, [, option]]) => [flag, {
    type: option.type === "boolean" || option.type === "switch" ? "boolean" : "string",
    ...(option.short === undefined ? {} : { short: option.short }),
  }]),
);

// --api-key, --api_key, --apiKey, --apikey, --service-api-key, alone or with =value.
const API_KEY_FLAG = /^--?(?:service[-_]?)?api[-_]?key(?:=|$)/i;
const API_KEY_REFUSED =
  `--api-key is not an option: command lines show in process lists and CI logs, so the key is read only from ${OPTIONS.apiKey.variable}; set it from your CI's secret store (GitHub: secrets, GitLab: masked CI/CD variable, Jenkins: withCredentials, Azure Pipelines: secret variable mapped with env:) or a .env file`;
const HELP = `run \`service-ci ${optionName(OPTIONS.help)}\` for the valid options`;

/**
 * Parses the command line. `--api-key` (in any spelling) is refused first, with why the key is
 * read only from `SERVICE_API_KEY`. An option that takes a value never takes another option as
 * it (`--junit --help` is refused, naming both), so `--help` and `--version` win over everything
 * else only where they stand as options of their own. A single-value option given twice is
 * refused, naming both values. Values are checked later, by {@linkcode resolveConfig}.
 *
 * @example
 * ```ts
 * parseCommandLine(["--agent", "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", "--json"]);
 * // { kind: "run", flags: { agent: ["0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"], json: true } }
 * ```
 *
 * @throws {UsageError} For an unknown option, a missing or unexpected value, an option where a
 * value should be, a repeated single-value option, or an argument that is not an option.
 */
export function parseCommandLine(args: readonly string[]): Invocation {
  // Before the tokenizer: the key given after the flag must not reach any message.
  if (args.some((arg) => API_KEY_FLAG.test(arg))) throw new UsageError(API_KEY_REFUSED);
  const tokens = parseArgTokens(args, TOKEN_OPTIONS);
  // First, what the tokenizer took as a value but is an option: `--pr-comment-key --version`
  // with an empty variable before it must never print the version and exit 0.
  for (const token of tokens) {
    if (token.kind !== "option" || token.inlineValue !== false || token.value === undefined) {
      continue;
    }
    if (token.value.length > 1 && token.value.startsWith("-")) {
      const [, option] = BY_FLAG.get(token.name)!;
      const name = optionName(option);
      throw new UsageError(
        `${name} needs a value (${option.expected ?? "a non-empty value"}), but the next argument ${
          quoteValue(token.value)
        } looks like an option; write ${name}=${
          quoteValue(token.value).slice(1, -1)
        } if it is the value, or check that the variable meant to give ${name} its value is set`,
      );
    }
  }
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const option = BY_FLAG.get(token.name)?.[1];
    if (option === OPTIONS.help) return { kind: "help" };
    if (option === OPTIONS.version) return { kind: "version" };
  }
  const flags: Record<string, string | boolean | string[]> = {};
  for (const token of tokens) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      throw new UsageError(
        `unexpected argument ${quoteValue(token.value)}: service-ci takes only options; ${HELP}`,
      );
    }
    const entry = BY_FLAG.get(token.name);
    if (entry === undefined) throw new UsageError(_unknownOption(token.rawName));
    const [key, option] = entry;
    const name = optionName(option);
    if (option.type === "boolean" || option.type === "switch") {
      if (token.value !== undefined) throw new UsageError(`${name} takes no value; ${HELP}`);
      flags[key] = option.flagSets ?? true;
      continue;
    }
    if (token.value === undefined) {
      throw new UsageError(`${name} needs a value (${option.expected ?? "a non-empty value"})`);
    }
    const earlier = flags[key];
    if (option.type === "list") {
      flags[key] = Array.isArray(earlier) ? [...earlier, token.value] : [token.value];
    } else if (typeof earlier === "string") {
      throw new UsageError(
        `${name} is given twice (${quoteValue(earlier)} and ${
          quoteValue(token.value)
        }); give it once`,
      );
    } else {
      flags[key] = token.value;
    }
  }
  return { kind: "run", flags: flags as Flags };
}

// An unknown option, with the valid one nearest to it by edit distance over the names without
// dashes and hyphens (so a hyphen too many or too few still finds it) when it is near enough.
function _unknownOption(option: string): string {
  const name = option.replace(/^-+/, "");
  const squash = (text: string) => text.toLowerCase().replace(/[-_]/g, "");
  let best: { name: string; distance: number } | undefined;
  for (const candidate of OPTION_NAMES) {
    const distance = _editDistance(squash(name), squash(candidate));
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  if (best === undefined || best.distance > Math.max(1, Math.floor(name.length / 4))) {
    return `unknown option ${option}; ${HELP}`;
  }
  return `unknown option ${option}; did you mean --${best.name}? (${HELP})`;
}

function _editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The ports fetch never connects to, in Deno as in browsers: the Fetch standard's "bad ports"
 * (https://fetch.spec.whatwg.org/#port-blocking), which belong to mail, X11, IRC and the like,
 * and port 0. Every request there fails the same way, so the address is refused before any is
 * sent.
 *
 * @example
 * ```ts
 * FETCH_BLOCKED_PORTS.includes(6000); // true
 * ```
 */
export const FETCH_BLOCKED_PORTS: readonly number[] = [
  "0 1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110",
  "111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531",
  "532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190",
  "5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080",
].join(" ").split(" ").map(Number);

/**
 * Builds the configuration from the flags and an environment in which `.env` values already sit
 * under the variables that were set (see `mergeEnv`).
 *
 * @example
 * ```ts
 * const config = resolveConfig(
 *   { agent: ["0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"], baseUrl: "https://service.example" },
 *   { SERVICE_API_KEY: "sk_test" },
 * );
 * ```
 */
export function resolveConfig(
  flags: Flags,
  env: ConfigEnv,
  options: ResolveOptions = {},
): Config {
  const o = OPTIONS;
  const noWait = flags.noWait ?? o.noWait.default;
  const runId = _given(o.runId, flags.runId, env);
  const missing = (variable: string) => _missingNote(variable, env, options);
  const agents = _agents(flags, env, missing);
  if (runId !== undefined) {
    const [name, agent] = [optionName(o.runId), optionName(o.agent)];
    if (agents.length !== 1) {
      throw new UsageError(`${name} needs exactly one ${agent} (got ${agents.length})`);
    }
    if (noWait) {
      throw new UsageError(
        `${name} waits for a run; it cannot be used with ${optionName(o.noWait)}`,
      );
    }
  }
  const defaultBaseUrl = "defaultBaseUrl" in options ? options.defaultBaseUrl : DEFAULT_BASE_URL;
  const base = _baseUrl(flags, env, options.fromDotenv ?? new Set(), defaultBaseUrl, missing);
  const config: Config = {
    agents,
    baseUrl: base.url,
    baseUrlSource: base.source,
    timeoutMs: (_given(o.timeoutMinutes, flags.timeoutMinutes, env) ?? o.timeoutMinutes.default) *
      60_000,
    apiKey: _apiKey(env, missing),
    overrides: _overrides(flags, env),
    json: flags.json ?? o.json.default,
    junitPath: _given(o.junit, flags.junit, env),
    dryRun: flags.dryRun ?? o.dryRun.default,
    noWait,
    runId,
    warnOnly: flags.warnOnly ?? o.warnOnly.default,
    caCertPath: _given(o.caCert, flags.caCert, env),
    requestTimeoutMs: (_given(o.requestTimeoutSeconds, flags.requestTimeoutSeconds, env) ??
      o.requestTimeoutSeconds.default) * 1000,
    maxPollIntervalMs: (_given(o.maxPollIntervalSeconds, flags.maxPollIntervalSeconds, env) ??
      o.maxPollIntervalSeconds.default) * 1000,
    ciNative: flags.ciNative ?? _given(o.ciNative, undefined, env) ?? o.ciNative.default,
    prComment: flags.prComment ?? _given(o.prComment, undefined, env) ?? o.prComment.default,
    prCommentKey: _given(o.prCommentKey, flags.prCommentKey, env),
    commitStatus: flags.commitStatus ?? _given(o.commitStatus, undefined, env) ??
      o.commitStatus.default,
  };
  return Object.freeze(config);
}

/** The environment as the configuration reads it: flags, variables and `.env` merged. */
export type ConfigEnv = Readonly<Record<string, string | undefined>>;

// An option's value from its flag, else from its variable (empty counts as unset), checked
// under the name of the one it came from; `undefined` when neither gives one.
function _given<T>(
  option: {
    readonly flag?: string;
    readonly variable?: string;
    readonly parse: (text: string, name: string) => T;
  },
  flag: string | undefined,
  env: ConfigEnv,
): Exclude<T, undefined> | undefined {
  if (flag !== undefined) {
    return option.parse(flag, optionName(option)) as Exclude<T, undefined> | undefined;
  }
  const text = option.variable === undefined ? undefined : env[option.variable];
  if (text === undefined || text === "") return undefined;
  return option.parse(text, option.variable!) as Exclude<T, undefined> | undefined;
}

// What a message about a missing required variable adds: a near miss that is set (its name,
// never its value), and which .env file was read.
function _missingNote(variable: string, env: ConfigEnv, options: ResolveOptions): string {
  const set = nearMissNames(variable).filter((name) => (env[name] ?? "").trim() !== "");
  const notes = set.length === 0 ? [] : [
    `${set.join(" and ")} ${set.length === 1 ? "is" : "are"} set: did you mean ${variable}?`,
  ];
  if (options.envFileNote !== undefined) notes.push(options.envFileNote);
  return notes.length === 0 ? "" : ` (${notes.join("; ")})`;
}

function _agents(flags: Flags, env: ConfigEnv, missing: (variable: string) => string): string[] {
  const option = OPTIONS.agent;
  if (flags.agent !== undefined && flags.agent.length > 0) {
    return option.parse(flags.agent, optionName(option));
  }
  const given = (env[option.variable] ?? "").split(",").map((item) => item.trim()).filter((
    item,
  ) => item !== "");
  if (given.length === 0) {
    throw new UsageError(
      `no agent given: pass ${
        optionName(option)
      } ${option.valueName} (repeatable) or set ${option.variable} to a comma-separated list of agent UUIDs${
        missing(option.variable)
      }`,
    );
  }
  return option.parse(given, option.variable);
}

function _baseUrl(
  flags: Flags,
  env: ConfigEnv,
  fromDotenv: ReadonlySet<string>,
  defaultBaseUrl: string | undefined,
  missing: (variable: string) => string,
): { url: URL; source: BaseUrlSource } {
  const option = OPTIONS.baseUrl;
  const flag = optionName(option) as `--${typeof option.flag}`;
  if (flags.baseUrl !== undefined) {
    return { url: parseBaseUrl(flags.baseUrl, flag), source: flag };
  }
  const fromEnv = env[option.variable];
  if (fromEnv !== undefined && fromEnv !== "") {
    const source = fromDotenv.has(option.variable) ? ".env" : option.variable;
    return { url: parseBaseUrl(fromEnv, option.variable), source };
  }
  if (defaultBaseUrl !== undefined) {
    return {
      url: parseBaseUrl(defaultBaseUrl, "the built-in default service address"),
      source: "built-in default",
    };
  }
  throw new UsageError(
    `no service address: pass ${flag} https://…, set ${option.variable} (environment or .env), or use a release build with a built-in default (this build has none)${
      missing(option.variable)
    }`,
  );
}

/**
 * The longest service address accepted. fetch refuses a URL of about 64 KiB ("Invalid URL"), and
 * servers refuse far shorter ones; an address this long is a mistake, not an installation.
 */
export const MAX_BASE_URL_LENGTH = 2048;

/**
 * Checks a service address by the `--base-url` rules: `https://` (plain `http://` only for
 * loopback hosts), no credentials, no query or fragment, at most
 * {@linkcode MAX_BASE_URL_LENGTH} characters, not ending in the API's own path (`/api`,
 * `/api/v1`), not a port fetch refuses ({@linkcode FETCH_BLOCKED_PORTS}). `name` is the input the
 * message names.
 *
 * @example
 * ```ts
 * parseBaseUrl("https://service.example/eval", "--base-url").pathname; // "/eval"
 * ```
 *
 * @throws {UsageError} Naming `name` and what would be valid.
 */
export function parseBaseUrl(text: string, name: string): URL {
  if (text === "") throw new UsageError(`${name} must be an https:// URL (got an empty value)`);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    let host = "";
    try {
      host = new URL(`http://${text}`).hostname;
    } catch {
      // Not even a host: the plain message below says what is expected.
    }
    const scheme = isLoopbackHost(host) ? "http" : "https";
    throw new UsageError(
      `${name} must be an https:// URL (http:// for loopback hosts) (got ${quoteValue(text)}${
        host === "" ? "" : `; did you mean ${scheme}://${text}?`
      })`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${name} must be an https:// URL (got ${quoteValue(text)})`);
  }
  const insecure = checkHttps(url, name, text);
  if (insecure !== null) throw new UsageError(insecure);
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      `${name} must not contain credentials; the key goes in ${OPTIONS.apiKey.variable} (got ${url.protocol}//…@${url.host})`,
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new UsageError(
      `${name} must not have a query or fragment; give the address and optional path prefix only (got ${
        quoteValue(text)
      })`,
    );
  }
  if (text.length > MAX_BASE_URL_LENGTH) {
    throw new UsageError(
      `${name} must be at most ${MAX_BASE_URL_LENGTH} characters, the address and optional path prefix only (got ${
        quoteValue(text)
      })`,
    );
  }
  // The service's API lives under /api/v1 of its address, which service-ci adds itself: given
  // again, every request would miss and the 404 would blame the agent.
  const apiPath = /\/api(?:\/v1)?\/*$/i.exec(url.pathname);
  if (apiPath !== null) {
    const fixed = `${url.origin}${url.pathname.slice(0, apiPath.index)}`;
    throw new UsageError(
      `${name} must be the service's address without its API path: service-ci adds /api/v1 itself; give ${fixed} (got ${
        quoteValue(text)
      })`,
    );
  }
  if (url.port !== "" && FETCH_BLOCKED_PORTS.includes(Number(url.port))) {
    throw new UsageError(
      `${name} must not use port ${url.port}: fetch never connects to it (one of the Fetch standard's "bad ports", kept for mail, X11, IRC and the like); serve the API on another port (got ${
        quoteValue(text)
      })`,
    );
  }
  return url;
}

function _apiKey(env: ConfigEnv, missing: (variable: string) => string): string {
  const option = OPTIONS.apiKey;
  const key = _given(option, undefined, env);
  if (key === undefined) {
    throw new UsageError(
      `${option.variable} is not set: give the API key (created with CI access under Settings → API Keys) in the environment or in a .env file${
        missing(option.variable)
      }`,
    );
  }
  return key;
}

function _overrides(flags: Flags, env: ConfigEnv): MetadataOverrides {
  const o = OPTIONS;
  const commitSha = _given(o.commitSha, flags.commitSha, env);
  const branch = _given(o.branch, flags.branch, env);
  const pullRequest = _given(o.pullRequest, flags.pullRequest, env);
  const repository = _given(o.repository, flags.repository, env);
  const actor = _given(o.actor, flags.actor, env);
  return {
    ...(commitSha === undefined ? {} : { commitSha }),
    ...(branch === undefined ? {} : { branch }),
    ...(pullRequest === undefined ? {} : { pullRequest }),
    ...(repository === undefined ? {} : { repository }),
    ...(actor === undefined ? {} : { actor }),
  };
}
