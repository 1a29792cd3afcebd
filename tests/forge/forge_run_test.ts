/**
 * The forge's rules, for every writer together (issue 27), from `run()` in process against fake
 * forges on loopback: a few requests at once and GitHub's writes one at a time; GitHub's
 * secondary limit (a 403 with and without Retry-After) pausing every writer on a fake clock; a
 * create whose answer is lost; a comment endpoint that hangs at the end and on cancel; the merge
 * queue's head; GitLab's ref and pipeline; two overlapping runs of one pull request.
 */

import assert from "node:assert/strict";
import { run } from "../../src/run.ts";
import { COURTESY_BUDGET_MS, MERGE_BUDGET_MS } from "../../src/run_output.ts";
import { makePolicyFetch } from "../../src/http_policy.ts";
import { sleep, systemClock } from "../../src/sleep.ts";
import { statusName } from "../../src/status/commit_status.ts";
import {
  FORGE_COMMITS,
  FORGE_TARGET,
  FORGE_TOKENS,
  githubPullRequestEnv,
  startFakeGithub,
} from "../support/fake_forge.ts";
import { hangUntil, startFakeStatusForge } from "../support/fake_status.ts";
import { harness, type HarnessOptions } from "../support/run_harness.ts";
import { gitlabStatusErrors } from "../support/forge_schemas.ts";

const HEAD_SHA = FORGE_COMMITS.head;
const MERGE_SHA = FORGE_COMMITS.merge;
const QUEUE_SHA = "9999999999999999999999999999999999999999";
const EVENT_PATH = FORGE_COMMITS.eventPath;

function agents(count: number): string[] {
  return Array.from(
    { length: count },
    (_, index) => `0b0c4a5e-8f4e-4a8e-9a53-${index.toString(16).padStart(12, "0")}`,
  );
}

function githubEnv(apiUrl: string, extra: Record<string, string> = {}) {
  return githubPullRequestEnv(apiUrl, extra);
}

// One in-process run: the service and every wait on virtual time, the finishing budgets on the
// real clock (virtual time would end them before a loopback answer arrives).
async function runWith(
  options: HarnessOptions & { readonly event?: unknown; readonly interruptAfterMs?: number },
) {
  const h = harness(options);
  const event = JSON.stringify(
    options.event ?? {
      number: FORGE_TARGET.pullRequest,
      pull_request: { number: FORGE_TARGET.pullRequest, head: { sha: HEAD_SHA, ref: "feature" } },
    },
  );
  const budgets = [COURTESY_BUDGET_MS, MERGE_BUDGET_MS, 2_000, 5_000];
  const started = performance.now();
  const code = await run({
    ...h.effects,
    clock: {
      ...h.effects.clock,
      // The wall clock moves with the virtual one: a rate limit's pause ends on it.
      now: () => Date.UTC(2026, 10, 23) + h.time.monotonic(),
      sleep: (ms, signal) =>
        budgets.includes(ms) ? sleep(ms, signal) : h.effects.clock.sleep(ms, signal),
    },
    files: {
      ...h.effects.files,
      readTextFile: (path) =>
        path === EVENT_PATH
          ? Promise.resolve(event)
          : Promise.reject(new Deno.errors.NotFound("no such file")),
    },
    http: {
      // A forge request takes no virtual time, as an answer that comes at once would; its
      // timer is the real one, as virtual time stands still while it is held.
      makeFetch: (setup) => {
        if ("caCerts" in setup) return h.effects.http.makeFetch(setup);
        const send = makePolicyFetch(setup);
        return (input, init) => h.time.hold(send(input, init));
      },
      timeout: systemClock.timeout,
    },
  });
  const stderr = h.stderr.join("");
  return { code, stderr, tookMs: performance.now() - started, harness: h };
}

Deno.test("30 agents: at most 4 requests in flight at GitHub and one write at a time, every check run completed", async () => {
  await using github = await startFakeStatusForge("github");
  const ids = agents(30);
  const result = await runWith({
    args: ids.flatMap((id) => ["--agent", id]),
    env: githubEnv(github.apiUrl),
  });
  assert.equal(result.code, 0, result.stderr);
  assert.ok(github.peak.requests <= 4, `${github.peak.requests} in flight`);
  assert.equal(github.peak.writes, 1);
  assert.equal(github.checkRuns.size, 30);
  for (const run of github.checkRuns.values()) assert.equal(run.status, "completed");
});

