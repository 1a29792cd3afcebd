/**
 * End to end: the pull-request comment (issue 14) against the fake service and fake GitHub and
 * GitLab APIs on loopback, from `run()` in process on virtual time (tests/support/in_process.ts;
 * the service on the same clock), and from the real entry point where a signal is the point. Whatever happens to the comment, the exit
 * code is the gate's, every forge request carries the forge's token to the forge's origin only,
 * and neither secret crosses over or reaches an output.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { historyLine } from "../../src/forge/comment/history.ts";
import { gateMarker } from "../../src/forge/comment/history.ts";
import {
  type FakeComment,
  type FakeForge,
  FORGE_IDENTITIES,
  FORGE_TARGET,
  FORGE_TOKENS,
  startFakeGithub,
  startFakeGitlab,
} from "../support/fake_forge.ts";
import {
  AGENTS,
  defaultAgents,
  type FakeService,
  hang,
  KEYS,
  startFakeService,
} from "../support/fake_service.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { REFUSED_URL } from "../support/refused_address.ts";
import { type ProgramResult, runProgram, startProgram } from "../support/program.ts";

const HEAD_SHA = "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c";
const WORKFLOW = "quality gate";
const JOB = "gate";
const GITLAB_JOB = "quality-gate";

// A line the comment writes on stderr; none is written when the comment is off.
const COMMENT_LINE = /(pull|merge)-request comment/;

interface GithubEnvOptions {
  /** How the pull request is named: the event's payload (default) or the merge ref. */
  readonly via?: "event" | "ref" | "none";
  /** Variables to leave out or override. */
  readonly extra?: Readonly<Record<string, string>>;
  readonly without?: readonly string[];
}

// The environment of a GitHub Actions job on a pull request, with the comment turned on.
async function githubEnv(
  service: FakeService,
  forge: { readonly apiUrl: string },
  options: GithubEnvOptions = {},
): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: service.url,
    SERVICE_PR_COMMENT: "true",
    // A run that never ends fails the test in a minute rather than in half an hour.
    SERVICE_TIMEOUT_MINUTES: "1",
    GITHUB_ACTIONS: "true",
    GITHUB_REPOSITORY: FORGE_TARGET.repository,
    GITHUB_TOKEN: FORGE_TOKENS.github,
    GITHUB_API_URL: forge.apiUrl,
    GITHUB_WORKFLOW: WORKFLOW,
    GITHUB_JOB: JOB,
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ID: "1001",
    GITHUB_SHA: "0000000000000000000000000000000000000000",
  };
  const via = options.via ?? "event";
  if (via === "event") {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-pr-comment-" });
    const path = join(dir, "event.json");
    await Deno.writeTextFile(
      path,
      JSON.stringify({
        action: "synchronize",
        number: FORGE_TARGET.pullRequest,
        pull_request: {
          number: FORGE_TARGET.pullRequest,
          head: { sha: HEAD_SHA, ref: "feature/comment" },
        },
      }),
    );
    env.GITHUB_EVENT_PATH = path;
    env.GITHUB_REF = `refs/pull/${FORGE_TARGET.pullRequest}/merge`;
  } else if (via === "ref") {
    env.GITHUB_REF = `refs/pull/${FORGE_TARGET.pullRequest}/merge`;
  } else {
    env.GITHUB_REF = "refs/heads/main";
  }
  for (const name of options.without ?? []) delete env[name];
  return { ...env, ...options.extra };
}

// The environment of a GitLab merge request pipeline, with the comment turned on.
function gitlabEnv(
  service: FakeService,
  forge: { readonly apiUrl: string },
  extra: Readonly<Record<string, string>> = {},
): Record<string, string> {
  return {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: service.url,
    SERVICE_PR_COMMENT: "true",
    SERVICE_TIMEOUT_MINUTES: "1",
    GITLAB_CI: "true",
    CI: "true",
    CI_PROJECT_ID: FORGE_TARGET.projectId,
    CI_PROJECT_PATH: "acme/widgets",
    CI_MERGE_REQUEST_IID: String(FORGE_TARGET.mergeRequest),
    CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: HEAD_SHA,
    CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature/comment",
    CI_COMMIT_SHA: HEAD_SHA,
    CI_API_V4_URL: forge.apiUrl,
    CI_JOB_NAME: GITLAB_JOB,
    CI_JOB_URL: "https://gitlab.example/acme/widgets/-/jobs/7",
    SERVICE_GITLAB_TOKEN: FORGE_TOKENS.gitlab,
    // Off: the native GitLab files would land in the working directory; they are tested elsewhere.
    SERVICE_CI_NATIVE: "false",
    ...extra,
  };
}

