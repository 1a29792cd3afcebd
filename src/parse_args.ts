/**
 * The strict subset of `node:util`'s `parseArgs` that the command line uses, with the same
 * values, error codes and messages. It exists because importing anything from `node:` makes
 * Deno load its Node compatibility layer, which took about a fifth of the run of an immediately
 * finished gate (docs/performance.md); `tests/parse_args_test.ts` compares it with `node:util`.
 */

/** One option: its type, whether it may repeat, and its one-letter alias. */
export interface ParseArgsOption {
  readonly type: "string" | "boolean";
  readonly multiple?: boolean;
  readonly short?: string;
}

/** What {@linkcode parseArgs} parses: only strict parsing without positionals is supported. */
export interface ParseArgsConfig {
  readonly args: readonly string[];
  readonly options: Readonly<Record<string, ParseArgsOption>>;
  readonly strict: true;
  readonly allowPositionals: false;
}

/** The parsed values, keyed by long option name (a null-prototype object, as Node's). */
export type ParsedValues = Record<string, string | boolean | (string | boolean)[]>;

/** The error `parseArgs` throws, a `TypeError` carrying Node's `code`. */
export class ParseArgsError extends TypeError {
  override name = "TypeError";
  /** Node's error code, e.g. `ERR_PARSE_ARGS_UNKNOWN_OPTION`. */
  readonly code: string;

  /** Makes the error with Node's `code` and message. */
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

interface _Token {
  readonly name: string;
  readonly rawName: string;
  readonly value: string | undefined;
  readonly inlineValue: boolean;
}

/**
 * Parses `args` as `node:util`'s `parseArgs({ args, options, strict: true,
 * allowPositionals: false })` does.
 *
 * @throws {ParseArgsError} with Node's code for an unknown option, a missing or unexpected
 * value, a value that looks like an option, or any positional argument.
 * @example
 * ```ts
 * const { values } = parseArgs({
 *   args: ["--agent", "a", "--agent=b", "--json"],
 *   options: { agent: { type: "string", multiple: true }, json: { type: "boolean" } },
 *   strict: true,
 *   allowPositionals: false,
 * });
 * // values: { agent: ["a", "b"], json: true }
 * ```
 */
export function parseArgs(config: ParseArgsConfig): { values: ParsedValues } {
  const { options } = config;
  const values = Object.create(null) as ParsedValues;
  for (const token of _tokens(config.args, options)) {
    if (typeof token === "string") {
      throw new ParseArgsError(
        "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL",
        `Unexpected argument '${token}'. This command does not take positional arguments`,
      );
    }
    _checkUsage(token, options);
    const value = token.value ?? true;
    if (token.name === "__proto__") continue;
    if (options[token.name]?.multiple) {
      const list = values[token.name];
      if (Array.isArray(list)) list.push(value);
      else values[token.name] = [value];
    } else {
      values[token.name] = value;
    }
  }
  return { values };
}

// Node's tokenizer: options as tokens, positionals (anything after `--` included) as strings.
function _tokens(
  args: readonly string[],
  options: ParseArgsConfig["options"],
): Array<_Token | string> {
  const tokens: Array<_Token | string> = [];
  const remaining = [...args];
  const typeOf = (name: string) => Object.hasOwn(options, name) ? options[name]!.type : undefined;
  while (remaining.length > 0) {
    const arg = remaining.shift()!;
    const next = remaining[0];
    if (arg === "--") {
      tokens.push(...remaining);
      break;
    }
    const isShort = arg.length >= 2 && arg[0] === "-" && arg[1] !== "-";
    if (isShort && arg.length === 2) {
      const name = _longName(arg[1]!, options);
      const takes = typeOf(name) === "string" && next !== undefined;
      tokens.push({
        name,
        rawName: arg,
        value: takes ? remaining.shift() : undefined,
        inlineValue: false,
      });
      continue;
    }
    if (isShort) {
      const name = _longName(arg[1]!, options);
      if (typeOf(name) === "string") {
        tokens.push({ name, rawName: `-${arg[1]}`, value: arg.slice(2), inlineValue: true });
        continue;
      }
      // A group such as -abc reads as -a -b -c; a string option inside it takes the rest.
      const expanded: string[] = [];
      for (let index = 1; index < arg.length; index++) {
        const letter = arg[index]!;
        if (typeOf(_longName(letter, options)) !== "string" || index === arg.length - 1) {
          expanded.push(`-${letter}`);
        } else {
          expanded.push(`-${arg.slice(index)}`);
          break;
        }
      }
      remaining.unshift(...expanded);
      continue;
    }
    if (arg.length > 2 && arg.startsWith("--")) {
      const equals = arg.indexOf("=", 3);
      if (equals < 0) {
        const name = arg.slice(2);
        const takes = typeOf(name) === "string" && next !== undefined;
        tokens.push({
          name,
          rawName: arg,
          value: takes ? remaining.shift() : undefined,
          inlineValue: false,
        });
      } else {
        const name = arg.slice(2, equals);
        tokens.push({
          name,
          rawName: `--${name}`,
          value: arg.slice(equals + 1),
          inlineValue: true,
        });
      }
      continue;
    }
    tokens.push(arg);
  }
  return tokens;
}

function _longName(letter: string, options: ParseArgsConfig["options"]): string {
  return Object.keys(options).find((name) => options[name]!.short === letter) ?? letter;
}

function _checkUsage(token: _Token, options: ParseArgsConfig["options"]): void {
  if (!Object.hasOwn(options, token.name)) {
    throw new ParseArgsError("ERR_PARSE_ARGS_UNKNOWN_OPTION", `Unknown option '${token.rawName}'`);
  }
  const option = options[token.name]!;
  const names = `${option.short ? `-${option.short}, ` : ""}--${token.name}`;
  if (option.type === "string" && token.value === undefined) {
    throw new ParseArgsError(
      "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
      `Option '${names} <value>' argument missing`,
    );
  }
  if (option.type === "boolean" && token.value !== undefined) {
    throw new ParseArgsError(
      "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
      `Option '${names}' does not take an argument`,
    );
  }
  const value = token.value;
  if (!token.inlineValue && value !== undefined && value.length > 1 && value[0] === "-") {
    const example = token.rawName.startsWith("--")
      ? `'${token.rawName}=-XYZ'`
      : `'--${token.name}=-XYZ' or '${token.rawName}-XYZ'`;
    throw new ParseArgsError(
      "ERR_PARSE_ARGS_INVALID_OPTION_VALUE",
      `Option '${token.rawName}' argument is ambiguous.\nDid you forget to specify the option ` +
        `argument for '${token.rawName}'?\nTo specify an option argument starting with a dash ` +
        `use ${example}.`,
    );
  }
}
