import assert from "node:assert/strict";
import { parseArgs as nodeParseArgs } from "node:util";
import fc from "npm:fast-check@3.23.2";
import { parseArgTokens } from "../../src/config/parse_args.ts";

// Every shape of option the tokenizer treats differently: string, boolean, and one-letter
// aliases of a boolean and of a string (config.ts uses the first two and `-h`).
const OPTIONS: Record<string, { type: "string" | "boolean"; short?: string }> = {
  agent: { type: "string" },
  "base-url": { type: "string" },
  json: { type: "boolean" },
  "no-wait": { type: "boolean" },
  help: { type: "boolean", short: "h" },
  file: { type: "string", short: "f" },
};

const PIECES = [
  "--agent",
  "--agent=",
  "--agent=a",
  "--agent=-x",
  "--base-url",
  "--base-url=http://x",
  "--json",
  "--json=",
  "--json=1",
  "--no-wait",
  "--no-json",
  "--unknown",
  "--unknown=1",
  "--=",
  "--=x",
  "--a=b=c",
  "-h",
  "-hh",
  "-hf",
  "-fh",
  "-fvalue",
  "-f",
  "-x",
  "-hx",
  "-xh",
  "-",
  "--",
  "x",
  "-1",
  "value",
  "",
  "--__proto__",
  "--constructor",
  "--toString",
  "=",
  "--agent=--json",
];

// Node's tokens without their index, and with an absent value spelled as ours (undefined).
function _nodeTokens(args: string[]): unknown[] {
  const { tokens } = nodeParseArgs({
    args,
    options: OPTIONS,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  return tokens.map((token) => {
    if (token.kind === "option-terminator") return { kind: token.kind };
    if (token.kind === "positional") return { kind: token.kind, value: token.value };
    const { kind, name, rawName, value, inlineValue } = token;
    return { kind, name, rawName, value, inlineValue };
  });
}

Deno.test("parseArgTokens() gives the same tokens as node:util's parseArgs", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string()), { maxLength: 6 }),
      (args) => {
        assert.deepEqual(parseArgTokens(args, OPTIONS), _nodeTokens(args));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("parseArgTokens() reads =, short and grouped forms, and takes any next argument as a value", () => {
  assert.deepEqual(parseArgTokens(["--agent", "a", "--agent=b", "-hf", "-", "--json"], OPTIONS), [
    { kind: "option", name: "agent", rawName: "--agent", value: "a", inlineValue: false },
    { kind: "option", name: "agent", rawName: "--agent", value: "b", inlineValue: true },
    { kind: "option", name: "help", rawName: "-h", value: undefined, inlineValue: undefined },
    { kind: "option", name: "file", rawName: "-f", value: "-", inlineValue: false },
    { kind: "option", name: "json", rawName: "--json", value: undefined, inlineValue: undefined },
  ]);
  assert.deepEqual(parseArgTokens(["--agent", "--json"], OPTIONS), [
    { kind: "option", name: "agent", rawName: "--agent", value: "--json", inlineValue: false },
  ]);
});

Deno.test("parseArgTokens() leaves an unknown option without a value and a positional as it is", () => {
  assert.deepEqual(parseArgTokens(["--agnet", "x", "--", "--json"], OPTIONS), [
    { kind: "option", name: "agnet", rawName: "--agnet", value: undefined, inlineValue: undefined },
    { kind: "positional", value: "x" },
    { kind: "option-terminator" },
    { kind: "positional", value: "--json" },
  ]);
});