Deno.test("GitHub's secondary limit (a 403 without Retry-After) is a rate limit for every writer: no switch to commit statuses, no permission asked for", async () => {
  let writes = 0;
  await using github = await startFakeStatusForge("github", {
    // GitHub's secondary limit comes as a 403 with no header: only its message says so.
    fault: (request) =>
      request.method !== "GET" && ++writes === 5
        ? Response.json({
          message: "You have exceeded a secondary rate limit. Please wait a few minutes.",
        }, { status: 403 })
        : undefined,
  });
  const ids = agents(6);
  const result = await runWith({
    args: ids.flatMap((id) => ["--agent", id]),
    env: githubEnv(github.apiUrl),
  });
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /checks: write|commit statuses instead|permission/);
  assert.ok(!github.requests.some((request) => /\/statuses\//.test(request.path)));
  // A minute's pause (none was given) outlasts the 45 s the statuses have to finish: nothing
  // more is sent after the refusal, and one line says how many requests were given up.
  const writesSent = github.requests.filter((request) => request.method !== "GET");
  assert.equal(writesSent.length, 5);
  const lines = result.stderr.split("\n").filter((line) => /rate limit/.test(line));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(lines[0]!, /secondary rate limit.*; \d+ requests were given up\./);
  assert.ok(result.tookMs < 10_000, `${result.tookMs} ms`);
});

Deno.test("a rate limit whose Retry-After outlasts the time to finish gives up what is left, in one line that says how many", async () => {
  let refused = false;
  await using github = await startFakeStatusForge("github", {
    fault: (request) => {
      if (request.method !== "PATCH" || refused) return undefined;
      refused = true;
      return Response.json({ message: "slow down" }, {
        status: 403,
        headers: { "retry-after": "3600" },
      });
    },
  });
  const ids = agents(3);
  const result = await runWith({
    args: ids.flatMap((id) => ["--agent", id]),
    env: githubEnv(github.apiUrl),
  });
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stderr.split("\n").filter((line) => /rate limit/.test(line));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    /^service-ci: GitHub asked to wait out a rate limit past the time left to finish \(.*403: slow down\); [2-4] requests were given up\. The gate's verdict and exit code are not affected\.$/,
  );
  assert.doesNotMatch(result.stderr, /commit statuses were not written/);
  // Nothing was sent after the answer that asked to wait.
  const after = github.requests.findIndex((request) => request.method === "PATCH");
  assert.equal(github.requests.length, after + 1);
});

Deno.test("a create whose answer is lost (502 after the write) is found by name and completed: one check run, never left in_progress", async () => {
  let lost = false;
  await using github = await startFakeStatusForge("github", {
    loseAnswer: (request) => {
      if (request.method !== "POST" || lost) return false;
      lost = true;
      return true;
    },
  });
  const id = agents(1)[0]!;
  const result = await runWith({ args: ["--agent", id], env: githubEnv(github.apiUrl) });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(github.checkRuns.size, 1, JSON.stringify([...github.checkRuns]));
  const [run] = [...github.checkRuns.values()];
  assert.equal(run!.status, "completed");
  assert.equal(run!.conclusion, "success");
  assert.ok(
    github.requests.some((request) =>
      request.method === "GET" &&
      request.path.includes(`check_name=${encodeURIComponent(statusName(id))}`)
    ),
  );
  assert.doesNotMatch(result.stderr, /commit statuses were not written/);
});

Deno.test("a merge_group run writes the per-agent check runs on the merge group's head, and skips the comment in one line", async () => {
  await using github = await startFakeStatusForge("github");
  const result = await runWith({
    args: ["--agent", agents(1)[0]!, "--pr-comment"],
    env: githubEnv(github.apiUrl, {
      GITHUB_EVENT_NAME: "merge_group",
      GITHUB_SHA: QUEUE_SHA,
      GITHUB_REF:
        "refs/heads/gh-readonly-queue/main/pr-42-0000000000000000000000000000000000000000",
    }),
    event: {
      merge_group: {
        head_sha: QUEUE_SHA,
        head_ref:
          "refs/heads/gh-readonly-queue/main/pr-42-0000000000000000000000000000000000000000",
        base_ref: "refs/heads/main",
      },
    },
  });
  assert.equal(result.code, 0, result.stderr);
  const creates = github.requests.filter((request) =>
    request.method === "POST" && request.path.endsWith("/check-runs")
  );
  assert.equal(creates.length, 1, result.stderr);
  assert.equal(creates[0]!.body.head_sha, QUEUE_SHA);
  assert.equal(creates[0]!.body.name, statusName(agents(1)[0]!));
  assert.match(result.stderr, /no pull-request comment in a merge queue run/);
  assert.doesNotMatch(result.stderr, /no commit statuses/);
});

