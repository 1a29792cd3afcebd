/**
 * The tokenizer of `node:util`'s `parseArgs` (`tokens: true`, `strict: false`), nothing judged.
 * Importing anything from `node:` loads Deno's Node compatibility layer, about a fifth of the run
 * of an immediately finished gate (docs/performance.md); the tests compare it with `node:util`.
 */

import type { OptionSpec } from "./options.ts";

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