function log(result: ProgramResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
}

// The lines of stderr about the comment.
function commentLines(result: ProgramResult): string[] {
  return result.stderr.split("\n").filter((line) => COMMENT_LINE.test(line));
}

// Every request the forge got carried its token, to its origin, and never the service's key;
// the service never got the forge's token.
function assertSecretsStayApart(
  forge: FakeForge,
  service: FakeService,
  kind: "github" | "gitlab",
): void {
  const host = new URL(forge.origin).host;
  for (const request of forge.requests) {
    const where = `${request.method} ${request.path}`;
    assert.equal(request.headers.host, host, where);
    if (kind === "github") {
      assert.equal(request.headers.authorization, `Bearer ${FORGE_TOKENS.github}`, where);
      assert.equal(request.headers["private-token"], undefined, where);
    } else {
      assert.equal(request.headers["private-token"], FORGE_TOKENS.gitlab, where);
      assert.equal(request.headers.authorization, undefined, where);
    }
    assert.match(request.headers["user-agent"] ?? "", /^service-ci\/\d+\.\d+\.\d+/, where);
    assert.equal(request.headers["x-api-key"], undefined, where);
    assert.ok(!JSON.stringify(request).includes(KEYS.ci), `the key reached the forge: ${where}`);
  }
  for (const request of service.requests) {
    const text = JSON.stringify(request);
    for (const token of Object.values(FORGE_TOKENS)) {
      assert.ok(!text.includes(token), `a forge token reached the service: ${request.path}`);
    }
  }
}

function assertNoSecretIn(text: string, where: string): void {
  for (const secret of [KEYS.ci, ...Object.values(FORGE_TOKENS)]) {
    assert.ok(!text.includes(secret), `a secret in ${where}:\n${text}`);
  }
}

// Every pull-request comment failure ends the same way: the exit code of the gate, and exactly
// one line (per attempt) saying what happened, what to do and that nothing else changed.
function assertOneLine(result: ProgramResult, expected: RegExp, lines = 1): void {
  assert.equal(result.code, 0, log(result));
  const found = commentLines(result);
  assert.equal(found.length, lines, log(result));
  for (const line of found) {
    assert.match(line, expected);
    assert.match(line, /The gate's verdict and exit code are not affected\.$/);
  }
  assertNoSecretIn(result.stdout + result.stderr, "the output");
  assert.match(result.stderr, /exit 0: 1 gate, 1 passed/);
}

// --- GitHub --------------------------------------------------------------------------------

Deno.test("on GitHub the comment is created with the run links, then edited with the verdicts", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(100) });
  await using github = await startFakeGithub({ comments: 3 });
  const dir = await Deno.makeTempDir({ prefix: "service-ci-pr-comment-" });
  const files = {
    junit: join(dir, "junit.xml"),
    output: join(dir, "github-output"),
    summary: join(dir, "github-summary"),
  };
  await Deno.writeTextFile(files.output, "");
  await Deno.writeTextFile(files.summary, "");

  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--json", "--junit", files.junit],
    {
      time,
      env: await githubEnv(service, github, {
        extra: { GITHUB_OUTPUT: files.output, GITHUB_STEP_SUMMARY: files.summary },
      }),
    },
  );

  assert.equal(result.code, 1, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.deepEqual(github.commentRequests.map((request) => `${request.method} ${request.path}`), [
    `GET /repos/acme/widgets/issues/42/comments?per_page=100`,
    `POST /repos/acme/widgets/issues/42/comments`,
    // The verdicts look again: an overlapping run's copy would be removed here.
    `GET /repos/acme/widgets/issues/42/comments?per_page=100`,
    `PATCH /repos/acme/widgets/issues/comments/5001`,
  ]);
  const marker = gateMarker({
    workflow: WORKFLOW,
    job: JOB,
    agents: [AGENTS.failing, AGENTS.passing],
  });
  const [, create, , edit] = github.commentRequests;
  assert.equal(create!.headers["content-type"], "application/json");
  const progress = (JSON.parse(create!.body) as { body: string }).body;
  assert.equal(progress.split("\n")[0], marker);
  assert.match(progress, /quality gates running/);
  assert.match(progress, new RegExp(HEAD_SHA));
  for (const run of service.runs.values()) {
    assert.ok(
      progress.includes(`(<${service.url}/dashboard/agents/${run.agentId}/runs/${run.runId}>)`),
      progress,
    );
  }
  assert.ok(!/passed|failed/.test(progress), progress);

  const final = (JSON.parse(edit!.body) as { body: string }).body;
  assert.equal(final.split("\n")[0], marker);
  assert.match(final, /quality gates failed/);
  assert.match(final, /✅ passed/);
  assert.match(final, /❌ failed/);
  assert.match(final, /Exit code 1: /);
  assert.match(final, /\[CI job\]\(<https:\/\/github\.com\/acme\/widgets\/actions\/runs\/1001>\)/);
  assert.deepEqual(github.comments.map((comment) => comment.body).slice(3), [final]);

  assertSecretsStayApart(github, service, "github");
  assertNoSecretIn(result.stdout, "stdout (--json)");
  assertNoSecretIn(result.stderr, "stderr");
  for (const [what, path] of Object.entries(files)) {
    assertNoSecretIn(await Deno.readTextFile(path), what);
  }
});

