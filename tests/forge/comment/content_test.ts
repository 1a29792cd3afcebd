import assert from "node:assert/strict";
import { inertMarkdown as inert } from "../../../src/text/markdown.ts";
import {
  finalComment,
  MAX_COMMENT_LENGTH,
  progressComment,
} from "../../../src/forge/comment/content.ts";
import { gateMarker } from "../../../src/forge/comment/history.ts";
import { render } from "../../support/markdown.ts";
import {
  AGENT_IDS,
  githubMetadata,
  HOSTILE_STRINGS,
  makeAgent,
  makeReport,
  mixedReport,
  passingReport,
} from "../../support/report_fixtures.ts";

const marker = gateMarker({ workflow: "ci", job: "gate", agents: [AGENT_IDS.passed] });

Deno.test("finalComment() starts with the marker, then the overall result", () => {
  const lines = finalComment(marker, passingReport).split("\n");
  assert.equal(lines[0], marker);
  assert.equal(lines[2], "### ✅ service-ci: quality gate passed");
  assert.equal(
    lines[4],
    `1 passed. Commit ${githubMetadata.commit_sha}.`,
  );
});

Deno.test("a keyed comment (--pr-comment-key, one per matrix leg) says its leg first in the heading, inert", () => {
  const keyed = (key: string) => finalComment(marker, passingReport, { key }).split("\n")[2];
  assert.equal(
    keyed("ubuntu-latest"),
    `### ${inert("ubuntu-latest")}: ✅ service-ci: quality gate passed`,
  );
  assert.equal(keyed("@team #1"), `### ${inert("@team #1")}: ✅ service-ci: quality gate passed`);
  assert.equal(keyed(""), "### ✅ service-ci: quality gate passed");
  const running = progressComment(marker, {
    commitSha: githubMetadata.commit_sha,
    buildUrl: null,
    runs: [],
  }, { key: "windows-latest" });
  assert.ok(running.split("\n")[2]!.startsWith(`### ${inert("windows-latest")}: ⏳ service-ci: `));
});

Deno.test("finalComment() has one row per agent with verdict, duration and run link", () => {
  const { headers, rows, links } = render(finalComment(marker, mixedReport));
  assert.deepEqual(headers, [["Agent", "Verdict", "Duration", "Run"]]);
  assert.deepEqual(rows.map((row) => row.slice(1, 3)), [
    ["✅ passed", "1.2 s"],
    ["❌ failed", "2.0 s"],
    ["⚠️ not checked: 403 Forbidden:\u200b the key lacks CI access", "0.3 s"],
    ["⏱️ timed out: no verdict within 30 minutes", "30 min 0 s"],
    ["🛑 interrupted", "4.0 s"],
    ["⏩ not waited for", "0.1 s"],
  ]);
  assert.deepEqual(rows.map((row) => row[0]), mixedReport.agents.map((agent) => agent.agentId));
  assert.deepEqual(links, [
    "https://service.example/runs/run_1",
    "https://service.example/runs/run_2",
    "https://service.example/runs/run_4",
    "https://service.example/runs/run_5",
    "https://service.example/runs/run_6",
    githubMetadata.build_url,
  ]);
});

Deno.test("finalComment() says what the exit code means", () => {
  const line = (report: typeof passingReport) =>
    finalComment(marker, report).split("\n").find((text) => text.startsWith("Exit code"));
  assert.equal(line(passingReport), "Exit code 0: every agent's gate passed.");
  assert.equal(line(mixedReport), "Exit code 3: at least one gate could not be checked.");
  const failed = makeAgent({ outcome: "failed", passed: false, exitCode: 1 });
  assert.equal(
    line(makeReport([failed], { exitCode: 1 })),
    "Exit code 1: at least one gate failed.",
  );
  assert.equal(
    line(makeReport([failed], { exitCode: 0, warnOnly: true })),
    "Exit code 0: failed gates do not fail the job (--warn-only).",
  );
  assert.equal(
    line(makeReport([makeAgent({ outcome: "timed_out" })], { exitCode: 4 })),
    "Exit code 4: the timeout ran out before every run had a verdict.",
  );
  assert.equal(
    line(makeReport([makeAgent({ outcome: "interrupted" })], { exitCode: 143 })),
    "Exit code 143: interrupted by SIGTERM or SIGHUP before every run had a verdict.",
  );
});

