/**
 * Flags, environment and `.env` → one validated, immutable {@linkcode Config}, or a
 * {@linkcode UsageError} naming the input at fault and what would be valid.
 * Precedence: flag, then environment, then `.env`, then default.
 */

import { parseArgs } from "./parse_args.ts";
import { type MetadataOverrides, pullRequestNumber } from "./ci_metadata.ts";
import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { checkHttps, isLoopbackHost } from "./http_policy.ts";

/** The default `--timeout-minutes`. */
export const DEFAULT_TIMEOUT_MINUTES = 30;
/** The longest `--timeout-minutes` accepted: one week. */
export const MAX_TIMEOUT_MINUTES = 7 * 24 * 60;
/** The default `--request-timeout-seconds`. */
export const DEFAULT_REQUEST_TIMEOUT_SECONDS = 30;
/** The default `--max-poll-interval-seconds`. */
export const DEFAULT_MAX_POLL_INTERVAL_SECONDS = 10;

/** The environment variables the configuration reads (besides the CI metadata's). */
export const CONFIG_ENV_VARIABLES: readonly string[] = [
  "SERVICE_API_KEY",
  "SERVICE_AGENT_ID",
  "SERVICE_BASE_URL",
  "SERVICE_TIMEOUT_MINUTES",
  "SERVICE_CA_CERT",
  "SERVICE_REQUEST_TIMEOUT_SECONDS",
  "SERVICE_MAX_POLL_INTERVAL_SECONDS",
  "SERVICE_CI_NATIVE",
  "SERVICE_PR_COMMENT",
  "SERVICE_PR_COMMENT_KEY",
];

/** Everything one invocation needs, validated. */
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
  /** `--json`: one JSON document on stdout. */
  readonly json: boolean;
  /** `--junit <file>`: where to write the JUnit XML report. */
  readonly junitPath: string | undefined;
  /** `--dry-run`: print the request that would be sent, send nothing. */
  readonly dryRun: boolean;
  /** `--no-wait`: trigger, print the run ids, exit 0. */
  readonly noWait: boolean;
  /** `--run-id`: attach to this run instead of triggering one. */
  readonly runId: string | undefined;
  /** `--warn-only`: a failed gate exits 0. */
  readonly warnOnly: boolean;
  /** `--ca-cert` / `SERVICE_CA_CERT`: a PEM file of extra trusted certificates. */
  readonly caCertPath: string | undefined;
  /** The longest one request may take. */
  readonly requestTimeoutMs: number;
  /** The longest wait between two polls of a run. */
  readonly maxPollIntervalMs: number;
  /** Write the detected CI's native output (`--no-ci-native` / `SERVICE_CI_NATIVE=false`: no). */
  readonly ciNative: boolean;
  /** `--pr-comment` / `SERVICE_PR_COMMENT`: keep one comment on the pull or merge request. */
  readonly prComment: boolean;
  /**
   * `--pr-comment-key` / `SERVICE_PR_COMMENT_KEY`: part of the comment's marker, so jobs that
   * gate the same agents (the legs of a matrix) keep one comment each.
   */
  readonly prCommentKey: string | undefined;
}

/** The four places the service address can come from, in precedence order. */
export type BaseUrlSource = "--base-url" | "SERVICE_BASE_URL" | ".env" | "built-in default";

/** Options of {@linkcode resolveConfig}. */
export interface ResolveOptions {
  /** The variables whose value in `env` came from the `.env` file rather than the environment. */
  readonly fromDotenv?: ReadonlySet<string>;
  /** The release's built-in service address; default {@linkcode DEFAULT_BASE_URL}. */
  readonly defaultBaseUrl?: string | undefined;
}

/** What the command line asks for. */
export type Invocation =
  | { readonly kind: "help" }
  | { readonly kind: "version" }
  | { readonly kind: "run"; readonly flags: Flags };