Deno.test("on GitHub the pull request is found from GITHUB_REF when the event names none", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const result = await runInProcess(["--agent", AGENTS.passing, "--pr-comment"], {
    time,
    env: await githubEnv(service, github, { via: "ref", without: ["SERVICE_PR_COMMENT"] }),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(github.writes.map((request) => request.method), ["POST", "PATCH"]);
  assert.match(github.comments[0]!.body, /quality gate passed/);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("on GitHub the gate's comment is found on the third page and edited, not duplicated", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] });
  const comments: FakeComment[] = Array.from({ length: 260 }, (_, index) => ({
    id: 1000 + index,
    // A reply quoting our comment does not count: only a first line that is the marker.
    body: index === 120 ? `> ${marker}\n> quoted` : `unrelated comment ${index + 1}`,
  }));
  comments[230] = { id: 1230, body: `${marker}\n### an earlier push` };
  await using github = await startFakeGithub({ comments });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), []);
  // Three pages for the in-progress comment, three again for the verdicts.
  const reads = github.commentRequests.filter((request) => request.method === "GET");
  assert.equal(reads.length, 6);
  assert.match(reads[2]!.path, /[?&]page=3\b/);
  assert.deepEqual(
    github.writes.map((request) => `${request.method} ${request.path}`),
    [
      "PATCH /repos/acme/widgets/issues/comments/1230",
      "PATCH /repos/acme/widgets/issues/comments/1230",
    ],
  );
  assert.equal(github.comments.length, 260);
  assert.match(github.comments[230]!.body, /quality gate passed/);
  assert.equal(github.comments[120]!.body, `> ${marker}\n> quoted`);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("two gates with different agents on one pull request keep two comments", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const first = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });
  const second = await runInProcess(["--agent", AGENTS.passing, "--agent", AGENTS.failing], {
    time,
    env: await githubEnv(service, github),
  });
  // The first gate again (the next push): it edits its own comment.
  const again = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(first.code, 0, log(first));
  assert.equal(second.code, 1, log(second));
  assert.equal(again.code, 0, log(again));
  assert.equal(github.comments.length, 2);
  const [one, two] = github.comments;
  assert.equal(
    one!.body.split("\n")[0],
    gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] }),
  );
  assert.equal(
    two!.body.split("\n")[0],
    gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing, AGENTS.failing] }),
  );
  assert.match(one!.body, /quality gate passed/);
  assert.match(two!.body, /quality gates failed/);
  assert.equal(github.commentRequests.filter((request) => request.method === "POST").length, 2);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("two matrix legs with --pr-comment-key keep two comments, each heading naming its leg", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  for (const leg of ["linux", "windows"]) {
    const result = await runInProcess(["--agent", AGENTS.failing, "--pr-comment-key", leg], {
      time,
      env: await githubEnv(service, github),
    });
    assert.equal(result.code, 1, log(result));
  }
  assert.equal(github.comments.length, 2);
  const headings = github.comments.map((comment) =>
    comment.body.split("\n").find((line) => line.startsWith("### "))
  );
  assert.deepEqual(headings, [
    "### linux: ❌ service-ci: quality gate failed",
    "### windows: ❌ service-ci: quality gate failed",
  ]);
});

