/**
 * docs/github-actions.md's complete workflow for `pull_request` plus `merge_group` (issue 27):
 * what it must hold for a merge queue to find the per-agent checks. actionlint checks it too,
 * with every workflow the docs show (tests/ship/workflows_test.ts).
 */

import assert from "node:assert/strict";
import { parse } from "npm:yaml@2.6.1";

const DOC = Deno.readTextFileSync(new URL("../../docs/github-actions.md", import.meta.url));

// The one YAML block that starts with the file name and runs on merge_group with the check runs.
function completeWorkflow(): Record<string, unknown> {
  const blocks = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!);
  const found = blocks.filter((block) =>
    block.startsWith("# .github/workflows/") && /merge_group/.test(block) &&
    /commit-status: true/.test(block)
  );
  assert.equal(found.length, 1, "one complete pull_request + merge_group workflow");
  return parse(found[0]!) as Record<string, unknown>;
}

Deno.test("the docs' merge-queue workflow runs on pull_request and merge_group, with the permissions the check runs and the comment need", () => {
  const workflow = completeWorkflow();
  const on = workflow.on as Record<string, unknown>;
  assert.ok("pull_request" in on && "merge_group" in on);
  assert.deepEqual(workflow.permissions, {
    contents: "read",
    checks: "write",
    statuses: "write",
    "pull-requests": "write",
  });
});

Deno.test("the docs' merge-queue workflow guards forks but lets merge_group through", () => {
  const job = (completeWorkflow().jobs as Record<string, Record<string, unknown>>).gate!;
  const guard = String(job.if);
  assert.match(guard, /^github\.event_name == 'merge_group' \|\| /);
  assert.match(guard, /github\.event\.pull_request\.head\.repo\.full_name == github\.repository/);
  const step = (job.steps as Record<string, unknown>[])[0]!;
  assert.match(String(step.uses), /^service-ci\/service-ci@v1$/);
  assert.equal((step.with as Record<string, unknown>)["commit-status"], true);
});

Deno.test("the docs say a job skipped by if: passes a required check, what a fork gets, and which checks to require", () => {
  assert.match(DOC, /\*\*A job skipped by `if:` counts as passed\*\* for a required check/);
  assert.match(DOC, /a fork's pull request, whose job\s+the guard above skips, gets no verdict/);
  assert.match(DOC, /Required checks[^`]*`service-ci \/ 6f1d2c3b-0a9e-4c8d-9b7a-1e2f3a4b5c6d`/);
  assert.match(DOC, /the check runs go on `merge_group\.head_sha`/);
});
