/**
 * Every option of service-ci, declared once: its flag, type, default, environment variable,
 * GitHub action input, `--help` line and check. `tests/config/options_test.ts` checks
 * docs/options.md, README.md and action.yml against {@linkcode OPTIONS}.
 */

import { UsageError } from "./errors.ts";
import { hideUserinfo, quoteValue } from "../text/quote.ts";
import { checkHttps, isLoopbackHost } from "../http/url.ts";

/** One option. Every field but `type` and `help` is there only when it applies. */
export interface OptionSpec {
  /**
   * How it is given. `boolean`: a flag alone; `switch`: a flag alone that sets
   * {@linkcode OptionSpec.flagSets}, or its variable as true/false; `string` and `number`: a flag
   * with a value; `list`: a repeatable flag, or its variable as a comma-separated list.
   */
  readonly type: "boolean" | "switch" | "string" | "number" | "list";
  readonly flag?: string;
  readonly short?: string;
  readonly valueName?: string;
  readonly variable?: string;
  /** The GitHub action's input, where it is not the flag's name ({@linkcode actionInput}). */
  readonly input?: string;
  /** As the flag (the default) or the variable; messages in the action name the input. */
  readonly inputVia?: "flag" | "variable";
  /** Masked in every output, usage errors included, from the moment the program starts. */
  readonly secret?: boolean;
  readonly default?: number | boolean;
  /** As docs/options.md words it, where it is not a plain value. */
  readonly defaultText?: string;
  readonly flagSets?: boolean;
  /** One string a line; options with equal lines share one entry. */
  readonly help: readonly string[];
  /** Makes the option required: the message when neither flag, variable nor default gives it. */
  readonly missing?: (option: OptionSpec) => string;
  /** For a flag given without its value: "a positive number of minutes". */
  readonly expected?: string;
  /** `undefined` for a value that counts as unset; a {@linkcode UsageError} names `name`. */
  readonly parse?:
    | ((text: string, name: string) => unknown)
    | ((items: readonly string[], name: string) => unknown);
}

export const AGENT_UUID: RegExp = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function _refused(name: string, rule: string, text: string): UsageError {
  return new UsageError(`${name} must ${rule} (got ${quoteValue(text)})`);
}

// A value that must not be blank; `then` checks or tidies the rest.
function _text(expected: string, then = (text: string, _name: string) => text) {
  return {
    expected,
    parse(text: string, name: string): string {
      if (text.trim() === "") {
        throw new UsageError(`${name} must be ${expected} (got an empty value)`);
      }
      return then(text, name);
    },
  };
}

function _number(limits: { unit: string; default: number; max: number; min?: number }) {
  const expected = `a positive number of ${limits.unit}`;
  const min = limits.min ?? 0;
  const range = min > 0 ? `from ${min} to ${limits.max}` : `up to ${limits.max}`;
  return {
    type: "number",
    valueName: "<n>",
    default: limits.default,
    expected,
    parse(text: string, name: string): number {
      const valid = /^(\d+(\.\d*)?|\.\d+)$/.test(text.trim());
      const value = valid ? Number(text) : NaN;
      if (!(value > 0) || value < min || value > limits.max) {
        throw _refused(name, `be ${expected} ${range}, decimals allowed`, text);
      }
      return value;
    },
  } as const;
}

// An on/off variable: true/1/yes/on or false/0/no/off in any case; blank counts as unset.
function _onOff(text: string, name: string): boolean | undefined {
  const word = text.trim().toLowerCase();
  if (word === "") return undefined;
  if (["true", "1", "yes", "on"].includes(word)) return true;
  if (["false", "0", "no", "off"].includes(word)) return false;
  throw _refused(name, "be true or false (also 1/0, yes/no, on/off)", text);
}

function _switch(flagSets: boolean, fallback: boolean) {
  return {
    type: "switch",
    flagSets,
    default: fallback,
    parse: _onOff,
  } as const;
}

