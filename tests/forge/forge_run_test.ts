/**
 * The forge's rules, for every writer together (issue 27), from `run()` in process against fake
 * forges on loopback: a few requests at once and GitHub's writes one at a time; GitHub's
 * secondary limit (a 403 with and without Retry-After) pausing every writer on a fake clock; a
 * create whose answer is lost; a comment endpoint that hangs at the end and on cancel; the merge
 * queue's head; GitLab's ref and pipeline; two overlapping runs of one pull request; a run link
 * that spells the key (issue 41).
 */

import assert from "node:assert/strict";
import { statusName } from "../../src/forge/writes.ts";
import {
  FORGE_COMMITS,
  githubPullRequestEnv,
  gitlabMergeRequestEnv,
  startFakeGithub,
} from "../support/fake_forge.ts";
import { hangUntil, startFakeStatusForge } from "../support/fake_status.ts";
import { FakeTime } from "../support/fake_time.ts";
import { type ForgeRunOptions, runAgainstForge } from "../support/forge_run.ts";
import { AGENT, type Harness, KEY } from "../support/run_harness.ts";
import { gitlabStatusErrors } from "../support/forge_schemas.ts";

const HEAD_SHA = FORGE_COMMITS.head;
const MERGE_SHA = FORGE_COMMITS.merge;
const QUEUE_SHA = "9999999999999999999999999999999999999999";

function agents(count: number): string[] {
  return Array.from(
    { length: count },
    (_, index) => `0b0c4a5e-8f4e-4a8e-9a53-${index.toString(16).padStart(12, "0")}`,
  );
}

function githubEnv(apiUrl: string, extra: Record<string, string> = {}) {
  return githubPullRequestEnv(apiUrl, extra);
}

// One in-process run against the fake forges (tests/support/forge_run.ts), with its real
// duration: every wait is virtual, so a run that waited out a budget still takes milliseconds.
async function runWith(options: ForgeRunOptions) {
  const started = performance.now();
  const result = await runAgainstForge(options);
  return { ...result, tookMs: performance.now() - started };
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
    // The comment's requests never answer: they hang until the client gives up, on virtual time.
    const time = new FakeTime();
    await using github = await startFakeStatusForge("github", {
      fault: (request, signal) =>
        /\/issues\//.test(request.path)
          ? time.hang(hangUntil(signal), { method: request.method, url: request.path })
          : undefined,
    });
    const ids = agents(3);
    let interruptedAt: number | undefined;
    const onRequest = (_: string, each: Harness) => {
      if (each.requests.length !== 8) return;
      interruptedAt = each.time.monotonic();
      each.interrupt.abort(new Error("SIGINT"));
    };
    const result = await runWith({
      time,
      args: [...ids.flatMap((id) => ["--agent", id]), "--pr-comment"],
      env: githubEnv(github.apiUrl),
      reads: cancel ? [{ status: "running" }] : [{ status: "completed", passed: true }],
      ...(cancel ? { onRequest } : {}),
    });
    assert.equal(github.checkRuns.size, 3, result.stderr);
    for (const each of github.checkRuns.values()) {
      assert.equal(each.status, "completed", result.stderr);
      assert.equal(each.conclusion, cancel ? "cancelled" : "success");
    }
    // The comment's requests hang (then answer 504): it may say so, after the statuses.
    const statuses = github.requests.filter((request) => /check-runs\/\d+$/.test(request.path));
    assert.ok(statuses.length >= 3, result.stderr);
    // On cancel, inside GitHub's window: SIGTERM 7.5 s after SIGINT, the kill 2.5 s later.
    if (cancel) {
      assert.ok(interruptedAt !== undefined, result.stderr);
      const finishing = time.monotonic() - interruptedAt;
      assert.ok(finishing < 7_500, `${finishing} ms after the interrupt`);
    }
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
      env: gitlabMergeRequestEnv(gitlab.apiUrl, {
        CI_MERGE_REQUEST_EVENT_TYPE: type,
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature",
        CI_COMMIT_SHA: sha,
        CI_COMMIT_REF_NAME: "feature",
        CI_PIPELINE_ID: "4242",
      }),
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

Deno.test("a run link that spells the key in its host in another case, full-width or percent-escaped reaches no forge request: check runs and comment masked", async () => {
  const fullWidth = KEY.replace(
    /[!-~]/g,
    (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0),
  );
  const escaped = [...KEY].map((char) => `%${char.charCodeAt(0).toString(16)}`).join("");
  for (const host of [KEY.toUpperCase(), fullWidth, escaped]) {
    await using github = await startFakeStatusForge("github");
    await using comments = await startFakeGithub();
    const url = `https://${host}.evil.example/r/1`;
    const service = {
      trigger: { run_id: "run_1", url },
      reads: [{ status: "completed", passed: true, extra: { url } }],
    };
    const statuses = await runWith({ env: githubEnv(github.apiUrl), ...service });
    const comment = await runWith({
      args: ["--agent", AGENT, "--pr-comment"],
      env: githubEnv(comments.apiUrl, { SERVICE_COMMIT_STATUS: "false" }),
      ...service,
    });
    assert.equal(statuses.code, 0, statuses.stderr);
    assert.equal(comment.code, 0, comment.stderr);
    const bodies = [
      ...github.requests.filter((request) => request.method !== "GET")
        .map((request) => JSON.stringify(request.body)),
      ...comments.writes.map((request) => request.body),
    ];
    // Two check-run writes (details_url and summary each), the comment (its link) and its final
    // edit (the link and the hidden history).
    assert.equal(bodies.length, 4, host);
    for (const body of bodies) {
      assert.ok(!body.toLowerCase().includes(KEY.toLowerCase()), `${host}: ${body}`);
      assert.match(body, /https:\/\/\*\*\*\.evil\.example\/r\/1/, host);
    }
    // The final comment's hidden history (base64url, which no mask reads) holds the masked link.
    const encoded = comments.writes.flatMap((request) =>
      /history:([A-Za-z0-9_-]+)/.exec(JSON.parse(request.body).body)?.slice(1) ?? []
    );
    assert.equal(encoded.length, 1, host);
    const history = new TextDecoder().decode(
      Uint8Array.fromBase64(encoded[0]!, { alphabet: "base64url" }),
    );
    assert.match(history, /"url":"https:\/\/\*\*\*\.evil\.example\/r\/1"/, host);
  }
});