Deno.test("finalComment() writes an unusual commit as inert text", () => {
  const report = makeReport([makeAgent()], {
    ciMetadata: { ...githubMetadata, commit_sha: "@octocat <b>" },
  });
  const body = finalComment(marker, report);
  assert.match(body, /Commit \\@&#8203;octocat &lt;b&gt;\./);
  const unknown = makeReport([makeAgent()], {
    ciMetadata: { ...githubMetadata, commit_sha: null },
  });
  assert.match(finalComment(marker, unknown), /Commit an unknown commit\./);
});

Deno.test("progressComment() lists the triggered runs with their links and no verdicts", () => {
  const body = progressComment(marker, {
    commitSha: "abc1234",
    buildUrl: "https://ci.example/job/1?x=1&y=2",
    runs: [
      { agentId: AGENT_IDS.passed, runId: "run_1", url: "https://service.example/runs/run_1" },
      { agentId: AGENT_IDS.failed, runId: null, url: null },
    ],
  });
  const lines = body.split("\n");
  assert.equal(lines[0], marker);
  assert.equal(lines[2], "### ⏳ service-ci: quality gates running");
  assert.match(lines[4]!, /^2 runs triggered for abc1234;/);
  const { rows, links } = render(body);
  assert.deepEqual(rows, [
    [AGENT_IDS.passed, "⏳ running", "—", "run_1 (dashboard)"],
    [AGENT_IDS.failed, "⏳ running", "—", "—"],
  ]);
  assert.deepEqual(links, [
    "https://service.example/runs/run_1",
    "https://ci.example/job/1?x=1&y=2",
  ]);
  assert.doesNotMatch(body, /Exit code/);
});

Deno.test("finalComment() links only http(s) addresses", () => {
  const agents = ["javascript:alert(1)", "data:text/html,x", "ftp://x.example/", "not a url"]
    .map((url, index) => makeAgent({ runId: `run_${index}`, url }));
  const report = makeReport(agents, { ciMetadata: { ...githubMetadata, build_url: null } });
  const { links, rows } = render(finalComment(marker, report));
  assert.deepEqual(links, []);
  assert.deepEqual(rows.map((row) => row[3]), ["run_0", "run_1", "run_2", "run_3"]);
});

Deno.test("inert() breaks mentions, references and autolinks with a zero-width space", () => {
  assert.equal(inert("@octocat #1"), "\\@&#8203;octocat \\#&#8203;1");
  assert.equal(
    inert("see GH-12 and www.evil.example"),
    "see GH\\-&#8203;12 and www&#8203;\\.evil\\.example",
  );
  assert.equal(inert("https://x.example"), "https\\:&#8203;\\/\\/x\\.example");
  assert.equal(
    inert("!3 ~bug %v1 $7 &9 ^alert *iteration"),
    [
      "\\!&#8203;3 \\~&#8203;bug \\%&#8203;v1 \\$&#8203;7 &amp;&#8203;9 \\^&#8203;alert",
      "\\*&#8203;iteration",
    ].join(" "),
  );
  assert.equal(inert("a\u202eb\u200bc\u00add"), "abcd");
});

Deno.test("inert() shows each hostile string as its text, without markup", () => {
  for (const hostile of HOSTILE_STRINGS) {
    const report = makeReport([makeAgent({ runId: hostile, status: "ok", url: null })]);
    const { rows, links, inlineTypes } = render(finalComment(marker, report));
    assert.equal(rows.length, 1);
    assert.deepEqual(links, [githubMetadata.build_url], hostile);
    assert.deepEqual(inlineTypes, ["link_open", "link_close"], hostile);
    const expected = hostile
      .replace(/\r\n|[\r\n]/g, " ")
      // deno-lint-ignore no-control-regex
      .replace(/[\x00-\x1f\x7f-\x9f]/g, "")
      .toWellFormed()
      .trim();
    assert.equal(rows[0]![3]!.replaceAll("\u200b", ""), expected, hostile);
  }
});

Deno.test("finalComment() cuts many agents with a count, keeping failures and links", () => {
  const agents = Array.from({ length: 3000 }, (_, index) =>
    makeAgent({
      agentId: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      runId: `run_${index}`,
      url: `https://service.example/runs/run_${index}`,
      ...(index === 2999 ? { outcome: "failed" as const, passed: false, exitCode: 1 } : {}),
    }));
  const body = finalComment(marker, makeReport(agents, { exitCode: 1 }));
  assert.ok(body.length <= MAX_COMMENT_LENGTH, String(body.length));
  const { rows, links } = render(body);
  assert.ok(rows.length > 100 && rows.length < 3000, String(rows.length));
  assert.ok(rows.some((row) => row[1] === "❌ failed"), "the failed agent is shown");
  // Every row shown keeps its run link; the CI job's link stays too.
  assert.equal(links.length, rows.length + 1);
  const hidden = 3000 - rows.length;
  assert.match(body, new RegExp(`… and ${hidden} more agents \\(${hidden} passed\\), left out`));
  assert.match(body, /Exit code 1: at least one gate failed\./);
});

Deno.test("finalComment() keeps to a smaller maxLength", () => {
  const agents = Array.from({ length: 50 }, () => makeAgent());
  const body = finalComment(marker, makeReport(agents), { maxLength: 2_000 });
  assert.ok(body.length <= 2_000, String(body.length));
  assert.match(body, /… and \d+ more agents/);
});