Deno.test("the forge token is masked everywhere, also when the service echoes it", async () => {
  const time = new FakeTime();
  const echo = "5d4c3b2a-1f0e-4d9c-8b7a-6f5e4d3c2b1a";
  const base = defaultAgents(50).find((agent) => agent.id === AGENTS.passing)!;
  await using service = await startFakeService({
    now: time.now,
    agents: [{
      ...base,
      id: echo,
      // A verdict that is not a boolean is quoted in the reason; the link is shown everywhere.
      finished: (run) => ({
        status: "completed",
        results: { gate: { passed: FORGE_TOKENS.github } },
        url: `${service.url}/dashboard/${run.runId}?t=${FORGE_TOKENS.github}&k=${KEYS.ci}`,
      }),
    }],
  });
  // The trigger's answer, which the in-progress comment shows, echoes them too.
  service.script({
    method: "POST",
    answer: async (_request, next) => {
      const run = await (await next()).json() as Record<string, unknown>;
      return Response.json(
        { ...run, url: `${run.url}?t=${FORGE_TOKENS.github}&k=${KEYS.ci}` },
        { status: 201 },
      );
    },
  });
  await using github = await startFakeGithub();
  const dir = await Deno.makeTempDir({ prefix: "service-ci-pr-comment-" });
  const files = {
    junit: join(dir, "junit.xml"),
    output: join(dir, "github-output"),
    summary: join(dir, "github-summary"),
  };

  const result = await runInProcess(["--agent", echo, "--json", "--junit", files.junit], {
    time,
    env: await githubEnv(service, github, {
      extra: { GITHUB_OUTPUT: files.output, GITHUB_STEP_SUMMARY: files.summary },
    }),
  });

  assert.equal(result.code, 3, log(result));
  assert.match(result.stdout, /results\.gate\.passed is the string \\"\*\*\*\\"/);
  assert.match(result.stdout, /\?t=\*\*\*&k=\*\*\*/);
  assertNoSecretIn(result.stdout, "stdout (--json)");
  assertNoSecretIn(result.stderr, "stderr");
  // The summary escapes `_` as Markdown: a mask applied after that would miss the token.
  for (const [what, path] of Object.entries(files)) {
    assertNoSecretIn(await Deno.readTextFile(path), what);
  }
  assert.deepEqual(github.writes.map((request) => request.method), ["POST", "PATCH"]);
  for (const write of github.writes) assertNoSecretIn(write.body, "the comment");
  assert.match(github.writes[0]!.body, /\?t=\*\*\*&amp;k=\*\*\*/);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("without --pr-comment or SERVICE_PR_COMMENT no request reaches the forge", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const results = await Promise.all([undefined, "false"].map(async (value) => {
    const env = await githubEnv(service, github, { without: ["SERVICE_PR_COMMENT"] });
    if (value !== undefined) env.SERVICE_PR_COMMENT = value;
    return await runInProcess(["--agent", AGENTS.passing], { time, env });
  }));

  for (const result of results) {
    assert.equal(result.code, 0, log(result));
    assert.deepEqual(commentLines(result), [], log(result));
    assertNoSecretIn(result.stdout + result.stderr, "the output");
  }
  assert.deepEqual(github.requests, []);
});

Deno.test("a build that is not for a pull request says so in one line and asks nothing", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github, { via: "none" }),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [
    "service-ci: no pull-request comment: this build is not for a pull request (no pull request number was detected; --pull-request <n> names one)",
  ]);
  assert.deepEqual(github.requests, []);
});

Deno.test("without GITHUB_TOKEN one line says how to give one, and nothing is sent", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github, { without: ["GITHUB_TOKEN"] }),
  });

  assert.equal(result.code, 0, log(result));
  const lines = commentLines(result);
  assert.equal(lines.length, 1, log(result));
  assert.match(lines[0]!, /GITHUB_TOKEN is not set; set it to \$\{\{ github\.token \}\}/);
  assert.match(lines[0]!, /permissions: pull-requests: write/);
  assert.deepEqual(github.requests, []);
});