function _agents(items: readonly string[], name: string): string[] {
  const seen = new Set<string>();
  for (const agent of items) {
    if (agent.includes(",") && name.startsWith("--")) {
      throw new UsageError(
        `${name} takes one agent UUID; give ${name} once per agent (got ${quoteValue(agent)})`,
      );
    }
    if (!AGENT_UUID.test(agent)) {
      throw _refused(name, "be an agent UUID like 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", agent);
    }
    const key = agent.toLowerCase();
    if (seen.has(key)) throw new UsageError(`${name} names agent ${agent} twice`);
    seen.add(key);
  }
  return [...items];
}

// What a CI passes on, as written, in place of a secret it does not have: each reference's form,
// capturing the name it refers to (bounded, so the message stays short), and what to say of it.
// The message names that name, never the value whole: the value is masked as a secret.
const _UNEXPANDED: ReadonlyArray<readonly [RegExp, (ref: string | undefined) => string]> = [
  [
    /^\$\(([\w.-]{1,128})\)$/,
    (ref) =>
      `an Azure Pipelines macro for ${ref} that was never expanded, not a key: no variable ${ref} is defined; define ${ref} as a secret variable of the pipeline and map it in the step's env:`,
  ],
  [
    /^\$\{\{\s*(?:secrets\.([\w-]{1,128})|[\x20-\x7e]*?)\s*\}\}$/,
    (ref) =>
      `a GitHub Actions expression${
        ref === undefined ? "" : ` for secrets.${ref}`
      } that was never evaluated, not a key: only a workflow file's own keys are evaluated; define the secret under Settings → Secrets and variables → Actions and set the variable from it in the step's env:`,
  ],
  [
    /^%([\w.-]{1,128})%$/,
    (ref) =>
      `a TeamCity reference to ${ref} that was never expanded, not a key: no parameter ${ref} is defined; define ${ref} as a password parameter of the build configuration`,
  ],
  [
    /^\$\{?([A-Za-z_]\w{0,127})\}?$/,
    (ref) =>
      `a reference to the variable ${ref} that was never expanded, not a key: ${ref} is not defined where it was written (or was single-quoted); define ${ref} as a secret variable in the CI's settings (GitLab: masked CI/CD variable, Bitbucket: secured variable, Jenkins: withCredentials)`,
  ],
];

function _apiKey(key: string, name: string): string {
  // Before the whitespace rule: `${{ secrets.X }}` has blanks, and a trailing newline is not what
  // is wrong with it.
  for (const [form, what] of _UNEXPANDED) {
    const found = form.exec(key.trim());
    if (found !== null) throw new UsageError(`${name} is ${what(found[1])} (nothing was sent)`);
  }
  // deno-lint-ignore no-control-regex
  if (/[\x00-\x20\x7f]/.test(key)) {
    throw new UsageError(
      `${name} contains whitespace or control characters (often a trailing newline from the secret store); it must be the key alone`,
    );
  }
  // A header value must be ASCII; fetch would refuse it on every attempt. The key itself is
  // never printed, only where the first foreign character is.
  const foreign = key.search(/[^\x21-\x7e]/) + 1;
  if (foreign > 0) {
    throw new UsageError(
      `${name} must be printable ASCII, as the service issues it, but character ${foreign} of ${key.length} is not (often a typographic quote or dash pasted from a document); copy the key again from Settings → API Keys`,
    );
  }
  return key;
}

/** One rule for a pull request's number, the CI's or `--pull-request`'s. */
export function pullRequestNumber(value: string | null): number | null {
  const text = value?.trim() ?? "";
  if (!/^[1-9]\d*$/.test(text)) return null;
  const number = Number(text);
  return Number.isSafeInteger(number) ? number : null;
}

function _pullRequest(text: string, name: string): number {
  const number = pullRequestNumber(text);
  if (number === null) throw _refused(name, "be a pull request number like 42", text);
  return number;
}

/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#port-blocking) and port 0:
 * every request there fails the same way, so the address is refused before any is sent.
 */
export const FETCH_BLOCKED_PORTS: readonly number[] = [
  "0 1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110",
  "111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531",
  "532 540 548 554 556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190",
  "5060 5061 6000 6566 6665 6666 6667 6668 6669 6679 6697 10080",
].join(" ").split(" ").map(Number);

/**
 * The longest service address accepted. fetch refuses a URL of about 64 KiB ("Invalid URL"), and
 * servers refuse far shorter ones; an address this long is a mistake, not an installation.
 */
