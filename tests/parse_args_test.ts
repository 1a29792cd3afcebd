import assert from "node:assert/strict";
import { parseArgs as nodeParseArgs } from "node:util";
import fc from "npm:fast-check@3.23.2";
import { parseArgs, type ParseArgsOption } from "../src/parse_args.ts";

// Every shape of option the algorithm treats differently: repeated string, string, boolean, and
// one-letter aliases of a boolean and of a string (config.ts uses the first three and `-h`).
const OPTIONS: Record<string, ParseArgsOption> = {
  agent: { type: "string", multiple: true },
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

function _outcome(parse: () => { values: unknown }): unknown {
  try {
    return { values: { ...parse().values as object } };
  } catch (error) {
    const { code, message, name } = error as { code: string; message: string; name: string };
    return { code, message, name };
  }
}

Deno.test("parseArgs() gives the same values and errors as node:util's parseArgs", () => {
  fc.assert(
    fc.property(
      fc.array(fc.oneof(fc.constantFrom(...PIECES), fc.string()), { maxLength: 6 }),
      (args) => {
        const config = { args, options: OPTIONS, strict: true, allowPositionals: false } as const;
        assert.deepEqual(_outcome(() => parseArgs(config)), _outcome(() => nodeParseArgs(config)));
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("parseArgs() collects a repeated option in order and reads =, short and grouped forms", () => {
  const { values } = parseArgs({
    args: ["--agent", "a", "--agent=b", "-hf", "-", "--json"],
    options: OPTIONS,
    strict: true,
    allowPositionals: false,
  });
  assert.deepEqual({ ...values }, { agent: ["a", "b"], help: true, file: "-", json: true });
});

Deno.test("parseArgs() refuses a positional argument with node's code", () => {
  assert.throws(
    () => parseArgs({ args: ["--", "x"], options: OPTIONS, strict: true, allowPositionals: false }),
    { code: "ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL", name: "TypeError" },
  );
});
