import assert from "node:assert/strict";
import { parseArgs as nodeParseArgs } from "node:util";
import fc from "npm:fast-check@3.23.2";
import { parseArgTokens, parseCommandLine } from "../../src/config/command_line.ts";
import { UsageError } from "../../src/config/errors.ts";

// Every shape of option the tokenizer treats differently: string, boolean, and one-letter
// aliases of a boolean and of a string (the option table uses the first two and `-h`).
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

const A = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const B = "1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21";
const PASSWORD = "Pa55w0rd-s3cret";

// parseCommandLine(args) refuses with a UsageError whose message matches every one of `messages`;
// the error is returned for further checks.
function commandLineError(args: string[], ...messages: RegExp[]): UsageError {
  let refused: UsageError | undefined;
  assert.throws(() => parseCommandLine(args), (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    for (const message of messages) assert.match(error.message, message);
    refused = error;
    return true;
  }, args.join(" "));
  return refused!;
}

Deno.test("parseCommandLine() lets --help and --version win over everything else", () => {
  assert.deepEqual(parseCommandLine(["--agent", "x", "--help"]), { kind: "help" });
  assert.deepEqual(parseCommandLine(["-h"]), { kind: "help" });
  assert.deepEqual(parseCommandLine(["--bogus", "--version"]), { kind: "version" });
});

Deno.test("parseCommandLine() names an unknown option, a missing value and a stray argument", () => {
  const cases: Array<[string[], RegExp]> = [
    [["--agnet", A], /^unknown option --agnet; run `service-ci --help`/],
    [["--agent"], /^--agent needs a value \(an agent UUID\)/],
    [["--json=yes"], /^--json takes no value/],
    [[A], /^unexpected argument "0b0c4a5e-.*": service-ci takes only options/],
  ];
  for (const [args, message] of cases) commandLineError(args, message);
});

Deno.test("parseCommandLine() judges the tokens itself: a value that looks like an option, a short alias, --", () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ["--agent", "--json"],
      /^--agent needs a value \(an agent UUID\), but the next argument "--json" looks like an option; write --agent=--json if it is the value, or check that the variable meant to give --agent its value is set$/,
    ],
    [
      ["--timeout-minutes", "-5"],
      /^--timeout-minutes needs a value \(a positive number of minutes\), but the next argument "-5"/,
    ],
    [["--no-wait=1"], /^--no-wait takes no value; run `service-ci --help`/],
    [["--no-ci-native=false"], /^--no-ci-native takes no value;/],
    [["-x"], /^unknown option -x; run `service-ci --help` for the valid options$/],
    [["--", "--json"], /^unexpected argument "--json": service-ci takes only options;/],
    [["--__proto__"], /^unknown option --__proto__;/],
    [
      ["--time-out-minutes=5"],
      /^unknown option --time-out-minutes; did you mean --timeout-minutes\?/,
    ],
  ];
  for (const [args, message] of cases) commandLineError(args, message);
  assert.deepEqual(parseCommandLine(["-hx"]), { kind: "help" });
  assert.deepEqual(parseCommandLine(["--json", "--version=1"]), { kind: "version" });
  assert.deepEqual(parseCommandLine(["--"]), { kind: "run", flags: {} });
});

Deno.test("parseCommandLine() keys the flags as the table: a list in order, the last value, a switch's value", () => {
  assert.deepEqual(
    parseCommandLine([
      "--agent",
      A,
      `--agent=${B}`,
      "--timeout-minutes",
      "6",
      "--no-ci-native",
      "--pr-comment",
      "--run-id=-r1",
    ]),
    {
      kind: "run",
      flags: {
        agents: [A, B],
        timeoutMinutes: "6",
        ciNative: false,
        prComment: true,
        runId: "-r1",
      },
    },
  );
});