/** The parsed flags, before the environment is consulted. */
export interface Flags {
  readonly agent?: readonly string[];
  readonly "base-url"?: string;
  readonly "timeout-minutes"?: string;
  readonly "env-file"?: string;
  readonly "commit-sha"?: string;
  readonly branch?: string;
  readonly "pull-request"?: string;
  readonly repository?: string;
  readonly actor?: string;
  readonly json?: boolean;
  readonly junit?: string;
  readonly "dry-run"?: boolean;
  readonly "no-wait"?: boolean;
  readonly "run-id"?: string;
  readonly "warn-only"?: boolean;
  readonly "ca-cert"?: string;
  readonly "request-timeout-seconds"?: string;
  readonly "max-poll-interval-seconds"?: string;
  readonly "no-ci-native"?: boolean;
  readonly "pr-comment"?: boolean;
  readonly "pr-comment-key"?: string;
}

/** Bad input: the message is one line naming the input and what would be valid. Exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

const OPTIONS = {
  agent: { type: "string", multiple: true },
  "base-url": { type: "string" },
  "timeout-minutes": { type: "string" },
  "env-file": { type: "string" },
  "commit-sha": { type: "string" },
  branch: { type: "string" },
  "pull-request": { type: "string" },
  repository: { type: "string" },
  actor: { type: "string" },
  json: { type: "boolean" },
  junit: { type: "string" },
  "dry-run": { type: "boolean" },
  "no-wait": { type: "boolean" },
  "run-id": { type: "string" },
  "warn-only": { type: "boolean" },
  "ca-cert": { type: "string" },
  "request-timeout-seconds": { type: "string" },
  "max-poll-interval-seconds": { type: "string" },
  "no-ci-native": { type: "boolean" },
  "pr-comment": { type: "boolean" },
  "pr-comment-key": { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
} as const;

/**
 * Every option the command line accepts, without its dashes; `--help` lists each
 * (`tests/e2e/gate_test.ts` checks that).
 *
 * @example
 * ```ts
 * OPTION_NAMES.includes("agent"); // true
 * ```
 */
export const OPTION_NAMES: readonly string[] = Object.keys(OPTIONS);

// --api-key, --api_key, --apiKey, --apikey, --service-api-key, alone or with =value.
const API_KEY_FLAG = /^--?(?:service[-_]?)?api[-_]?key(?:=|$)/i;
const API_KEY_REFUSED =
  "--api-key is not an option: command lines show in process lists and CI logs, so the key is read only from SERVICE_API_KEY; set it from your CI's secret store (GitHub: secrets, GitLab: masked CI/CD variable, Jenkins: withCredentials, Azure Pipelines: secret variable mapped with env:) or a .env file";

/**
 * Parses the command line. `--help` and `--version` win over everything else; `--api-key` (in
 * any spelling) is refused with why the key is read only from `SERVICE_API_KEY`.
 *
 * @example
 * ```ts
 * parseCommandLine(["--agent", "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", "--json"]);
 * ```
 */
export function parseCommandLine(args: readonly string[]): Invocation {
  if (args.includes("--help") || args.includes("-h")) return { kind: "help" };
  if (args.includes("--version")) return { kind: "version" };
  // Before the parser: its own messages could echo the key given after the flag.
  if (args.some((arg) => API_KEY_FLAG.test(arg))) throw new UsageError(API_KEY_REFUSED);
  let values: Record<string, unknown>;
  try {
    values = parseArgs({ args: [...args], options: OPTIONS, strict: true, allowPositionals: false })
      .values;
  } catch (error) {
    throw new UsageError(_describeParseError(error));
  }
  return { kind: "run", flags: values as Flags };
}

function _describeParseError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const quoted = /'([^']*)'/.exec(message)?.[1] ?? "";
  const option = quoted.split(" ")[0] ?? quoted;
  const help = "run `service-ci --help` for the valid options";
  switch (code) {
    case "ERR_PARSE_ARGS_UNKNOWN_OPTION": {
      const suggestion = _closestOption(option);
      return suggestion === undefined
        ? `unknown option ${option}; ${help}`
        : `unknown option ${option}; did you mean ${suggestion}? (${help})`;
    }
    case "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL":
      return `unexpected argument ${
        JSON.stringify(option)
      }: service-ci takes only options; ${help}`;
    case "ERR_PARSE_ARGS_INVALID_OPTION_VALUE":
      if (/does not take an argument/.test(message)) {
        return `${option} takes no value; ${help}`;
      }
      return `${option} needs a value (${_expected(option)})`;
    default:
      return `${message.split("\n")[0]}; ${help}`;
  }
}

