/** Flag, then environment, then `.env`, then default → one immutable {@linkcode Config}. */

import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import {
  type Flags,
  nearMissNames,
  OPTION_NAMES,
  optionName,
  OPTIONS,
  type OptionSpec,
  type OptionValues,
} from "./options.ts";
import { UsageError } from "./errors.ts";
import { parseArgTokens } from "./parse_args.ts";
import { QUOTE_MAX, quoteValue } from "../text/quote.ts";

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

export type Invocation =
  | { readonly kind: "help" | "version" }
  | { readonly kind: "run"; readonly flags: Flags };

// The parser's view: the table spells a switch such as --no-ci-native as a flag alone.
const BY_FLAG: ReadonlyMap<string, OptionSpec & { readonly key: string }> = new Map(
  Object.entries(OPTIONS as Record<string, OptionSpec>).flatMap(([key, option]) =>
    option.flag === undefined ? [] : [[option.flag, { ...option, key }]]
  ),
);

// --api-key, --api_key, --apiKey, --apikey, --service-api-key, alone or with =value.
const API_KEY_FLAG = /^--?(?:service[-_]?)?api[-_]?key(?:=|$)/i;
const API_KEY_REFUSED =
  `--api-key is not an option: command lines show in process lists and CI logs, so the key is read only from ${OPTIONS.apiKey.variable}; set it from your CI's secret store (GitHub: secrets, GitLab: masked CI/CD variable, Jenkins: withCredentials, Azure Pipelines: secret variable mapped with env:) or a .env file`;
const HELP = `run \`service-ci ${optionName(OPTIONS.help)}\` for the valid options`;

/**
 * An option that takes a value never takes another option as it (`--junit --help` is refused),
 * so `--help` and `--version` win only where they stand as options of their own. Values are
 * checked later, by {@linkcode resolveConfig}.
 *
 * @throws {UsageError} For any command line it cannot take.
 */
export function parseCommandLine(args: readonly string[]): Invocation {
  // Before the tokenizer: the key given after the flag must not reach any message.
  if (args.some((arg) => API_KEY_FLAG.test(arg))) throw new UsageError(API_KEY_REFUSED);
  // The first of --help and --version wins over every other refusal but one: a value the
  // tokenizer took that is an option (`--pr-comment-key --version` with an empty variable
  // before it must never print the version and exit 0).
  let asked: "help" | "version" | undefined;
  let refusal: UsageError | undefined;
  const flags: Record<string, string | boolean | string[]> = {};
  for (const token of parseArgTokens(args, Object.fromEntries(BY_FLAG))) {
    if (token.kind === "option-terminator") continue;
    if (token.kind === "positional") {
      refusal ??= new UsageError(
        `unexpected argument ${quoteValue(token.value)}: service-ci takes only options; ${HELP}`,
      );
      continue;
    }
    const option = BY_FLAG.get(token.name);
    if (option === undefined) {
      refusal ??= new UsageError(_unknownOption(token.rawName));
      continue;
    }
    const { key } = option;
    const name = optionName(option);
    const expected = option.expected ?? "a non-empty value";
    if (token.inlineValue === false && token.value!.length > 1 && token.value!.startsWith("-")) {
      // The value as it would be written after `=`; one too long to quote whole is elided.
      const written = token.value!.length <= QUOTE_MAX
        ? JSON.stringify(token.value).slice(1, -1)
        : "…";
      const next = quoteValue(token.value!);
      throw new UsageError(
        `${name} needs a value (${expected}), but the next argument ${next} looks like an option; write ${name}=${written} if it is the value, or check that the variable meant to give ${name} its value is set`,
      );
    }
    if (key === "help" || key === "version") asked ??= key;
    if (asked !== undefined || refusal !== undefined) continue;
    const earlier = flags[key];
    if (option.type === "boolean" || option.type === "switch") {
      if (token.value === undefined) flags[key] = option.flagSets ?? true;
      else refusal = new UsageError(`${name} takes no value; ${HELP}`);
    } else if (token.value === undefined) {
      refusal = new UsageError(`${name} needs a value (${expected})`);
    } else if (option.type === "list") {
      flags[key] = Array.isArray(earlier) ? [...earlier, token.value] : [token.value];
    } else if (typeof earlier === "string") {
      const both = `${quoteValue(earlier)} and ${quoteValue(token.value)}`;
      refusal = new UsageError(`${name} is given twice (${both}); give it once`);
    } else {
      flags[key] = token.value;
    }
  }
  if (asked !== undefined) return { kind: asked };
  if (refusal !== undefined) throw refusal;
  return { kind: "run", flags: flags as Flags };
}

// An unknown option, with the valid one nearest to it by edit distance over the names without
// dashes and hyphens (so a hyphen too many or too few still finds it) when it is near enough.
function _unknownOption(option: string): string {
  if (option.length > QUOTE_MAX) return `unknown option ${quoteValue(option)}; ${HELP}`;
  const name = option.replace(/^-+/, "");
  const squash = (text: string) => text.toLowerCase().replace(/[-_]/g, "");
  const distances = OPTION_NAMES.map((each) => _editDistance(squash(name), squash(each)));
  const best = Math.min(...distances);
  const meant = OPTION_NAMES[distances.indexOf(best)];
  if (best > Math.max(1, Math.floor(name.length / 4))) return `unknown option ${option}; ${HELP}`;
  return `unknown option ${option}; did you mean --${meant}? (${HELP})`;
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
    `${set.join(" and ")} ${set.length === 1 ? "is" : "are"} set: did you mean ${variable}?`,
  ];
  if (options.envFileNote !== undefined) notes.push(options.envFileNote);
  return notes.length === 0 ? "" : ` (${notes.join("; ")})`;
}
