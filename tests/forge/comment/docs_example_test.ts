/**
 * The comments docs/pr-comment.md and docs/github-actions.md show are what the content builder
 * writes for the same runs: the docs cannot drift from the code.
 */

import assert from "node:assert/strict";
import { finalComment, progressComment } from "../../../src/forge/comment/content.ts";
import { gateMarker } from "../../../src/forge/comment/history.ts";
import { githubMetadata, makeAgent, makeReport } from "../../support/report_fixtures.ts";

const AGENTS = ["6f1d2c3b-0a9e-4c8d-9b7a-1e2f3a4b5c6d", "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"];
// The gate of the docs: workflow "quality gate", job "gate", both agents.
const MARKER = gateMarker({ workflow: "quality gate", job: "gate", agents: AGENTS });
const RUNS = AGENTS.map((agentId, index) => {
  const runId = `run_8f2${"ab"[index]}`;
  return { agentId, runId, url: `https://eval.example.com/runs/${runId}` };
});

function _markdownBlocks(path: string): string[] {
  const text = Deno.readTextFileSync(new URL(`../../../${path}`, import.meta.url));
  return [...text.matchAll(/^```markdown\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

// Markdown as it renders: a paragraph's line breaks, a table's padding and the angle brackets
// around a link's address do not count (deno fmt rewrites all three in the docs), every other
// character does.
function _normalize(markdown: string): string[] {
  return markdown.trim().replace(/\]\(<([^<>\s]*)>\)/g, "]($1)").split(/\n\s*\n/).map((block) =>
    block.startsWith("|")
      ? block.split("\n").map((row) =>
        row.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/^-+$/, "---")).join("|")
      ).join("\n")
      : block.split("\n").map((line) => line.trim()).join(" ")
  );
}

const progress = progressComment(MARKER, {
  commitSha: githubMetadata.commit_sha,
  buildUrl: githubMetadata.build_url,
  runs: RUNS,
});
const final = finalComment(
  MARKER,
  makeReport([
    makeAgent({ ...RUNS[0]!, outcome: "passed", durationMs: 84_000 }),
    makeAgent({
      ...RUNS[1]!,
      outcome: "failed",
      passed: false,
      status: "failed",
      exitCode: 1,
      durationMs: 132_000,
    }),
  ], { version: "1.0.0", exitCode: 1 }),
);

Deno.test("docs/pr-comment.md shows the in-progress and the final comment as they are written", () => {
  const [shownProgress, shownFinal] = _markdownBlocks("docs/pr-comment.md");
  assert.deepEqual(_normalize(shownProgress ?? ""), _normalize(progress));
  assert.deepEqual(_normalize(shownFinal ?? ""), _normalize(final));
});

Deno.test("docs/github-actions.md shows the final comment as it is written", () => {
  const [shown] = _markdownBlocks("docs/github-actions.md");
  assert.deepEqual(_normalize(shown ?? ""), _normalize(final));
});