// The valid option nearest to a mistyped one, by edit distance over the names without dashes
// and hyphens (so --time-out-minutes finds --timeout-minutes), when it is near enough.
function _closestOption(option: string): string | undefined {
  const name = option.replace(/^-+/, "").split("=")[0]!;
  const squash = (text: string) => text.toLowerCase().replace(/[-_]/g, "");
  let best: { name: string; distance: number } | undefined;
  for (const candidate of OPTION_NAMES) {
    const distance = _editDistance(squash(name), squash(candidate));
    if (best === undefined || distance < best.distance) best = { name: candidate, distance };
  }
  if (best === undefined || best.distance > Math.max(1, Math.floor(name.length / 4))) {
    return undefined;
  }
  return `--${best.name}`;
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

function _expected(option: string): string {
  const what: Record<string, string> = {
    "--agent": "an agent UUID",
    "--base-url": "the service's https:// address",
    "--timeout-minutes": "a positive number of minutes",
    "--env-file": "a file path",
    "--junit": "a file path",
    "--ca-cert": "a PEM file path",
    "--run-id": "a run id",
    "--pull-request": "a pull request number",
  };
  return what[option] ?? "a non-empty value";
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

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
 *   { agent: ["0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"] },
 *   { SERVICE_API_KEY: "sk_test", SERVICE_BASE_URL: "https://service.example" },
 * );
 * ```
 */
export function resolveConfig(
  flags: Flags,
  env: Readonly<Record<string, string | undefined>>,
  options: ResolveOptions = {},
): Config {
  const noWait = flags["no-wait"] ?? false;
  const runId = _optionalText(flags["run-id"], "--run-id", "a run id");
  const agents = _agents(flags, env);
  if (runId !== undefined) {
    if (runId === "." || runId === "..") {
      throw new UsageError(`--run-id must be a run id (got ${JSON.stringify(runId)})`);
    }
    if (agents.length !== 1) {
      throw new UsageError(`--run-id needs exactly one --agent (got ${agents.length})`);
    }
    if (noWait) throw new UsageError("--run-id waits for a run; it cannot be used with --no-wait");
  }
  const defaultBaseUrl = "defaultBaseUrl" in options ? options.defaultBaseUrl : DEFAULT_BASE_URL;
  const base = _baseUrl(flags, env, options.fromDotenv ?? new Set(), defaultBaseUrl);
  const config: Config = {
    agents,
    baseUrl: base.url,
    baseUrlSource: base.source,
    timeoutMs: _positiveNumber(
      flags["timeout-minutes"],
      "--timeout-minutes",
      env.SERVICE_TIMEOUT_MINUTES,
      "SERVICE_TIMEOUT_MINUTES",
      { fallback: DEFAULT_TIMEOUT_MINUTES, max: MAX_TIMEOUT_MINUTES, unit: "minutes" },
    ) * 60_000,
    apiKey: _apiKey(env),
    overrides: _overrides(flags),
    json: flags.json ?? false,
    junitPath: _optionalText(flags.junit, "--junit", "a file path"),
    dryRun: flags["dry-run"] ?? false,
    noWait,
    runId,
    warnOnly: flags["warn-only"] ?? false,
    caCertPath: _optionalText(flags["ca-cert"], "--ca-cert", "a PEM file path") ??
      _optionalText(env.SERVICE_CA_CERT, "SERVICE_CA_CERT", "a PEM file path"),
    requestTimeoutMs: _positiveNumber(
      flags["request-timeout-seconds"],
      "--request-timeout-seconds",
      env.SERVICE_REQUEST_TIMEOUT_SECONDS,
      "SERVICE_REQUEST_TIMEOUT_SECONDS",
      { fallback: DEFAULT_REQUEST_TIMEOUT_SECONDS, max: 3600, unit: "seconds" },
    ) * 1000,
    maxPollIntervalMs: _positiveNumber(
      flags["max-poll-interval-seconds"],
      "--max-poll-interval-seconds",
      env.SERVICE_MAX_POLL_INTERVAL_SECONDS,
      "SERVICE_MAX_POLL_INTERVAL_SECONDS",
      { fallback: DEFAULT_MAX_POLL_INTERVAL_SECONDS, max: 300, min: 0.5, unit: "seconds" },
    ) * 1000,
    ciNative: !(flags["no-ci-native"] ?? false) &&
      _switch(env.SERVICE_CI_NATIVE, "SERVICE_CI_NATIVE", true),
    prComment: (flags["pr-comment"] ?? false) ||
      _switch(env.SERVICE_PR_COMMENT, "SERVICE_PR_COMMENT", false),
    prCommentKey: _optionalText(flags["pr-comment-key"], "--pr-comment-key", "a name") ??
      (env.SERVICE_PR_COMMENT_KEY?.trim() || undefined),
  };
  return Object.freeze(config);
}

function _agents(flags: Flags, env: Readonly<Record<string, string | undefined>>): string[] {
  const fromFlags = flags.agent !== undefined && flags.agent.length > 0;
  const source = fromFlags ? "--agent" : "SERVICE_AGENT_ID";
  const given = fromFlags
    ? [...(flags.agent ?? [])]
    : (env.SERVICE_AGENT_ID ?? "").split(",").map((item) => item.trim()).filter((item) =>
      item !== ""
    );
  if (given.length === 0) {
    throw new UsageError(
      "no agent given: pass --agent <uuid> (repeatable) or set SERVICE_AGENT_ID to a comma-separated list of agent UUIDs",
    );
  }
  const seen = new Set<string>();
  for (const agent of given) {
    if (!UUID.test(agent)) {
      throw new UsageError(
        `${source} must be an agent UUID like 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10 (got ${
          JSON.stringify(agent)
        })`,
      );
    }
    const key = agent.toLowerCase();
    if (seen.has(key)) throw new UsageError(`${source} names agent ${agent} twice`);
    seen.add(key);
  }
  return given;
}

function _baseUrl(
  flags: Flags,
  env: Readonly<Record<string, string | undefined>>,
  fromDotenv: ReadonlySet<string>,
  defaultBaseUrl: string | undefined,
): { url: URL; source: BaseUrlSource } {
  if (flags["base-url"] !== undefined) {
    return { url: parseBaseUrl(flags["base-url"], "--base-url"), source: "--base-url" };
  }
  const fromEnv = env.SERVICE_BASE_URL;
  if (fromEnv !== undefined && fromEnv !== "") {
    const source = fromDotenv.has("SERVICE_BASE_URL") ? ".env" : "SERVICE_BASE_URL";
    return { url: parseBaseUrl(fromEnv, "SERVICE_BASE_URL"), source };
  }
  if (defaultBaseUrl !== undefined) {
    return {
      url: parseBaseUrl(defaultBaseUrl, "the built-in default service address"),
      source: "built-in default",
    };
  }
  throw new UsageError(
    "no service address: pass --base-url https://…, set SERVICE_BASE_URL (environment or .env), or use a release build with a built-in default (this build has none)",
  );
}

/**
 * Checks a service address by the `--base-url` rules: `https://` (plain `http://` only for
 * loopback hosts), no credentials, no query or fragment, not a port fetch refuses
 * ({@linkcode FETCH_BLOCKED_PORTS}). `name` is the input the message names.
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
      `${name} must be an https:// URL (http:// for loopback hosts) (got ${JSON.stringify(text)}${
        host === "" ? "" : `; did you mean ${scheme}://${text}?`
      })`,
    );
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${name} must be an https:// URL (got ${JSON.stringify(text)})`);
  }
  const insecure = checkHttps(url, name, text);
  if (insecure !== null) throw new UsageError(insecure);
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      `${name} must not contain credentials; the key goes in SERVICE_API_KEY (got ${url.protocol}//…@${url.host})`,
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new UsageError(
      `${name} must not have a query or fragment; give the address and optional path prefix only (got ${
        JSON.stringify(text)
      })`,
    );
  }
  if (url.port !== "" && FETCH_BLOCKED_PORTS.includes(Number(url.port))) {
    throw new UsageError(
      `${name} must not use port ${url.port}: fetch never connects to it (one of the Fetch standard's "bad ports", kept for mail, X11, IRC and the like); serve the API on another port (got ${
        JSON.stringify(text)
      })`,
    );
  }
  return url;
}

