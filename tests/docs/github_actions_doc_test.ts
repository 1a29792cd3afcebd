/**
 * docs/github-actions.md's complete workflows: `pull_request` plus `merge_group` (issue 27), what
 * it must hold for a merge queue to find the per-agent checks; a path filter decided inside the
 * job and a reusable workflow with its caller (issue 36), what a required check needs. actionlint
 * checks them too, with every workflow the docs show (tests/ship/workflows_test.ts).
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

type Workflow = { on: Record<string, unknown>; jobs: Record<string, Record<string, unknown>> };

// The workflow blocks of the docs whose first line names them `<label>`.
function workflowNamed(label: RegExp): Workflow {
  const found = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!).filter((
    block,
  ) => label.test(block.split("\n")[0]!));
  assert.equal(found.length, 1, `one workflow block whose first line matches ${label}`);
  return parse(found[0]!) as Workflow;
}

Deno.test("the docs' path-filtered gate runs on every pull request and decides inside the job", () => {
  const candidates = [...DOC.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1]!)
    .filter((block) => block.includes("dorny/paths-filter"));
  assert.equal(candidates.length, 1);
  const workflow = parse(candidates[0]!) as Workflow;
  // A workflow that does not run leaves its required check expected forever.
  assert.equal(JSON.stringify(workflow.on).includes('"paths'), false);
  assert.equal(workflow.jobs.gate!.if, undefined);
  const steps = workflow.jobs.gate!.steps as Record<string, unknown>[];
  const gate = steps.find((step) => String(step.uses).startsWith("service-ci/service-ci@"));
  assert.match(String(gate?.if), /^steps\.changes\.outputs\.\w+ == 'true'$/);
  assert.match(DOC, /a step skipped by its own `if:` leaves the job successful/);
  assert.match(DOC, /Require `gate` here, not the\s+per-agent/);
});

Deno.test("the docs' reusable workflow takes the key as a secret its caller passes with secrets: inherit", () => {
  const called = workflowNamed(/the reusable workflow$/);
  const caller = workflowNamed(/the caller$/);
  const call = called.on.workflow_call as { secrets: Record<string, { required: boolean }> };
  assert.deepEqual(call.secrets.SERVICE_API_KEY, { required: true });
  const [[callerJob, job]] = Object.entries(caller.jobs) as [[string, Record<string, unknown>]];
  assert.equal(job.secrets, "inherit");
  assert.match(String(job.uses), /\/\.github\/workflows\/quality-gate\.yml@/);
  // The called workflow's token has at most the caller job's permissions.
  assert.equal((job.permissions as Record<string, string>).checks, "write");
  const [calledJob] = Object.keys(called.jobs);
  const checkName = `${callerJob} / ${calledJob}`;
  assert.match(DOC, new RegExp(`The required check is \`${checkName}\``));
});

Deno.test("no doc tells to require the check by the workflow's name and the job's", () => {
  for (const path of ["../../docs/github-actions.md", "../../docs/recipes/github-actions.md"]) {
    const text = Deno.readTextFileSync(new URL(path, import.meta.url));
    assert.doesNotMatch(text, /add the check `quality gate \/ gate`/, path);
  }
  assert.match(DOC, /\*\*The name is the job's check name\.\*\*/);
  assert.match(DOC, /`<caller job> \/ <called job>`/);
});
