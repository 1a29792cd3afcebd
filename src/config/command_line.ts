/**
 * The command line: the tokenizer of `node:util`'s `parseArgs` (`tokens: true`, `strict: false`),
 * then each token judged against the option table. Importing anything from `node:` loads Deno's
 * Node compatibility layer, about a fifth of the run of an immediately finished gate
 * (docs/performance.md); the tests compare the tokenizer with `node:util`'s.
 */

import { type Flags, OPTION_NAMES, optionName, OPTIONS, type OptionSpec } from "./options.ts";
import { UsageError } from "./errors.ts";
import { QUOTE_MAX, quoteValue } from "../text/quote.ts";

type TokenOption = Pick<OptionSpec, "type" | "short">;

/**
 * As Node's, without `index`. An option's `value` followed it (`inlineValue: false`) or its `=`
 * (`inlineValue: true`); both are `undefined` when it has none.
 */
export type ArgToken =
  | {
    readonly kind: "option";
    readonly name: string;
    readonly rawName: string;
    readonly value: string | undefined;
    readonly inlineValue: boolean | undefined;
  }
  | { readonly kind: "positional"; readonly value: string }
  | { readonly kind: "option-terminator" };

/** A `string` option takes the next argument whatever it looks like; an unknown option none. */
export function parseArgTokens(
  args: readonly string[],
  options: Readonly<Record<string, TokenOption>>,
): ArgToken[] {
  const tokens: ArgToken[] = [];
  const remaining = [...args];
  const takesValue = (name: string) =>
    Object.hasOwn(options, name) && !["boolean", "switch"].includes(options[name]!.type);
  const option = (name: string, rawName: string, value?: string, inline?: boolean): ArgToken => ({
    kind: "option",
    name,
    rawName,
    value,
    inlineValue: value === undefined ? undefined : inline,
  });
  const alone = (name: string, rawName: string) =>
    option(name, rawName, takesValue(name) ? remaining.shift() : undefined, false);
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    if (arg === "--") {
      tokens.push({ kind: "option-terminator" });
      for (const value of remaining) tokens.push({ kind: "positional", value });
      break;
    }
    if (arg.length >= 2 && arg[0] === "-" && arg[1] !== "-") {
      const name = _longName(arg[1]!, options);
      if (arg.length === 2) {
        tokens.push(alone(name, arg));
      } else if (takesValue(name)) {
        tokens.push(option(name, `-${arg[1]}`, arg.slice(2), true));
      } else {
        // A group such as -abc reads as -a -b -c; an option that takes a value takes the rest.
        const letters = arg.slice(1).split("");
        const taker = letters.findIndex((letter, index) =>
          index < letters.length - 1 && takesValue(_longName(letter, options))
        );
        if (taker >= 0) letters.splice(taker, Infinity, arg.slice(taker + 1));
        remaining.unshift(...letters.map((letter) => `-${letter}`));
      }
      continue;
    }
    if (arg.length > 2 && arg.startsWith("--")) {
      const equals = arg.indexOf("=", 3);
      if (equals < 0) {
        tokens.push(alone(arg.slice(2), arg));
      } else {
        const name = arg.slice(2, equals);
        tokens.push(option(name, `--${name}`, arg.slice(equals + 1), true));
      }
      continue;
    }
    tokens.push({ kind: "positional", value: arg });
  }
  return tokens;
}

function _longName(letter: string, options: Readonly<Record<string, TokenOption>>): string {
  return Object.keys(options).find((name) => options[name]!.short === letter) ?? letter;
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