function _apiKey(env: Readonly<Record<string, string | undefined>>): string {
  const key = env.SERVICE_API_KEY;
  if (key === undefined || key === "") {
    throw new UsageError(
      "SERVICE_API_KEY is not set: give the API key (created with CI access under Settings → API Keys) in the environment or in a .env file",
    );
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x20\x7f]/.test(key)) {
    throw new UsageError(
      "SERVICE_API_KEY contains whitespace or control characters (often a trailing newline from the secret store); it must be the key alone",
    );
  }
  // A header value must be ASCII; fetch would refuse it on every attempt. The key itself is
  // never printed, only where the first foreign character is.
  const foreign = key.search(/[^\x21-\x7e]/);
  if (foreign >= 0) {
    throw new UsageError(
      `SERVICE_API_KEY must be printable ASCII, as the service issues it, but character ${
        foreign + 1
      } of ${key.length} is not (often a typographic quote or dash pasted from a document); copy the key again from Settings → API Keys`,
    );
  }
  return key;
}

function _overrides(flags: Flags): MetadataOverrides {
  const pullRequest = flags["pull-request"];
  if (pullRequest !== undefined && pullRequestNumber(pullRequest) === null) {
    throw new UsageError(
      `--pull-request must be a pull request number like 42 (got ${JSON.stringify(pullRequest)})`,
    );
  }
  const text = (name: keyof Flags & string) =>
    _optionalText(flags[name] as string | undefined, `--${name}`, "a non-empty value");
  const overrides: {
    commitSha?: string;
    branch?: string;
    pullRequest?: number;
    repository?: string;
    actor?: string;
  } = {};
  const commitSha = text("commit-sha");
  const branch = text("branch");
  const repository = text("repository");
  const actor = text("actor");
  if (commitSha !== undefined) overrides.commitSha = commitSha;
  if (branch !== undefined) overrides.branch = branch;
  if (pullRequest !== undefined) overrides.pullRequest = Number(pullRequest);
  if (repository !== undefined) overrides.repository = repository;
  if (actor !== undefined) overrides.actor = actor;
  return overrides;
}

