import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import { escapeJsonForLogs, neutralizeLine, neutralizeText } from "../../src/text/log_commands.ts";
import { commandsIn } from "../support/ci_log_parsers.ts";
import { anyString } from "../support/report_fixtures.ts";

const RUNS = { numRuns: 2000 };

/** Pieces of real commands and of what can hide or move a line start. */
const FRAGMENTS = [
  "##vso[task.setvariable variable=x]",
  "##vso[task.complete result=Succeeded;]",
  "##vso[",
  "##VSO[",
  "##teamcity[",
  "##teamcity[buildStatus status='SUCCESS']",
  "##[",
  "##[error]",
  "##[group]",
  "##",
  "#",
  "vso[",
  "teamcity[",
  "[",
  "]",
  "|]",
  "::",
  "::error::",
  "::add-mask::",
  ":",
  "--- ",
  "---",
  "+++ ",
  "~~~ ",
  "^^^ +++",
  "^^^",
  "-",
  "+",
  "section_start:1:x\r\x1b[0K",
  "section_end:1:x\r\x1b[0K",
  "section_start:",
  "section_",
  "start:",
  "\r\x1b[0K",
  "\x1b[31m",
  "\x1b[0m",
  "\x1b]0;t\x07",
  "\x9b1m",
  "\n",
  "\r",
  "\r\n",
  "\t",
  " ",
  "\u0085",
  "\u2028",
  "\u2029",
  "\u00a0",
  "\u200b",
  "\ufeff",
  "\u00ad",
  "\x00",
  "é",
  "🚀",
  "x",
];

/** Strings built mostly from the fragments, and any string at all. */
const hostile: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 30 }).map((parts) =>
      parts.join("")
    ),
  },
  fc.array(fc.oneof(fc.constantFrom(...FRAGMENTS), fc.string()), { maxLength: 20 })
    .map((parts) => parts.join("")),
  anyString(60),
);

function assertNoCommand(output: string, input: string): void {
  const found = commandsIn(output);
  assert.deepEqual(found, [], `${JSON.stringify(input)} → ${JSON.stringify(output)}`);
}

/** True when `output` is `input` with only spaces and double quotes put in. */
function onlyAddsSpacesAndQuotes(input: string, output: string): boolean {
  let at = 0;
  for (const char of output) {
    if (input.startsWith(char, at)) at += char.length;
    else if (char !== " " && char !== '"') return false;
  }
  return at === input.length;
}

Deno.test("no CI reads a command in anything neutralizeLine() returns", () => {
  fc.assert(fc.property(hostile, (input) => assertNoCommand(neutralizeLine(input), input)), RUNS);
});

Deno.test("no CI reads a command in any line neutralizeText() returns", () => {
  fc.assert(
    fc.property(fc.array(hostile, { maxLength: 5 }), (lines) => {
      const input = lines.join("\n");
      assertNoCommand(neutralizeText(input), input);
    }),
    RUNS,
  );
});

Deno.test("neutralizeLine() and neutralizeText() are idempotent", () => {
  fc.assert(
    fc.property(hostile, (input) => {
      const once = neutralizeText(input);
      assert.equal(neutralizeText(once), once);
      assert.equal(neutralizeLine(neutralizeLine(input)), neutralizeLine(input));
    }),
    RUNS,
  );
});

Deno.test("neutralizeLine() only puts in spaces and double quotes, keeping every character", () => {
  fc.assert(
    fc.property(hostile, (input) => {
      const output = neutralizeLine(input);
      assert.ok(onlyAddsSpacesAndQuotes(input, output), `${JSON.stringify(output)}`);
      assert.equal(neutralizeText(input), output);
    }),
    RUNS,
  );
});

Deno.test("neutralizeLine() changes nothing in text without marker characters", () => {
  const plain = fc.string({ unit: fc.constantFrom(..."abcXYZ019 .,;!?()[]{}<>/\\'\"%&=_@é🚀\t") });
  fc.assert(fc.property(plain, (input) => assert.equal(neutralizeLine(input), input)), RUNS);
});

/** JSON values whose keys and strings are hostile. */
const hostileJson: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    hostile,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostile, tie("value"), { maxKeys: 4 }),
  ),
})).value;

Deno.test("escapeJsonForLogs() leaves no command in any line and JSON.parse() gets the same value", () => {
  fc.assert(
    fc.property(hostileJson, fc.constantFrom(undefined, 0, 2, "\t"), (value, indent) => {
      const json = JSON.stringify(value, null, indent);
      const escaped = escapeJsonForLogs(json);
      assertNoCommand(escaped, json);
      assert.deepEqual(JSON.parse(escaped), JSON.parse(json));
      assert.equal(escapeJsonForLogs(escaped), escaped);
    }),
    RUNS,
  );
});
