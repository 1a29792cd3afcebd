import assert from "node:assert/strict";
import { escapeJsonForLogs, neutralizeLine, neutralizeText } from "../../src/text/log_commands.ts";
import { commandsIn } from "../support/ci_log_parsers.ts";

/** A line each CI reads as a command, and what neutralizeLine() makes of it. */
const CASES: readonly { ci: string; line: string; neutral: string }[] = [
  {
    ci: "azure",
    line: "run failed ##vso[task.setvariable variable=passed;isOutput=true]true",
    neutral: "run failed ##vso [task.setvariable variable=passed;isOutput=true]true",
  },
  {
    ci: "azure",
    line: "##vso[task.complete result=Succeeded;]done",
    neutral: "##vso [task.complete result=Succeeded;]done",
  },
  {
    ci: "teamcity",
    line: "status: ##teamcity[buildStatus status='SUCCESS' text='ok']",
    neutral: "status: ##teamcity [buildStatus status='SUCCESS' text='ok']",
  },
  { ci: "github", line: "::error::boom", neutral: '"::error::boom"' },
  { ci: "github", line: "  \t::add-mask::x", neutral: '"  \t::add-mask::x"' },
  // .NET's TrimStart() removes U+0085; neutralizeLine() takes it as a line break.
  { ci: "github", line: "\u0085::set-output name=a::b", neutral: '\u0085"::set-output name=a::b"' },
  { ci: "github", line: "see ##[error]boom", neutral: "see ## [error]boom" },
  { ci: "github", line: "##[group]x", neutral: "## [group]x" },
  { ci: "buildkite", line: "--- :rocket: deploy", neutral: '"--- :rocket: deploy"' },
  { ci: "buildkite", line: "+++ expanded", neutral: '"+++ expanded"' },
  { ci: "buildkite", line: "~~~ hidden", neutral: '"~~~ hidden"' },
  { ci: "buildkite", line: "---\tx", neutral: '"---\tx"' },
  { ci: "buildkite", line: "^^^ +++", neutral: '"^^^ +++"' },
  { ci: "buildkite", line: "\x1b[31m--- red", neutral: '"\x1b[31m--- red"' },
  { ci: "buildkite", line: "-\x1b[0m-\x1b[1m- split", neutral: '"-\x1b[0m-\x1b[1m- split"' },
  {
    ci: "gitlab",
    line: "x section_start:1700000000:build[collapsed=true]\r\x1b[0Ky",
    neutral: "x section_start :1700000000:build[collapsed=true]\r\x1b[0Ky",
  },
  {
    ci: "gitlab",
    line: "section_end:1700000000:build\r\x1b[0K",
    neutral: "section_end :1700000000:build\r\x1b[0K",
  },
];

Deno.test("each example line is a command for its CI's own reader before neutralizeLine()", () => {
  for (const { ci, line } of CASES) {
    assert.ok(
      commandsIn(line).some((found) => found.ci === ci),
      `${ci} should read ${JSON.stringify(line)}`,
    );
  }
});

Deno.test("neutralizeLine() breaks each marker visibly and no CI reads a command after it", () => {
  for (const { line, neutral } of CASES) {
    assert.equal(neutralizeLine(line), neutral);
    assert.deepEqual(commandsIn(neutral), [], JSON.stringify(neutral));
  }
});

Deno.test("neutralizeLine() is idempotent on every example", () => {
  for (const { neutral } of CASES) assert.equal(neutralizeLine(neutral), neutral);
});

Deno.test("neutralizeLine() matches markers in any letter case", () => {
  assert.equal(neutralizeLine("##VSO[task.complete]"), "##VSO [task.complete]");
  assert.equal(neutralizeLine("##TeamCity[x]"), "##TeamCity [x]");
  assert.equal(neutralizeLine("SECTION_START:1:x"), "SECTION_START :1:x");
});

Deno.test("neutralizeLine() leaves ordinary text alone, markers in the middle of words included", () => {
  for (
    const line of [
      "",
      "gate failed: score 0.42 < 0.8",
      "a::b and c :: d",
      "#tag [x] ## [y] #vso[",
      "x --- y +++ z ~~~",
      "----- rule",
      "https://example.test/runs/1#[frag]",
      "section_start without colon",
      "é🚀 ünïcödé",
    ]
  ) {
    assert.equal(neutralizeLine(line), line, JSON.stringify(line));
  }
});

Deno.test("neutralizeLine() treats a line break inside its input as a new line start", () => {
  assert.equal(neutralizeLine("ok\n::error::x"), 'ok\n"::error::x"');
  assert.equal(neutralizeLine("ok\r--- x"), 'ok\r"--- x"');
  assert.equal(neutralizeLine("ok\u2028::error::x"), 'ok\u2028"::error::x"');
});

Deno.test("neutralizeText() neutralizes every line and keeps each line break as it was", () => {
  const text = "one\r\n::warning::two\n##vso[task.complete]\r+++ four\n\nlast";
  assert.equal(
    neutralizeText(text),
    'one\r\n"::warning::two"\n##vso [task.complete]\r"+++ four"\n\nlast',
  );
  assert.deepEqual(commandsIn(neutralizeText(text)), []);
  assert.equal(neutralizeText("no markers\nat all\n"), "no markers\nat all\n");
});

Deno.test("escapeJsonForLogs() writes marker characters as \\u escapes inside strings", () => {
  const value = {
    status: "##vso[task.complete result=Succeeded]",
    message: "##teamcity[buildStatus status='SUCCESS'] and ##[error]x",
    url: "section_start:1:x\r\x1b[0K",
    "##vso[key]": ["\u2028::error::y", "\u0085--- z"],
  };
  const json = JSON.stringify(value, null, 2);
  const escaped = escapeJsonForLogs(json);
  assert.ok(commandsIn(json).length > 0, "the plain JSON holds commands");
  assert.deepEqual(commandsIn(escaped), []);
  assert.deepEqual(JSON.parse(escaped), value);
  assert.ok(escaped.includes('"status": "##vso\\u005btask.complete result=Succeeded]"'));
  assert.ok(escaped.includes("section_start\\u003a1:x"));
  assert.ok(escaped.includes('"\\u2028::error::y"'));
  assert.equal(escapeJsonForLogs(escaped), escaped);
});

Deno.test("escapeJsonForLogs() leaves JSON without markers byte for byte as it was", () => {
  const json = JSON.stringify({ a: [1, -2.5e+3, true, null], "b:c": "#x [y] ::z", d: "\\u0023" });
  assert.equal(escapeJsonForLogs(json), json);
});