Deno.test("parseCommandLine() never takes --help, --version or any option as a value: exit 2 naming both", () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ["--pr-comment-key", "--version"],
      /^--pr-comment-key needs a value \(a name\), but the next argument "--version" looks like an option/,
    ],
    [
      ["--agent", A, "--junit", "--help"],
      /^--junit needs a value \(a file path\), but the next argument "--help"/,
    ],
    [["--junit", "-h"], /^--junit needs a value \(a file path\), but the next argument "-h"/],
    [["--base-url", "--agent", A], /^--base-url needs a value .* "--agent" looks like an option/],
    [
      ["--help", "--run-id", "--version"],
      /^--run-id needs a value \(a run id\), but .*"--version"/,
    ],
  ];
  for (const [args, message] of cases) commandLineError(args, message);
  // A huge value that looks like an option is quoted cut, and the fix does not repeat it.
  const huge = `--${"x".repeat(1000)}`;
  assert.throws(() => parseCommandLine(["--junit", huge]), (error: unknown) => {
    assert.ok(error instanceof UsageError);
    assert.match(
      error.message,
      /"--x{197}…" \(1002 characters\) looks like an option; write --junit=… if/,
    );
    return true;
  });
  // Written as the value on purpose, it is the value.
  assert.deepEqual(parseCommandLine(["--pr-comment-key=--version"]), {
    kind: "run",
    flags: { prCommentKey: "--version" },
  });
});

Deno.test("parseCommandLine() refuses every repeated single-value option, naming both values", () => {
  const cases: Array<[string[], RegExp]> = [
    [
      ["--base-url", "https://a.example", "--base-url=https://b.example"],
      /^--base-url is given twice \("https:\/\/a\.example" and "https:\/\/b\.example"\); give it once$/,
    ],
    [
      ["--timeout-minutes=5", "--timeout-minutes", "6"],
      /^--timeout-minutes is given twice \("5" and "6"\)/,
    ],
    [["--junit", "a.xml", "--junit", "a.xml"], /^--junit is given twice/],
  ];
  for (const [args, message] of cases) commandLineError(args, message);
  // A list repeats; a switch given twice says the same thing twice.
  assert.deepEqual(parseCommandLine(["--agent", A, "--agent", B, "--json", "--json"]), {
    kind: "run",
    flags: { agents: [A, B], json: true },
  });
});

Deno.test("parseCommandLine() refuses --api-key in any spelling, saying why and how to set the key", () => {
  for (
    const args of [
      ["--api-key", "sk_live_secret"],
      ["--agent", A, "--api-key=sk_live_secret"],
      ["--api_key", "sk_live_secret"],
      ["--apiKey=sk_live_secret"],
      ["--service-api-key", "sk_live_secret"],
      ["--agent", "--api-key", "sk_live_secret"],
    ]
  ) {
    const { message } = commandLineError(
      args,
      /^--api-key is not an option: command lines show in process lists/,
      /read only from SERVICE_API_KEY/,
      /GitHub: secrets, GitLab: masked CI\/CD variable, Jenkins:/,
    );
    assert.ok(!message.includes("sk_live_secret"), message);
    assert.ok(!message.includes("\n"), "one line");
  }
  assert.throws(() => parseCommandLine(["--key", "x"]), /: unknown option --key;/);
});

Deno.test("parseCommandLine() never quotes the credentials of an address given as any value", () => {
  const address = `https://user:${PASSWORD}@service.example`;
  for (
    const args of [
      ["--base-url", "https://a.example", "--base-url", address],
      [address],
    ]
  ) {
    const { message } = commandLineError(args, /https:\/\/\*\*\*@service\.example/);
    assert.ok(!message.includes(PASSWORD), message);
  }
});

Deno.test("parseCommandLine() quotes an unknown option of 100 KB as any value: cut, with its length", () => {
  for (const option of [`--${"x".repeat(100_000)}`, `--${"a".repeat(300)}=1`]) {
    const error = commandLineError(
      [option],
      /^unknown option "--[ax]{100,200}…" \(\d+ characters\); run `service-ci --help`/,
    );
    assert.ok(error.message.length < 400, `${error.message.length} characters`);
  }
});