Deno.test("a read-only token (a fork's pull request) is one line naming pull-requests: write", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub({ readOnly: true });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assertOneLine(
    result,
    /^service-ci: the pull-request comment was not written: GitHub answered POST \S+ with 403: Resource not accessible by integration\. Grant the job `permissions: pull-requests: write`/,
  );
  // It gives up after the refusal: the verdicts do not try again.
  assert.deepEqual(github.commentRequests.map((request) => request.method), ["GET", "POST"]);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("a repository the token cannot see (404) is one line, and nothing more is tried", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github, { extra: { GITHUB_REPOSITORY: "acme/elsewhere" } }),
  });

  assertOneLine(
    result,
    /^service-ci: the pull-request comment was not written: GitHub answered GET \/repos\/acme\/elsewhere\/issues\/42\/comments with 404: Not Found\. The token cannot see this repository or pull request/,
  );
  assert.equal(github.commentRequests.length, 1);
  assertSecretsStayApart(github, service, "github");
});

Deno.test("a used-up rate limit that resets after the time left gives the comment up, in one line that asks for no permission", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  const reset = String(Math.floor(Date.now() / 1000) + 20 * 60);
  github.script({
    times: 10,
    answer: () =>
      Response.json({ message: "API rate limit exceeded for installation." }, {
        status: 403,
        headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": reset },
      }),
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  // GitHub's reset is the pause: every request waits for it, and once the time left to finish
  // ends before it, what waits is given up; one line says how many and why.
  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  const lines = result.stderr.split("\n").filter((line) => /rate limit/.test(line));
  assert.equal(lines.length, 1, log(result));
  assert.match(
    lines[0]!,
    /^service-ci: GitHub asked to wait out a rate limit past the time left to finish \(GitHub answered GET \S+ with 403: API rate limit exceeded for installation\. \(the limit resets in (19|20) min\)\); 2 requests were given up\. The gate's verdict and exit code are not affected\.$/,
  );
  assert.doesNotMatch(result.stderr, /permission|pull-requests: write/);
  assert.deepEqual(github.commentRequests.map((request) => request.method), ["GET"]);
});

Deno.test("a short Retry-After is waited out and the comment is written", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  github.script({
    method: "GET",
    answer: () =>
      Response.json({ message: "You have exceeded a secondary rate limit." }, {
        status: 403,
        headers: { "retry-after": "1" },
      }),
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.deepEqual(github.commentRequests.map((request) => request.method), [
    "GET",
    "GET",
    "POST",
    "GET",
    "PATCH",
  ]);
  assert.match(github.comments[0]!.body, /quality gate passed/);
});

Deno.test("5xx answers are retried a bounded number of times, then one line", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  // Retry-After: 0 keeps the test from waiting out the real backoff (1 s, then 2 s).
  github.script({
    times: 100,
    answer: () =>
      Response.json({ message: "Server Error" }, {
        status: 502,
        headers: { "retry-after": "0" },
      }),
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assertOneLine(
    result,
    /^service-ci: the pull-request comment was not written: GitHub answered GET \S+ with 502: Server Error\./,
  );
  // Three attempts for the in-progress comment, three for the verdicts, then it stops.
  assert.deepEqual(github.commentRequests.map((request) => request.method), Array(6).fill("GET"));
});

Deno.test("a 5xx on creating the comment looks again before creating it a second time", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  // The comment is made, but the answer is lost.
  github.script({
    method: "POST",
    answer: async (_request, next) => {
      await next();
      return Response.json({ message: "Bad Gateway" }, { status: 502 });
    },
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.deepEqual(github.commentRequests.map((request) => request.method), [
    "GET",
    "POST",
    "GET",
    "PATCH",
    "GET",
    "PATCH",
  ]);
  assert.equal(github.comments.length, 1);
  assert.match(github.comments[0]!.body, /quality gate passed/);
});

Deno.test("an unreachable API is a network error: retried, then one line", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, { apiUrl: REFUSED_URL }),
  });

  assertOneLine(
    result,
    /^service-ci: the pull-request comment was not written: GitHub could not be reached \(.+\)\./,
  );
});

// --- GitLab --------------------------------------------------------------------------------