Deno.test("a comment endpoint that hangs never delays the statuses: they are completed first, at the end and on cancel", async () => {
  for (const cancel of [false, true]) {
    await using github = await startFakeStatusForge("github", {
      fault: (request, signal) =>
        /\/issues\//.test(request.path) ? hangUntil(signal, 300) : undefined,
    });
    const ids = agents(3);
    const run = runWith({
      args: [...ids.flatMap((id) => ["--agent", id]), "--pr-comment"],
      env: githubEnv(github.apiUrl),
      reads: cancel ? [{ status: "running" }] : [{ status: "completed", passed: true }],
      ...(cancel
        ? {
          onRequest: (_: string, each: { requests: string[]; interrupt: AbortController }) => {
            if (each.requests.length === 8) each.interrupt.abort(new Error("SIGINT"));
          },
        }
        : {}),
    });
    const result = await run;
    assert.equal(github.checkRuns.size, 3, result.stderr);
    for (const each of github.checkRuns.values()) {
      assert.equal(each.status, "completed", result.stderr);
      assert.equal(each.conclusion, cancel ? "cancelled" : "success");
    }
    // The comment's requests hang (then answer 504): it may say so, after the statuses.
    const statuses = github.requests.filter((request) => /check-runs\/\d+$/.test(request.path));
    assert.ok(statuses.length >= 3, result.stderr);
    // On cancel, inside GitHub's window: SIGTERM 7.5 s after SIGINT, the kill 2.5 s later.
    if (cancel) assert.ok(result.tookMs < 7_500, `${result.tookMs} ms`);
  }
});

Deno.test("GitLab: each status carries the pipeline's ref, and pipeline_id when the commit is the pipeline's own; every body fits GitLab's schema", async () => {
  for (
    const [type, sha, pipeline] of [
      ["detached", HEAD_SHA, 4242],
      ["merged_result", MERGE_SHA, null],
    ] as const
  ) {
    await using gitlab = await startFakeStatusForge("gitlab");
    const result = await runWith({
      args: ["--agent", agents(1)[0]!],
      env: {
        SERVICE_COMMIT_STATUS: "true",
        SERVICE_CI_NATIVE: "false",
        GITLAB_CI: "true",
        CI: "true",
        CI_PROJECT_ID: FORGE_TARGET.projectId,
        CI_PROJECT_PATH: FORGE_TARGET.repository,
        CI_MERGE_REQUEST_IID: String(FORGE_TARGET.mergeRequest),
        CI_MERGE_REQUEST_EVENT_TYPE: type,
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature",
        CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: HEAD_SHA,
        CI_COMMIT_SHA: sha,
        CI_COMMIT_REF_NAME: "feature",
        CI_PIPELINE_ID: "4242",
        CI_API_V4_URL: gitlab.apiUrl,
        CI_JOB_URL: "https://gitlab.example/acme/widgets/-/jobs/7",
        SERVICE_GITLAB_TOKEN: FORGE_TOKENS.gitlab,
      },
    });
    assert.equal(result.code, 0, result.stderr);
    const posts = gitlab.requests.filter((request) => request.method === "POST");
    assert.equal(posts.length, 2, result.stderr);
    for (const post of posts) {
      assert.ok(post.path.endsWith(`/statuses/${HEAD_SHA}`), post.path);
      assert.equal(post.body.ref, "feature");
      assert.equal(post.body.pipeline_id, pipeline ?? undefined, type);
      assert.deepEqual(gitlabStatusErrors(post.body), [], JSON.stringify(post.body));
    }
  }
});

Deno.test("two overlapping runs of one pull request leave one comment: the later verdict removes the copy, and never touches another's comment", async () => {
  await using forge = await startFakeGithub({
    comments: [{ id: 100, body: "a reviewer's comment", author: "mallory" }],
  });
  const env = {
    ...githubEnv(forge.apiUrl),
    SERVICE_COMMIT_STATUS: "false",
    SERVICE_PR_COMMENT: "true",
  };
  const id = agents(1)[0]!;
  // The first run's comment, and a copy an overlapping run wrote at the same time.
  const first = await runWith({ args: ["--agent", id], env });
  assert.equal(first.code, 0, first.stderr);
  const ours = forge.comments.find((comment) => comment.id !== 100)!;
  forge.comments.push({ id: ours.id + 1, body: ours.body });
  const second = await runWith({ args: ["--agent", id], env });
  assert.equal(second.code, 0, second.stderr);
  assert.deepEqual(forge.comments.map((comment) => comment.id), [100, ours.id]);
  assert.ok(
    forge.requests.some((request) =>
      request.method === "DELETE" && request.path.endsWith(`/comments/${ours.id + 1}`)
    ),
  );
});
