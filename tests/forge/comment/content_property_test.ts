import assert from "node:assert/strict";
import fc from "npm:fast-check@3.23.2";
import type { AgentOutcome, Outcome } from "../../../src/report/outcome.ts";
import { finalComment, progressComment } from "../../../src/forge/comment/content.ts";
import { gateMarker } from "../../../src/forge/comment/history.ts";
import { render } from "../../support/markdown.ts";
import { anyString, githubMetadata, makeAgent, makeReport } from "../../support/report_fixtures.ts";

const RUNS = { numRuns: 400 };

const marker = gateMarker({ workflow: "ci", job: "gate", agents: ["a"] });

/** Pieces of Markdown, HTML and forge syntax that could break out of a cell or ping someone. */
const PIECES = [
  "|",
  "\\|",
  "\\",
  "`",
  "``",
  "<!--",
  "-->",
  "--!>",
  "<details><summary>x</summary>",
  "</details>",
  "<img src=x onerror=alert(1)>",
  "![img](https://evil.example/x.png)",
  "[a](https://evil.example)",
  "<https://evil.example>",
  "https://evil.example/x",
  "HTTP://EVIL.EXAMPLE",
  "www.evil.example",
  "me@evil.example",
  "@octocat",
  "@acme/team",
  "#12",
  "acme/widgets#3",
  "GH-7",
  "!5",
  "~bug",
  "%v1.0",
  "$12",
  "&3",
  "^alert#1",
  "*iteration:2",
  "[vulnerability:1]",
  ":tada:",
  "&#124;",
  "&amp;",
  "&#64;",
  "&lt;",
  "\n",
  "\r\n",
  "\u2028",
  "\t",
  "\u200b",
  "\u202e",
  "\u00a0",
  "***",
  "_x_",
  "~~s~~",
  "$x$",
  "$$",
  "[^1]",
  "[x]: https://evil.example",
  "- [ ] ",
  "> ",
  "# ",
  "---",
  "| --- |",
  "<br>",
  "</td></tr></table>",
  "<script>",
  "javascript:alert(1)",
  "]",
  ")",
  "(",
  "[",
  "<",
  ">",
  '"',
  "'",
  "=",
  "\u0000",
  "\u001b[31m",
  "🚀",
  "\ud800",
];

const hostile = fc.oneof(
  anyString(30),
  fc.array(fc.oneof(fc.constantFrom(...PIECES), anyString(4)), { maxLength: 8 })
    .map((parts) => parts.join("")),
);

const url = fc.oneof(
  hostile,
  hostile.map((path) => `https://service.example/${path}`),
  fc.constant(null),
);

const OUTCOMES: Outcome[] = [
  "passed",
  "failed",
  "unchecked",
  "timed_out",
  "interrupted",
  "triggered",
];

const agent: fc.Arbitrary<AgentOutcome> = fc.record({
  agentId: hostile,
  runId: fc.option(hostile),
  status: fc.option(hostile),
  error: fc.option(hostile),
  url,
  outcome: fc.constantFrom(...OUTCOMES),
  durationMs: fc.integer({ min: 0, max: 10_000_000 }),
}).map((fields) => makeAgent(fields));

// The text a forge reads for mentions, references and autolinks after rendering: none may form.
const REFERENCE = /[@#!~%$^&*][^\u200b]|:\/\/|www\.|gh-\d/i;

function _checkTable(body: string, count: number, expectedLinks: number): void {
  assert.ok(body.startsWith(`${marker}\n`), "the marker comes first");
  assert.equal(body.split("<!--").length, 2, "one HTML comment opens");
  // A "-->" elsewhere (a link ending in "--") closes nothing: no other comment can open.
  const rendered = render(body);
  assert.deepEqual(rendered.htmlBlocks, [`${marker}\n`]);
  assert.equal(rendered.blockTypes.filter((type) => type === "table_open").length, 1);
  assert.deepEqual(rendered.headers, [["Agent", "Verdict", "Duration", "Run"]]);
  assert.equal(rendered.rows.length, count);
  for (const row of rendered.rows) {
    assert.equal(row.length, 4, JSON.stringify(row));
    for (const cell of row) assert.doesNotMatch(cell, REFERENCE, JSON.stringify(row));
  }
  // Only our links: no image, raw HTML, autolink or code from service text.
  for (const type of rendered.inlineTypes) {
    assert.ok(["link_open", "link_close"].includes(type), `${type} in ${body}`);
  }
  assert.equal(rendered.links.length, expectedLinks, body);
  for (const link of rendered.links) assert.match(link, /^https?:\/\//);
}

function _isHttp(value: string | null): boolean {
  return value !== null && URL.canParse(value) && /^https?:$/.test(new URL(value).protocol);
}

Deno.test("finalComment() keeps hostile service text inside its table cells, inert", () => {
  fc.assert(
    fc.property(fc.array(agent, { minLength: 1, maxLength: 5 }), hostile, (agents, commit) => {
      const report = makeReport(agents, {
        ciMetadata: { ...githubMetadata, commit_sha: commit },
      });
      const links = agents.filter((each) => _isHttp(each.url)).length + 1;
      _checkTable(finalComment(marker, report), agents.length, links);
    }),
    RUNS,
  );
});

Deno.test("progressComment() keeps hostile service text inside its table cells, inert", () => {
  const run = fc.record({ agentId: hostile, runId: fc.option(hostile), url });
  fc.assert(
    fc.property(fc.array(run, { minLength: 1, maxLength: 5 }), url, (runs, buildUrl) => {
      const body = progressComment(marker, { commitSha: null, buildUrl, runs });
      const links = runs.filter((each) => _isHttp(each.url)).length + (_isHttp(buildUrl) ? 1 : 0);
      _checkTable(body, runs.length, links);
    }),
    RUNS,
  );
});