Deno.test("on GitLab the note is created with the run links, then edited with the verdicts", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(100) });
  await using gitlab = await startFakeGitlab({
    comments: [{ id: 10, body: "added 1 commit", system: true }],
  });

  const result = await runInProcess(["--agent", AGENTS.passing, "--agent", AGENTS.failing], {
    time,
    env: gitlabEnv(service, gitlab),
  });

  assert.equal(result.code, 1, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  const notes = "/api/v4/projects/1234/merge_requests/7/notes";
  assert.deepEqual(gitlab.commentRequests.map((request) => `${request.method} ${request.path}`), [
    `GET ${notes}?per_page=100&sort=asc&order_by=created_at`,
    `POST ${notes}`,
    `GET ${notes}?per_page=100&sort=asc&order_by=created_at`,
    `PUT ${notes}/5001`,
  ]);
  const marker = gateMarker({
    workflow: "",
    job: GITLAB_JOB,
    agents: [AGENTS.passing, AGENTS.failing],
  });
  const progress = (JSON.parse(gitlab.commentRequests[1]!.body) as { body: string }).body;
  assert.equal(progress.split("\n")[0], marker);
  assert.match(progress, /quality gates running/);
  for (const run of service.runs.values()) {
    assert.ok(
      progress.includes(`(<${service.url}/dashboard/agents/${run.agentId}/runs/${run.runId}>)`),
      progress,
    );
  }
  const final = gitlab.comments[1]!.body;
  assert.equal(final.split("\n")[0], marker);
  assert.match(final, /quality gates failed/);
  assert.match(final, /Exit code 1: /);
  assertSecretsStayApart(gitlab, service, "gitlab");
  assertNoSecretIn(result.stdout + result.stderr, "the output");
});

Deno.test("on GitLab the gate's note is found on the third page (x-next-page) and edited", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: "", job: GITLAB_JOB, agents: [AGENTS.passing] });
  const comments: FakeComment[] = Array.from({ length: 250 }, (_, index) => ({
    id: 1000 + index,
    body: `note ${index + 1}`,
  }));
  comments[210] = { id: 1210, body: `${marker}\nold` };
  await using gitlab = await startFakeGitlab({ comments });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: gitlabEnv(service, gitlab),
  });

  assert.equal(result.code, 0, log(result));
  const reads = gitlab.commentRequests.filter((request) => request.method === "GET");
  assert.equal(reads.length, 6);
  assert.match(reads[2]!.path, /[?&]page=3\b/);
  assert.deepEqual(gitlab.writes.map((request) => request.method), ["PUT", "PUT"]);
  assert.equal(gitlab.comments.length, 250);
  assert.match(gitlab.comments[210]!.body, /quality gate passed/);
  assertSecretsStayApart(gitlab, service, "gitlab");
});

Deno.test("on GitLab a token without the right to comment is one line naming the api scope", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using gitlab = await startFakeGitlab({ readOnly: true });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: gitlabEnv(service, gitlab),
  });

  assertOneLine(
    result,
    /^service-ci: the merge-request comment was not written: GitLab answered POST \S+ with 403: .*SERVICE_GITLAB_TOKEN needs the api scope/,
  );
  assertSecretsStayApart(gitlab, service, "gitlab");
});

Deno.test("on GitLab without SERVICE_GITLAB_TOKEN or a merge request, one line says why", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using gitlab = await startFakeGitlab();

  const env = gitlabEnv(service, gitlab);
  delete env.CI_MERGE_REQUEST_IID;
  const [noToken, noMergeRequest] = await Promise.all([
    runInProcess(["--agent", AGENTS.passing], {
      time,
      env: gitlabEnv(service, gitlab, { SERVICE_GITLAB_TOKEN: "" }),
    }),
    runInProcess(["--agent", AGENTS.passing], { time, env }),
  ]);

  assert.equal(noToken.code, 0, log(noToken));
  assert.match(
    commentLines(noToken).join("\n"),
    /^service-ci: no merge-request comment: SERVICE_GITLAB_TOKEN is not set; .*api scope \(CI_JOB_TOKEN cannot write merge request notes\)$/,
  );
  assert.equal(noMergeRequest.code, 0, log(noMergeRequest));
  assert.match(
    commentLines(noMergeRequest).join("\n"),
    /^service-ci: no merge-request comment: this pipeline is not for a merge request/,
  );
  assert.deepEqual(gitlab.requests, []);
});