const MAX_BASE_URL_LENGTH = 2048;

/**
 * Checks a service address by the `--base-url` rules; a path prefix is kept. `name` is the
 * input the message names.
 *
 * @throws {UsageError} Naming `name` and what would be valid.
 */
export function parseBaseUrl(text: string, name: string): URL {
  if (text === "") throw new UsageError(`${name} must be an https:// URL (got an empty value)`);
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) {
    // The address as it was probably meant: without a scheme short of its slashes (`https:/h`)
    // or the slashes alone (`//h`), and without credentials, which the suggestion must not echo
    // (and would be refused).
    const meant = text.replace(/^(?:[a-z][a-z0-9+.-]*:)?[\\/]+/i, "").replace(/^[^\\/?#]*@/, "");
    // Not even a host: the plain message says what is expected.
    const host = URL.parse(`http://${meant}`)?.hostname ?? "";
    const scheme = isLoopbackHost(host) ? "http" : "https";
    throw new UsageError(
      `${name} must be an https:// URL (http:// for loopback hosts) (got ${quoteValue(text)}${
        host === "" ? "" : `; did you mean ${scheme}://${meant}?`
      })`,
    );
  }
  const url = URL.parse(text);
  if (url === null) throw _refused(name, "be an https:// URL", text);
  const insecure = checkHttps(url, name, hideUserinfo(text));
  if (insecure !== null) throw new UsageError(insecure);
  if (url.username !== "" || url.password !== "") {
    throw new UsageError(
      `${name} must not contain credentials; the key goes in ${OPTIONS.apiKey.variable} (got ${url.protocol}//…@${url.host})`,
    );
  }
  // The service's API lives under /api/v1 of its address, which service-ci adds itself: given
  // again, every request would miss and the 404 would blame the agent.
  const apiPath = /\/api(?:\/v1)?\/*$/i.exec(url.pathname);
  const fixed = `${url.origin}${url.pathname.slice(0, apiPath?.index)}`;
  // The first of the remaining rules the address breaks.
  const rule = url.search !== "" || url.hash !== ""
    ? "not have a query or fragment; give the address and optional path prefix only"
    : text.length > MAX_BASE_URL_LENGTH
    ? `be at most ${MAX_BASE_URL_LENGTH} characters, the address and optional path prefix only`
    : apiPath !== null
    ? `be the service's address without its API path: service-ci adds /api/v1 itself; give ${fixed}`
    : url.port !== "" && FETCH_BLOCKED_PORTS.includes(Number(url.port))
    ? `not use port ${url.port}: fetch never connects to it (one of the Fetch standard's "bad ports", kept for mail, X11, IRC and the like); serve the API on another port`
    : undefined;
  if (rule !== undefined) throw _refused(name, rule, text);
  return url;
}

// A value forge/target.ts judges, trimmed; blank counts as unset.
const _FORGE = { type: "string", parse: (text: string) => text.trim() || undefined } as const;

// A forge's address, judged by forge/target.ts like any _FORGE value, but never with credentials:
// it is printed (`--dry-run`, warnings), and a password in it would be too. `instead` says what
// the credentials were for.
function _forgeAddress(instead: string) {
  return {
    type: "string",
    parse(text: string, name: string): string | undefined {
      const address = text.trim();
      if (hideUserinfo(address) !== address) {
        throw _refused(name, `not contain credentials: ${instead}`, address);
      }
      return address || undefined;
    },
  } as const;
}

// The five metadata overrides share one help entry and one row of docs/options.md.
const _METADATA = {
  type: "string",
  valueName: "<value>",
  defaultText: "detected",
  help: ["override the CI metadata detected from the environment"],
  ..._text("a non-empty value"),
} as const;

/** In `--help`'s order. */
export const OPTIONS = {
  agents: {
    type: "list",
    flag: "agent",
    valueName: "<uuid>",
    variable: "SERVICE_AGENT_ID",
    defaultText: "required",
    help: ["agent to run; repeatable, all run concurrently"],
    expected: "an agent UUID",
    missing: (option) =>
      `no agent given: pass --${option.flag} ${option.valueName} (repeatable) or set ${option.variable} to a comma-separated list of agent UUIDs`,
    parse: _agents,
  },
  baseUrl: {
    // parseBaseUrl checks the built-in default too.
    type: "string",
    flag: "base-url",
    valueName: "<url>",
    variable: "SERVICE_BASE_URL",
    defaultText: "built-in",
    help: ["the service's address; https:// (http:// only for localhost)"],
    expected: "the service's https:// address",
    missing: (option) =>
      `no service address: pass --${option.flag} https://…, set ${option.variable} (environment or .env), or use a release build with a built-in default (this build has none)`,
    parse: parseBaseUrl,
  },
  timeoutMinutes: {
    flag: "timeout-minutes",
    variable: "SERVICE_TIMEOUT_MINUTES",
    help: ["bounds the whole wait; decimals allowed"],
    ..._number({ unit: "minutes", default: 30, max: 7 * 24 * 60 }),
  },
  apiKey: {
    type: "string",
    variable: "SERVICE_API_KEY",
    input: "api-key",
    inputVia: "variable",
    defaultText: "required",
    secret: true,
    help: [],
    missing: (option) =>
      `${option.variable} is not set: give the API key (created with CI access under Settings → API Keys) in the environment or in a .env file`,
    parse: _apiKey,
  },
  githubToken: {
    variable: "GITHUB_TOKEN",
    defaultText: "none",
    secret: true,
    help: ["GitHub's token for --pr-comment and --commit-status"],
    ..._FORGE,
  },
  gitlabToken: {
    variable: "SERVICE_GITLAB_TOKEN",
    defaultText: "none",
    secret: true,
    help: ["a GitLab project access token for --pr-comment and --commit-status"],
    ..._FORGE,
  },
  githubApiUrl: {
    variable: "GITHUB_API_URL",
    defaultText: "`https://api.github.com`",
    help: ["GitHub's API address for --pr-comment and --commit-status"],
    ..._forgeAddress("the token goes in GITHUB_TOKEN"),
  },
  gitlabApiUrl: {
    variable: "CI_API_V4_URL",
    defaultText: "set by GitLab CI",
    help: ["GitLab's API address for --pr-comment and --commit-status"],
    ..._forgeAddress("the token goes in SERVICE_GITLAB_TOKEN"),
  },
  bitbucketProxy: {
    variable: "SERVICE_BITBUCKET_PROXY",
    defaultText: "`http://localhost:29418`",
    help: ["the Bitbucket Pipelines proxy that signs Bitbucket's requests"],
    ..._forgeAddress("Bitbucket's pipeline proxy signs each request itself"),
  },
  json: {
    type: "boolean",
    flag: "json",
    default: false,
    help: ["print one JSON document with every agent's outcome on stdout"],
  },
  junit: {
    type: "string",
    flag: "junit",
    valueName: "<file>",
    help: ["write a JUnit XML report, one test case per agent"],
    ..._text("a file path"),
  },
  noWait: {
    type: "boolean",
    flag: "no-wait",
    default: false,
    help: ["trigger the runs, print their ids, exit 0 without waiting"],
  },
  runId: {
    type: "string",
    flag: "run-id",
    valueName: "<id>",
    help: ["attach to an existing run of the one --agent and wait for it"],
    ..._text("a run id", (text, name) => {
      if (text === "." || text === "..") throw _refused(name, "be a run id", text);
      return text;
    }),
  },
  warnOnly: {
    type: "boolean",
    flag: "warn-only",
    default: false,
    help: ["report a failed gate but exit 0 (unchecked and timeout keep", "their codes)"],
  },
  dryRun: {
    type: "boolean",
    flag: "dry-run",
    default: false,
    help: ["print the request that would be sent (key masked), send nothing"],
  },
  verbose: {
    // No default: unset, a CI's own debug switch decides (outputs/streams.ts); false wins over it.
    type: "switch",
    flag: "verbose",
    variable: "SERVICE_VERBOSE",
    flagSets: true,
    defaultText: "off; on in a CI's debug mode",
    help: [
      "one line per HTTP exchange on stderr (never a key, token or body",
      "but an error's excerpt); on by itself in a CI's debug mode",
    ],
    parse: _onOff,
  },
  envFile: {
    // Read by loadConfig, whose message names a file that cannot be read.
    type: "string",
    flag: "env-file",
    valueName: "<file>",
    defaultText: "outside CI, `./.env` if present and not tracked by git",
    help: [
      "read SERVICE_* settings from this file instead of ./.env (set ones",
      "win); in CI, or when git tracks ./.env, only a file named here is used",
    ],
    ..._text("a file path"),
  },
  caCert: {
    type: "string",
    flag: "ca-cert",
    valueName: "<file>",
    variable: "SERVICE_CA_CERT",
    help: ["also trust the certificates in this PEM file"],
    ..._text("a PEM file path"),
  },
  requestTimeoutSeconds: {
    flag: "request-timeout-seconds",
    variable: "SERVICE_REQUEST_TIMEOUT_SECONDS",
    help: ["one request's limit"],
    ..._number({ unit: "seconds", default: 30, max: 3600 }),
  },
  maxPollIntervalSeconds: {
    flag: "max-poll-interval-seconds",
    variable: "SERVICE_MAX_POLL_INTERVAL_SECONDS",
    help: ["longest wait between polls"],
    ..._number({ unit: "seconds", default: 10, max: 300, min: 0.5 }),
  },
  ciNative: {
    flag: "no-ci-native",
    variable: "SERVICE_CI_NATIVE",
    help: [
      "no CI channels (groups, annotations, artifacts); GitHub's step",
      "outputs and summary stay",
    ],
    ..._switch(false, true),
  },
  prComment: {
    flag: "pr-comment",
    variable: "SERVICE_PR_COMMENT",
    inputVia: "variable",
    help: ["keep one comment with the verdicts on the pull/merge request"],
    ..._switch(true, false),
  },
  prCommentKey: {
    type: "string",
    flag: "pr-comment-key",
    valueName: "<name>",
    variable: "SERVICE_PR_COMMENT_KEY",
    help: ["a comment of its own for this job, e.g. a matrix leg"],
    // Trimmed: part of the comment's marker, where the blanks around it would only tell two
    // markers apart.
    ..._text("a name", (text) => text.trim()),
  },
  commitStatus: {
    flag: "commit-status",
    variable: "SERVICE_COMMIT_STATUS",
    inputVia: "variable",
    help: [
      "one commit status per agent on the forge (GitHub check run,",
      "GitLab/Bitbucket status)",
    ],
    ..._switch(true, false),
  },
  action: {
    variable: "SERVICE_CI_ACTION",
    help: ["set by the GitHub action: messages name its inputs, not flags"],
    ..._switch(true, false),
  },
  commitSha: { flag: "commit-sha", ..._METADATA },
  branch: { flag: "branch", ..._METADATA },
  pullRequest: {
    flag: "pull-request",
    ..._METADATA,
    expected: "a pull request number",
    parse: _pullRequest,
  },
  repository: { flag: "repository", ..._METADATA },
  actor: { flag: "actor", ..._METADATA },
  help: { type: "boolean", flag: "help", short: "h", help: ["print this help and exit 0"] },
  version: { type: "boolean", flag: "version", help: ["print the version and exit 0"] },
} as const satisfies Record<string, OptionSpec>;

type OptionKey = keyof typeof OPTIONS;

// The flags the GitHub action has no input for.
const _NO_INPUT = "json dry-run env-file max-poll-interval-seconds no-ci-native help version";

/** The action.yml input that gives the option, if any: its `input`, else its flag's name. */
export function actionInput(option: OptionSpec): string | undefined {
  const flag = option.flag;
  if (option.input !== undefined || flag === undefined) return option.input;
  return _NO_INPUT.split(" ").includes(flag) ? undefined : flag;
}

type ParsedValue<O> = O extends { readonly type: "boolean" } ? boolean
  : O extends { readonly parse: (input: never, name: string) => infer T } ? Exclude<T, undefined>
  : never;

/** Never `undefined` when the option has a default or is required. */
type OptionValue<O> = O extends { readonly default: unknown } | { readonly missing: unknown }
  ? ParsedValue<O>
  : ParsedValue<O> | undefined;

type ConfigKey = Exclude<OptionKey, "help" | "version">;

/** The `Config` type, derived from the table, and where each value came from. */
export type OptionValues = { readonly [K in ConfigKey]: OptionValue<(typeof OPTIONS)[K]> } & {
  readonly sources: { readonly [K in ConfigKey]: string };
};

type FlagValue<O> = O extends { readonly type: "boolean" | "switch" } ? boolean
  : O extends { readonly type: "list" } ? readonly string[]
  : string;

/** Before the environment is consulted; `--no-ci-native` is `ciNative: false`. */
export type Flags = {
  readonly [K in OptionKey as (typeof OPTIONS)[K] extends { readonly flag: string } ? K : never]?:
    FlagValue<(typeof OPTIONS)[K]>;
};

export const OPTION_LIST: readonly OptionSpec[] = Object.values(OPTIONS);

export const OPTION_NAMES: readonly string[] = OPTION_LIST.flatMap((option) => option.flag ?? []);

/** Besides the CI metadata's. */
export const CONFIG_ENV_VARIABLES: readonly string[] = OPTION_LIST.flatMap((option) =>
  option.variable ?? []
);

/**
 * The variables a `.env` file may give: service-ci's own `SERVICE_*` settings. Never a CI
 * runner's variables, a forge's address or token, the Bitbucket proxy, a CA or the action's
 * marker: a file may be the repository under test's, and those decide where a secret goes.
 */
export const ENV_FILE_VARIABLES: readonly string[] = CONFIG_ENV_VARIABLES.filter((name) =>
  name.startsWith("SERVICE_") &&
  ![OPTIONS.gitlabToken, OPTIONS.bitbucketProxy, OPTIONS.caCert, OPTIONS.action].some((option) =>
    option.variable === name
  )
);

/**
 * The misspellings of `variable` a user is likely to set instead (`SERVICE_APIKEY`,
 * `SERVICE_API_TOKEN`, `SERVICE_URL`, …), all within `SERVICE_*`: the only names the permission
 * set lets the program read besides the CIs'. Only their names are ever printed.
 */
export function nearMissNames(variable: string): string[] {
  const rest = variable.replace(/^SERVICE_/, "");
  const words = rest.split("_");
  const names = new Set<string>();
  for (let i = 1; i < words.length; i++) {
    names.add(`SERVICE_${words.slice(0, i).join("_")}${words.slice(i).join("_")}`);
  }
  names.add(`${variable}S`);
  if (rest.endsWith("_ID")) {
    names.add(`SERVICE_${rest.slice(0, -3)}`).add(`SERVICE_${rest.slice(0, -3)}S`);
  }
  if (rest.endsWith("_KEY")) {
    names.add(`SERVICE_${rest.slice(0, -4)}_TOKEN`).add("SERVICE_TOKEN").add("SERVICE_KEY");
  }
  if (rest.endsWith("_URL")) names.add("SERVICE_URL");
  names.delete(variable);
  return [...names].filter((name) => !CONFIG_ENV_VARIABLES.includes(name));
}

/**
 * A message as the GitHub action's user reads it: each flag or variable the action sets from one
 * of its inputs ({@linkcode OptionSpec.inputVia}) named as that input, `timeout-minutes:`.
 */
export function inActionTerms(message: string): string {
  let text = message;
  for (const option of OPTION_LIST) {
    const input = actionInput(option);
    const name = option.inputVia === "variable" ? option.variable : `--${option.flag}`;
    if (input === undefined || name === undefined) continue;
    text = text.replace(
      new RegExp(`(?<![\\w-])${name.replaceAll("-", "\\-")}(?![\\w-])`, "g"),
      `${input}:`,
    );
  }
  return text;
}

/** The values of the secret variables set in `env`, as given and trimmed: what every output masks. */
export function secretValues(env: (name: string) => string | undefined): string[] {
  return OPTION_LIST.flatMap((option) => {
    const value = option.secret === true ? env(option.variable!) : undefined;
    if (value === undefined || value.trim() === "") return [];
    return value === value.trim() ? [value] : [value, value.trim()];
  });
}

/** As the user types it: `--flag`, or its variable when it has no flag. */
export function optionName(option: Pick<OptionSpec, "flag" | "variable">): string {
  return option.flag === undefined ? option.variable ?? "" : `--${option.flag}`;
}
