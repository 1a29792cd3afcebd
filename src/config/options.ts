/**
 * Every option, declared once: flag, type, default, variable, action input, `--help` line, check.
 * `tests/config/options_test.ts` checks docs/options.md, README.md and action.yml against it.
 */

import {
  agentsValue,
  apiKeyValue,
  FORGE_TOKEN,
  forgeAddress,
  numberValue,
  onOff,
  parseBaseUrl,
  pullRequestValue,
  refusal,
  textValue,
} from "./values.ts";

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

// The five metadata overrides share one help entry and one row of docs/options.md.
const _METADATA = {
  type: "string",
  valueName: "<value>",
  defaultText: "detected",
  help: ["override the CI metadata detected from the environment"],
  ...textValue("a non-empty value"),
} as const;

// A switch of its own: the flag turns it on, the variable either way; off when neither is given.
const _SWITCH = { type: "switch", flagSets: true, default: false, parse: onOff } as const;

function _flagAlone(flag: string, ...help: string[]) {
  return { type: "boolean", flag, default: false, help } as const;
}

// Named by --base-url's refusal of an address with credentials.
const API_KEY_VARIABLE = "SERVICE_API_KEY";

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
    parse: agentsValue,
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
    parse: (text: string, name: string): URL => parseBaseUrl(text, name, API_KEY_VARIABLE),
  },
  timeoutMinutes: {
    flag: "timeout-minutes",
    variable: "SERVICE_TIMEOUT_MINUTES",
    help: ["bounds the whole wait; decimals allowed"],
    ...numberValue({ unit: "minutes", default: 30, max: 7 * 24 * 60 }),
  },
  apiKey: {
    type: "string",
    variable: API_KEY_VARIABLE,
    input: "api-key",
    inputVia: "variable",
    defaultText: "required",
    secret: true,
    help: [],
    missing: (option) =>
      `${option.variable} is not set: give the API key (created with CI access under Settings → API Keys) in the environment or in a .env file`,
    parse: apiKeyValue,
  },
  githubToken: {
    variable: "GITHUB_TOKEN",
    help: ["GitHub's token for --pr-comment and --commit-status"],
    ...FORGE_TOKEN,
  },
  gitlabToken: {
    variable: "SERVICE_GITLAB_TOKEN",
    help: ["a GitLab project access token for --pr-comment and --commit-status"],
    ...FORGE_TOKEN,
  },
  githubApiUrl: {
    variable: "GITHUB_API_URL",
    defaultText: "`https://api.github.com`",
    help: ["GitHub's API address for --pr-comment and --commit-status"],
    ...forgeAddress("the token goes in GITHUB_TOKEN"),
  },
  gitlabApiUrl: {
    variable: "CI_API_V4_URL",
    defaultText: "set by GitLab CI",
    help: ["GitLab's API address for --pr-comment and --commit-status"],
    ...forgeAddress("the token goes in SERVICE_GITLAB_TOKEN"),
  },
  bitbucketProxy: {
    variable: "SERVICE_BITBUCKET_PROXY",
    defaultText: "`http://localhost:29418`",
    help: ["the Bitbucket Pipelines proxy that signs Bitbucket's requests"],
    ...forgeAddress("Bitbucket's pipeline proxy signs each request itself"),
  },
  json: _flagAlone("json", "print one JSON document with every agent's outcome on stdout"),
  junit: {
    type: "string",
    flag: "junit",
    valueName: "<file>",
    help: ["write a JUnit XML report, one test case per agent"],
    ...textValue("a file path"),
  },
  noWait: _flagAlone("no-wait", "trigger the runs, print their ids, exit 0 without waiting"),
  runId: {
    type: "string",
    flag: "run-id",
    valueName: "<id>",
    help: ["attach to an existing run of the one --agent and wait for it"],
    ...textValue("a run id", (text, name) => {
      if (text === "." || text === "..") throw refusal(name, "be a run id", text);
      return text;
    }),
  },
  warnOnly: _flagAlone(
    "warn-only",
    "report a failed gate but exit 0 (unchecked and timeout keep",
    "their codes)",
  ),
  dryRun: _flagAlone("dry-run", "print the request that would be sent (key masked), send nothing"),
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
    parse: onOff,
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
    ...textValue("a file path"),
  },
  caCert: {
    type: "string",
    flag: "ca-cert",
    valueName: "<file>",
    variable: "SERVICE_CA_CERT",
    help: ["also trust the certificates in this PEM file"],
    ...textValue("a PEM file path"),
  },
  requestTimeoutSeconds: {
    flag: "request-timeout-seconds",
    variable: "SERVICE_REQUEST_TIMEOUT_SECONDS",
    help: ["one request's limit"],
    ...numberValue({ unit: "seconds", default: 30, max: 3600 }),
  },
  maxPollIntervalSeconds: {
    flag: "max-poll-interval-seconds",
    variable: "SERVICE_MAX_POLL_INTERVAL_SECONDS",
    help: ["longest wait between polls"],
    ...numberValue({ unit: "seconds", default: 10, max: 300, min: 0.5 }),
  },
  ciNative: {
    flag: "no-ci-native",
    variable: "SERVICE_CI_NATIVE",
    help: [
      "no CI channels (groups, annotations, artifacts); GitHub's step",
      "outputs and summary stay",
    ],
    ..._SWITCH,
    flagSets: false,
    default: true,
  },
  prComment: {
    flag: "pr-comment",
    variable: "SERVICE_PR_COMMENT",
    inputVia: "variable",
    help: ["keep one comment with the verdicts on the pull/merge request"],
    ..._SWITCH,
  },
  prCommentKey: {
    type: "string",
    flag: "pr-comment-key",
    valueName: "<name>",
    variable: "SERVICE_PR_COMMENT_KEY",
    help: ["a comment of its own for this job, e.g. a matrix leg"],
    // Trimmed: part of the comment's marker, where blanks would only tell two markers apart.
    ...textValue("a name", (text) => text.trim()),
  },
  commitStatus: {
    flag: "commit-status",
    variable: "SERVICE_COMMIT_STATUS",
    inputVia: "variable",
    help: [
      "one commit status per agent on the forge (GitHub check run,",
      "GitLab/Bitbucket status)",
    ],
    ..._SWITCH,
  },
  action: {
    variable: "SERVICE_CI_ACTION",
    help: ["set by the GitHub action: messages name its inputs, not flags"],
    ..._SWITCH,
  },
  commitSha: { flag: "commit-sha", ..._METADATA },
  branch: { flag: "branch", ..._METADATA },
  pullRequest: {
    flag: "pull-request",
    ..._METADATA,
    expected: "a pull request number",
    parse: pullRequestValue,
  },
  repository: { flag: "repository", ..._METADATA },
  actor: { flag: "actor", ..._METADATA },
  help: { type: "boolean", flag: "help", short: "h", help: ["print this help and exit 0"] },
  version: { type: "boolean", flag: "version", help: ["print the version and exit 0"] },
} as const satisfies Record<string, OptionSpec>;

type OptionKey = keyof typeof OPTIONS;

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
 * Misspellings of `variable` a user may set instead (`SERVICE_APIKEY`, `SERVICE_URL`, …), all in
 * `SERVICE_*`: the only names the permissions let us read besides the CIs'. Only names are printed.
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

/** As the user types it: `--flag`, or its variable when it has no flag. */
export function optionName(option: Pick<OptionSpec, "flag" | "variable">): string {
  return option.flag === undefined ? option.variable ?? "" : `--${option.flag}`;
}