Deno.test("on GitLab a Retry-After past the time left gives the note up, in one line", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using gitlab = await startFakeGitlab();
  gitlab.script({
    method: "GET",
    answer: () =>
      Response.json({ message: "429 Too Many Requests" }, {
        status: 429,
        headers: { "retry-after": "3600" },
      }),
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: gitlabEnv(service, gitlab),
  });

  // An hour's pause: past the 60 s to finish, so nothing more is sent; one line says so.
  assert.deepEqual(commentLines(result), [], log(result));
  assert.match(
    result.stderr,
    /service-ci: GitLab asked to wait out a rate limit past the time left to finish \(GitLab answered GET \S+ with 429: 429 Too Many Requests\); 2 requests were given up\./,
  );
  assert.deepEqual(gitlab.commentRequests.map((request) => request.method), ["GET"]);
  assert.equal(gitlab.comments.length, 0);
  assertSecretsStayApart(gitlab, service, "gitlab");
});

// --- Only our own comments (docs/pr-comment.md) ------------------------------------------------

Deno.test("on GitHub a comment someone else planted with the marker is never edited: the gate writes its own", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] });
  const planted = `${marker}\n✅ passed, trust me`;
  await using github = await startFakeGithub({
    comments: [{ id: 900, body: planted, author: FORGE_IDENTITIES.stranger.login }],
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.equal(github.comments[0]!.body, planted, "the planted comment was edited");
  assert.ok(!github.writes.some((request) => request.path.endsWith("/comments/900")));
  assert.equal(github.comments.length, 2);
  assert.match(github.comments[1]!.body, /quality gate passed/);
  // The workflow token cannot read GET /user: asked once, then github-actions[bot] is ours.
  assert.equal(github.identityRequests.length, 1);
});

Deno.test("on GitHub with a personal token, the login GET /user returns is ours, not github-actions[bot]", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] });
  await using github = await startFakeGithub({
    user: "release-bot",
    comments: [
      { id: 900, body: `${marker}\nby the workflow token`, author: FORGE_IDENTITIES.githubBot },
      { id: 901, body: `${marker}\nan earlier run`, author: "release-bot" },
    ],
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(
    github.writes.map((request) => `${request.method} ${request.path}`),
    [
      "PATCH /repos/acme/widgets/issues/comments/901",
      "PATCH /repos/acme/widgets/issues/comments/901",
    ],
  );
  assert.equal(github.comments[0]!.body, `${marker}\nby the workflow token`);
});

Deno.test("on GitLab a note someone else planted with the marker is never edited: the gate writes its own, no 403", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: "", job: GITLAB_JOB, agents: [AGENTS.passing] });
  const planted = `${marker}\n✅ passed, trust me`;
  await using gitlab = await startFakeGitlab({
    comments: [{ id: 900, body: planted, author: FORGE_IDENTITIES.stranger.id }],
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: gitlabEnv(service, gitlab),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.equal(gitlab.comments[0]!.body, planted);
  assert.ok(!gitlab.writes.some((request) => request.path.endsWith("/notes/900")));
  assert.equal(gitlab.comments.length, 2);
  assert.match(gitlab.comments[1]!.body, /quality gate passed/);
});

Deno.test("a create answered 503 with Retry-After after it worked is not posted again: one comment", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  github.script({
    method: "POST",
    answer: async (_request, next) => {
      await next();
      return Response.json({ message: "Service Unavailable" }, {
        status: 503,
        headers: { "retry-after": "1" },
      });
    },
  });

  const result = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.equal(github.comments.length, 1, "posted twice");
  assert.equal(github.writes.filter((request) => request.method === "POST").length, 1);
  assert.match(github.comments[0]!.body, /quality gate passed/);
});

// --- The cancel window ---------------------------------------------------------------------------