// An on/off variable: true/1/yes/on or false/0/no/off in any case; unset or empty is `fallback`.
function _switch(value: string | undefined, name: string, fallback: boolean): boolean {
  const text = (value ?? "").trim().toLowerCase();
  if (text === "") return fallback;
  if (["true", "1", "yes", "on"].includes(text)) return true;
  if (["false", "0", "no", "off"].includes(text)) return false;
  throw new UsageError(
    `${name} must be true or false (also 1/0, yes/no, on/off) (got ${JSON.stringify(value)})`,
  );
}

function _optionalText(
  value: string | undefined,
  name: string,
  expected: string,
): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === "") throw new UsageError(`${name} must be ${expected} (got an empty value)`);
  return value;
}

function _positiveNumber(
  flag: string | undefined,
  flagName: string,
  envValue: string | undefined,
  envName: string,
  limits: { fallback: number; max: number; min?: number; unit: string },
): number {
  const [text, name] = flag !== undefined
    ? [flag, flagName]
    : envValue !== undefined && envValue !== ""
    ? [envValue, envName]
    : [undefined, flagName];
  if (text === undefined) return limits.fallback;
  const min = limits.min ?? 0;
  const valid = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim());
  const value = valid ? Number(text) : NaN;
  if (!(value > 0) || value < min || value > limits.max) {
    const range = min > 0 ? `from ${min} to ${limits.max}` : `up to ${limits.max}`;
    throw new UsageError(
      `${name} must be a positive number of ${limits.unit} ${range}, decimals allowed (got ${
        JSON.stringify(text)
      })`,
    );
  }
  return value;
}