Deno.test("SIGTERM with a forge that never answers: the summary and the runs still going first, exit 143 within seconds", async () => {
  const slow = { id: AGENTS.passing };
  await using service = await startFakeService({ agents: defaultAgents(120_000) });
  await using github = await startFakeGithub();
  // The in-progress comment is written; every later request to the forge hangs.
  github.script({
    path: "/comments",
    times: 1_000,
    answer: (request, next) => github.writes.length === 0 ? next() : hang(request.signal),
  });
  const program = await startProgram(["--agent", slow.id], {
    env: await githubEnv(service, github),
  });
  try {
    await program.waitForStderr("triggered run run_0001");
    while (github.writes.length === 0) await new Promise((done) => setTimeout(done, 50));
  } catch (error) {
    program.process.kill("SIGKILL");
    await program.finished();
    throw error;
  }
  const sent = performance.now();
  program.process.kill("SIGTERM");
  const result = await program.finished();
  const took = performance.now() - sent;
  assert.equal(result.code, 143, log(result));
  // Within GitHub's window: SIGKILL comes 2.5 s after SIGTERM at the latest, 10 s after SIGINT.
  assert.ok(took < 5_000, `exited ${took} ms after SIGTERM`);
  const still = result.stderr.indexOf(`run run_0001 of agent ${slow.id} is still going`);
  const summary = result.stderr.indexOf("exit 143:");
  const late = result.stderr.indexOf("did not finish within 2 s");
  assert.ok(still > 0 && summary > 0, log(result));
  assert.ok(late > still && late > summary, `the summary came after the comment:\n${log(result)}`);
});

Deno.test("a refused trigger shows in the in-progress comment as refused, with its reason, not as running", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(1_500) });
  await using github = await startFakeGithub();
  const unknown = "00000000-0000-4000-8000-000000000000";

  const result = await runInProcess(["--agent", AGENTS.passing, "--agent", unknown], {
    time,
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 3, log(result));
  const create = github.writes.find((request) => request.method === "POST");
  assert.ok(create, log(result));
  const progress = (JSON.parse(create.body) as { body: string }).body;
  assert.match(progress, /1 run triggered for .*; 1 not triggered/);
  const rows = progress.split("\n").filter((line) => line.startsWith("|"));
  const refused = rows.find((row) => row.includes(unknown.slice(0, 8)));
  const running = rows.find((row) => row.includes(AGENTS.passing.slice(0, 8)));
  assert.ok(refused && running, progress);
  assert.doesNotMatch(refused, /running/);
  assert.match(refused, /not checked.*404/i);
  assert.match(running, /⏳ running/);
});

Deno.test("two legs of a matrix with --pr-comment-key keep a comment each, and each edits its own", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  for (const push of [1, 2]) {
    for (const leg of ["linux", "macos"]) {
      const result = await runInProcess(["--agent", AGENTS.passing, "--pr-comment-key", leg], {
        time,
        env: await githubEnv(service, github),
      });
      assert.equal(result.code, 0, `push ${push}, ${leg}: ${log(result)}`);
    }
  }
  assert.equal(github.comments.length, 2);
  const markers = github.comments.map((comment) => comment.body.split("\n")[0]);
  assert.notEqual(markers[0], markers[1]);
  assert.equal(
    markers[0],
    gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing], key: "linux" }),
  );
  // Without a key the marker is 1.1's, so comments written before keep being edited.
  assert.equal(
    gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] }),
    gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing], key: undefined }),
  );
  assert.equal(github.writes.filter((request) => request.method === "POST").length, 2);
});

Deno.test("the next push's comment shows the verdict of the last one, then its own, at the commit the CI names", async () => {
  await using service = await startFakeService({ agents: defaultAgents(50) });
  const marker = gateMarker({ workflow: WORKFLOW, job: JOB, agents: [AGENTS.passing] });
  const earlier = historyLine(
    new Map([[AGENTS.passing, [{
      sha: "abc1234abc1234abc1234abc1234abc1234abc12",
      outcome: "failed" as const,
      url: "https://eval.example/runs/run_1",
    }]]]),
  );
  await using github = await startFakeGithub({
    comments: [{
      id: 900,
      body: `${marker}\n${earlier}\n\n### ❌ service-ci: quality gate failed\n`,
    }],
  });

  const result = await runProgram(["--agent", AGENTS.passing], {
    env: await githubEnv(service, github),
  });

  assert.equal(result.code, 0, log(result));
  assert.deepEqual(commentLines(result), [], log(result));
  assert.equal(github.comments.length, 1);
  const body = github.comments[0]!.body;
  const run = [...service.runs.values()][0]!;
  assert.ok(
    body.includes(
      `- ${
        AGENTS.passing.replaceAll("-", "\\-")
      }: ❌ at [\`abc1234\`](<https://eval.example/runs/run_1>) → ` +
        `✅ at [\`${
          HEAD_SHA.slice(0, 7)
        }\`](<${service.url}/dashboard/agents/${run.agentId}/runs/${run.runId}>)`,
    ),
    body,
  );
});
