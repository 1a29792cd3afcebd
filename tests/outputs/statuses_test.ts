/**
 * The commit statuses (issue 22 §1) from `run()` in process, against fake GitHub, GitLab and
 * Bitbucket APIs on loopback: created, then completed; GitHub's fallback to commit statuses;
 * stable names; the head SHA, not the merge SHA; tokens only to their origin; and every failure
 * one line that never touches the exit code.
 */

import assert from "node:assert/strict";
import { Ajv, type ErrorObject } from "npm:ajv@8.17.1";
import addFormatsModule from "npm:ajv-formats@3.0.1";
// @ts-types="npm:@types/markdown-it@14.1.2"
import MarkdownIt from "npm:markdown-it@14.1.0";
import { statusName } from "../../src/forge/writes.ts";
import { agentSummary } from "../../src/report/markdown.ts";
import {
  FORGE_COMMITS,
  FORGE_TARGET,
  FORGE_TOKENS,
  githubPullRequestEnv,
  gitlabMergeRequestEnv,
} from "../support/fake_forge.ts";
import {
  type FakeStatusForge,
  hangUntil,
  startFakeStatusForge,
  type StatusRequest,
} from "../support/fake_status.ts";
import { FakeTime } from "../support/fake_time.ts";
import { type ForgeRunOptions, runAgainstForge } from "../support/forge_run.ts";
import { startFakeProxy } from "../support/native_io.ts";
import { makeAgent, makeReport } from "../support/report_fixtures.ts";
import { AGENT, KEY, type Read } from "../support/run_harness.ts";

// ajv-formats is CommonJS: its function is the default export's own default (as in schema_test).
const addFormats = addFormatsModule.default ?? addFormatsModule;

const HEAD_SHA = FORGE_COMMITS.head;
const SECOND = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d";
const DASHBOARD = "https://dash.example/r/1";

// A GitHub Actions job on a pull_request event: GITHUB_SHA is the merge commit, the event holds
// the head.
function githubEnv(forge: FakeStatusForge, extra: Record<string, string> = {}) {
  return githubPullRequestEnv(forge.apiUrl, extra);
}

function gitlabEnv(forge: FakeStatusForge, extra: Record<string, string> = {}) {
  return gitlabMergeRequestEnv(forge.apiUrl, extra);
}

// One in-process run against the fake forges (tests/support/forge_run.ts), with the lines of
// its commit statuses and check runs.
async function runWith(options: ForgeRunOptions) {
  const { code, stderr } = await runAgainstForge(options);
  return {
    code,
    stderr,
    lines: stderr.split("\n").filter((line) => /commit status|check run/i.test(line)),
  };
}

const twoAgents = ["--agent", AGENT, "--agent", SECOND];

// A Bitbucket Pipelines step on HEAD_SHA with --commit-status, its proxy at `proxy`, the CI's own
// channels off unless `extra` turns them on; `extra` names the repository.
function bitbucketEnv(proxy: string, extra: Record<string, string>): Record<string, string> {
  return {
    SERVICE_COMMIT_STATUS: "true",
    SERVICE_CI_NATIVE: "false",
    BITBUCKET_BUILD_NUMBER: "7",
    BITBUCKET_COMMIT: HEAD_SHA,
    SERVICE_BITBUCKET_PROXY: proxy,
    ...extra,
  };
}

// bitbucketEnv with the CI's own channels on: Code Insights shares the statuses' client.
function withCodeInsights(proxy: string): Record<string, string> {
  return bitbucketEnv(proxy, {
    SERVICE_CI_NATIVE: "true",
    BITBUCKET_WORKSPACE: "acme",
    BITBUCKET_REPO_SLUG: "widgets",
  });
}

function writes(forge: FakeStatusForge): StatusRequest[] {
  return forge.requests.filter((request) => request.method !== "GET");
}

Deno.test("GitHub: one check run per agent, in_progress on the head commit, then completed with the verdict and the summary", async () => {
  await using github = await startFakeStatusForge("github");
  const result = await runWith({ args: twoAgents, env: githubEnv(github) });

  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.lines, []);
  const creates = writes(github).filter((request) => request.method === "POST");
  assert.equal(creates.length, 2);
  for (const [index, agent] of [AGENT, SECOND].entries()) {
    const create = creates.find((request) => request.body.name === statusName(agent));
    assert.ok(create, `a check run for ${agent}`);
    assert.equal(create.path, `/repos/${FORGE_TARGET.repository}/check-runs`);
    assert.equal(create.body.head_sha, HEAD_SHA, "the pull request's head, not the merge commit");
    assert.equal(create.body.status, "in_progress");
    assert.equal(create.body.details_url, DASHBOARD);
    const id = [...github.checkRuns.entries()].find(([, each]) => each.name === statusName(agent))
      ?.[0];
    const update = writes(github).find((request) =>
      request.method === "PATCH" && request.path.endsWith(`/check-runs/${id}`)
    );
    assert.ok(update, `check run ${index + 1} completed`);
    assert.equal(update.body.status, "completed");
    assert.equal(update.body.conclusion, "success");
    const output = update.body.output as { title: string; summary: string };
    assert.equal(output.title, "quality gate passed");
    // The agent's own verdict first, never the whole job's; one line for the others.
    assert.match(output.summary, /^✅ quality gate passed: agent `/);
    assert.ok(output.summary.split("\n")[0]!.includes(`\`${agent}\``));
    assert.match(output.summary, /1 other agent in this gate: see \[the job's summary\]/);
    assert.doesNotMatch(output.summary, /\| Agent \| Run \|/);
  }
  // Created before completed, for each agent.
  for (const agent of [AGENT, SECOND]) {
    const order = writes(github).flatMap((request) =>
      request.body.name === statusName(agent) ||
        (request.method === "PATCH" &&
          github.checkRuns.get(Number(request.path.split("/").pop()))?.name === statusName(agent))
        ? [request.method]
        : []
    );
    assert.deepEqual(order, ["POST", "PATCH"]);
  }
  assert.ok(!github.requests.some((request) => JSON.stringify(request).includes(KEY)));
});

Deno.test("GitHub: a failed gate is failure, one that could not be checked is failure too (never neutral), and the exit code is the gate's", async () => {
  const cases: { reads: Read[]; code: number; conclusion: string; title: string }[] = [
    {
      reads: [{ status: "completed", passed: false }],
      code: 1,
      conclusion: "failure",
      title: "quality gate failed",
    },
    {
      reads: [{ status: "completed", passed: "maybe" }],
      code: 3,
      conclusion: "failure",
      title: "quality gate could not be checked",
    },
  ];
  for (const each of cases) {
    await using github = await startFakeStatusForge("github");
    const result = await runWith({ reads: each.reads, env: githubEnv(github) });
    assert.equal(result.code, each.code, result.stderr);
    const [run] = [...github.checkRuns.values()];
    assert.equal(run?.conclusion, each.conclusion);
    assert.equal((run?.output as { title: string }).title, each.title);
  }
});

Deno.test("GitHub: check runs refused (403) fall back to commit statuses with one line, pending then the verdict", async () => {
  await using github = await startFakeStatusForge("github", { checksForbidden: true });
  const result = await runWith({
    args: twoAgents,
    reads: [{ status: "completed", passed: false }],
    env: githubEnv(github),
  });

  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.lines.length, 1, result.stderr);
  assert.match(
    result.lines[0]!,
    /^service-ci: GitHub did not let the token create check runs \(.*403.*\); commit statuses instead — give the job `checks: write` for check runs$/,
  );
  const statuses = writes(github).filter((request) => request.path.includes("/statuses/"));
  for (const agent of [AGENT, SECOND]) {
    const mine = statuses.filter((request) => request.body.context === statusName(agent));
    assert.deepEqual(mine.map((request) => request.body.state), ["pending", "failure"]);
    assert.ok(mine.every((request) => request.path.endsWith(`/statuses/${HEAD_SHA}`)));
    assert.equal(mine[0]!.body.target_url, DASHBOARD);
  }
});

Deno.test("GitHub: with statuses refused as well, one more line says to grant statuses: write, and nothing more is tried", async () => {
  await using github = await startFakeStatusForge("github", {
    checksForbidden: true,
    statusesForbidden: true,
  });
  const result = await runWith({ env: githubEnv(github) });

  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.lines.length, 2, result.stderr);
  assert.match(
    result.lines[1]!,
    /the GitHub commit statuses were not written: .*403.*statuses: write/,
  );
  assert.match(result.lines[1]!, /The gate's verdict and exit code are not affected\.$/);
  // The in-progress check run and status were refused; the final ones are not attempted.
  assert.deepEqual(writes(github).map((request) => request.path.split("/")[4]), [
    "check-runs",
    "statuses",
  ]);
});

Deno.test("GitHub: the check runs' names are the same on every run (branch protection can require them)", async () => {
  const names: string[][] = [];
  for (const args of [twoAgents, ["--agent", SECOND.toUpperCase(), "--agent", AGENT]]) {
    await using github = await startFakeStatusForge("github");
    const result = await runWith({ args, env: githubEnv(github) });
    assert.equal(result.code, 0, result.stderr);
    names.push([...github.checkRuns.values()].map((each) => String(each.name)).sort());
  }
  assert.deepEqual(names[0], [statusName(AGENT), statusName(SECOND)].sort());
  assert.deepEqual(names[1], names[0]);
  assert.equal(statusName(AGENT), `service-ci / ${AGENT}`);
});

Deno.test("GitHub: a redirect to another origin is refused, and the other server never sees the token", async () => {
  await using elsewhere = await startFakeStatusForge("github");
  await using github = await startFakeStatusForge("github", {
    fault: (request) =>
      new Response(null, {
        status: 307,
        headers: { location: `${elsewhere.origin}${request.path}` },
      }),
  });
  const result = await runWith({ env: githubEnv(github) });

  assert.equal(result.code, 0, result.stderr);
  assert.equal(elsewhere.requests.length, 0);
  assert.equal(result.lines.length, 1, result.stderr);
  assert.match(
    result.lines[0]!,
    /redirected to http:\/\/127\.0\.0\.1:\d+; the token is only sent to/,
  );
  assert.ok(!result.stderr.includes(FORGE_TOKENS.github));
  for (const request of github.requests) {
    assert.equal(request.headers.authorization, `Bearer ${FORGE_TOKENS.github}`);
    assert.ok(!JSON.stringify(request).includes(KEY));
  }
});

Deno.test("every failure of the forge is one line and never changes the exit code: 500, 401, no answer", async () => {
  const faults: {
    name: string;
    fault: (request: StatusRequest, signal: AbortSignal) => Response | Promise<Response>;
    line: RegExp;
  }[] = [
    {
      name: "500",
      fault: () => Response.json({ message: "boom" }, { status: 500 }),
      line: /with 500: boom\. The gate's verdict/,
    },
    {
      name: "401",
      fault: () => Response.json({ message: "Bad credentials" }, { status: 401 }),
      line: /with 401: Bad credentials\. Check GITHUB_TOKEN/,
    },
    {
      name: "hang",
      fault: (_, signal) => hangUntil(signal),
      line: /GitHub could not be reached/,
    },
  ];
  for (const each of faults) {
    for (
      const reads of [[{ status: "completed", passed: true }], [{
        status: "completed",
        passed: false,
      }]]
    ) {
      // A forge that does not answer says so to virtual time: the request times out on it.
      const time = new FakeTime();
      await using github = await startFakeStatusForge("github", {
        fault: (request, signal) => {
          const answer = each.fault(request, signal);
          return answer instanceof Promise
            ? time.hang(answer, { method: request.method, url: request.path })
            : answer;
        },
      });
      const result = await runWith({
        time,
        args: ["--agent", AGENT, "--request-timeout-seconds", "1"],
        reads,
        env: githubEnv(github),
      });
      const expected = reads[0]!.passed ? 0 : 1;
      assert.equal(result.code, expected, `${each.name}: ${result.stderr}`);
      assert.equal(result.lines.length, 1, `${each.name}: ${result.stderr}`);
      assert.match(
        result.lines[0]!,
        /^service-ci: the GitHub commit statuses were not written: /,
        `${each.name} ${expected}: ${result.stderr}`,
      );
      assert.match(result.lines[0]!, each.line, each.name);
    }
  }
});

// The flake of stop 38: a hanging request's rejection, after its timer aborted it, came a macrotask
// late under load, and virtual time ran on to the 45 s budget meanwhile.
Deno.test("virtual time waits for a given-up request's rejection, however late the event loop delivers it", async () => {
  const time = new FakeTime();
  const url = "http://127.0.0.1:9/check-runs";
  const lateRefusal: typeof fetch = (_, init) =>
    new Promise((_, reject) =>
      init!.signal!.addEventListener(
        "abort",
        () => setTimeout(() => reject(init!.signal!.reason), 20),
      )
    );
  const order: string[] = [];
  const request = time.heldFetch(lateRefusal)(url, { signal: time.timeout(1_000) })
    .catch(() => order.push("rejected"));
  void time.hang(new Promise(() => {}), { method: "GET", url: "/check-runs" });
  const budget = time.sleep(45_000, new AbortController().signal).then(() => order.push("45 s"));
  await Promise.all([request, budget]);
  assert.deepEqual(order, ["rejected", "45 s"]);
});

Deno.test("GitLab: one commit status per agent on the merge request's head, running then the verdict", async () => {
  await using gitlab = await startFakeStatusForge("gitlab");
  const result = await runWith({
    args: twoAgents,
    reads: [{ status: "completed", passed: false }],
    env: gitlabEnv(gitlab),
  });

  assert.equal(result.code, 1, result.stderr);
  assert.deepEqual(result.lines, []);
  for (const agent of [AGENT, SECOND]) {
    const mine = gitlab.requests.filter((request) => request.body.name === statusName(agent));
    assert.deepEqual(mine.map((request) => request.body.state), ["running", "failed"]);
    for (const request of mine) {
      assert.equal(request.path, `/api/v4/projects/${FORGE_TARGET.projectId}/statuses/${HEAD_SHA}`);
      assert.equal(request.headers["private-token"], FORGE_TOKENS.gitlab);
      assert.equal(request.body.target_url, DASHBOARD);
    }
  }
});

Deno.test("GitLab: a refused token is one line naming the scope, and the exit code stays the gate's", async () => {
  await using gitlab = await startFakeStatusForge("gitlab", { token: "glpat-another" });
  const result = await runWith({ env: gitlabEnv(gitlab) });

  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.lines.length, 1, result.stderr);
  assert.match(result.lines[0]!, /GitLab commit statuses were not written: .*401.*api scope/);
  // Refused once: nothing more is sent.
  assert.equal(gitlab.requests.length, 1);
  assert.ok(!result.stderr.includes(FORGE_TOKENS.gitlab));
});

Deno.test("Bitbucket: one build status per agent through the pipeline's proxy, keyed by the agent", async () => {
  await using proxy = await startFakeProxy();
  const result = await runWith({
    args: twoAgents,
    reads: [{ status: "completed", passed: true }],
    env: bitbucketEnv(proxy.url, { BITBUCKET_WORKSPACE: "acme", BITBUCKET_REPO_SLUG: "widgets" }),
  });

  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(result.lines, []);
  for (const agent of [AGENT, SECOND]) {
    const mine = proxy.requests.map((request) => ({ ...request, json: JSON.parse(request.body) }))
      .filter((request) => request.json.key === agent);
    assert.deepEqual(mine.map((request) => request.json.state), ["INPROGRESS", "SUCCESSFUL"]);
    for (const request of mine) {
      assert.equal(request.method, "POST");
      assert.equal(
        request.url,
        `http://api.bitbucket.org/2.0/repositories/acme/widgets/commit/${HEAD_SHA}/statuses/build`,
      );
      assert.equal(request.json.name, statusName(agent));
      assert.equal(request.json.url, DASHBOARD);
      assert.ok(request.json.key.length <= 40);
    }
  }
});

Deno.test("Bitbucket: Code Insights and the statuses share one client: a 401 is final for both", async () => {
  await using proxy = await startFakeProxy(() => new Response("no", { status: 401 }));
  const result = await runWith({
    args: twoAgents,
    reads: [{ status: "completed", passed: true }],
    env: withCodeInsights(proxy.url),
  });
  assert.equal(result.code, 0, result.stderr);
  // The first status writes (two at once at most) were refused; nothing followed them, Code
  // Insights included, which its own client would have sent.
  const urls = proxy.requests.map((request) => request.url);
  assert.ok(urls.length <= 2, urls.join("\n"));
  assert.ok(urls.every((url) => url.endsWith("/statuses/build")), urls.join("\n"));
  assert.match(result.stderr, /Code Insights report could not be sent/);
});

Deno.test("Bitbucket: a rate limit past the time to finish gives up the final write at once, in the forge's one line", async () => {
  await using proxy = await startFakeProxy((request) =>
    request.body.includes('"SUCCESSFUL"')
      ? new Response("slow down", { status: 429, headers: { "retry-after": "3600" } })
      : Response.json({})
  );
  const result = await runWith({
    reads: [{ status: "completed", passed: true }],
    env: bitbucketEnv(proxy.url, { BITBUCKET_REPO_FULL_NAME: "acme/widgets" }),
  });
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stderr.split("\n").filter((line) => /rate limit|finish/.test(line));
  assert.equal(lines.length, 1, result.stderr);
  assert.match(
    lines[0]!,
    /^service-ci: Bitbucket asked to wait out a rate limit past the time left to finish \(.*429.*\); 1 request was given up\. The gate's verdict and exit code are not affected\.$/,
  );
  assert.deepEqual(proxy.requests.map((request) => JSON.parse(request.body).state), [
    "INPROGRESS",
    "SUCCESSFUL",
  ]);
});

Deno.test("Bitbucket: Code Insights waits out a rate limit within its own time to finish, not the statuses' shorter one", async () => {
  let limited = false;
  await using proxy = await startFakeProxy((request) => {
    if (!request.url.includes("/reports/") || limited) return Response.json({});
    limited = true;
    return new Response("slow down", { status: 429, headers: { "retry-after": "50" } });
  });
  const result = await runWith({
    reads: [{ status: "completed", passed: true }],
    env: withCodeInsights(proxy.url),
  });
  assert.equal(result.code, 0, result.stderr);
  assert.doesNotMatch(result.stderr, /rate limit|did not finish|could not be sent/);
  const reports = proxy.requests.filter((request) => request.url.includes("/reports/"));
  // The DELETE that was limited, again after the pause, then the report and its annotations.
  assert.deepEqual(reports.slice(0, 3).map((request) => request.method), [
    "DELETE",
    "DELETE",
    "PUT",
  ]);
});

Deno.test("Bitbucket: a proxy that refuses is one line, and the exit code stays the gate's", async () => {
  await using proxy = await startFakeProxy(() => new Response("no", { status: 403 }));
  const result = await runWith({
    reads: [{ status: "completed", passed: false }],
    env: bitbucketEnv(proxy.url, { BITBUCKET_REPO_FULL_NAME: "acme/widgets" }),
  });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.lines.length, 1, result.stderr);
  assert.match(
    result.lines[0]!,
    /Bitbucket commit statuses were not written: .*403 through the proxy/,
  );
  assert.equal(proxy.requests.length, 1);
});

Deno.test("Bitbucket: the proxy's redirect to another origin is refused by the HTTP policy, one line, never followed", async () => {
  await using proxy = await startFakeProxy(() =>
    new Response(null, { status: 302, headers: { location: "http://elsewhere.example/steal" } })
  );
  const result = await runWith({
    reads: [{ status: "completed", passed: true }],
    env: bitbucketEnv(proxy.url, { BITBUCKET_REPO_FULL_NAME: "acme/widgets" }),
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.lines.length, 1, result.stderr);
  assert.match(
    result.lines[0]!,
    /Bitbucket commit statuses were not written: POST answered 302 redirect to another origin \(http:\/\/elsewhere\.example\/steal\); refused/,
  );
  // Fetch's own following would have asked the proxy for elsewhere.example too.
  assert.ok(proxy.requests.every((request) => request.url.startsWith("http://api.bitbucket.org/")));
});

Deno.test("no status, one line and no request: --no-wait, no token, another CI", async () => {
  await using github = await startFakeStatusForge("github");
  const cases: { args?: string[]; env: Record<string, string>; line: RegExp }[] = [
    {
      args: ["--agent", AGENT, "--no-wait"],
      env: githubEnv(github),
      line: /no commit statuses: --no-wait leaves each run without a verdict/,
    },
    {
      env: githubEnv(github, { GITHUB_TOKEN: "" }),
      line: /no commit statuses: GITHUB_TOKEN is not set; .*checks: write/,
    },
    {
      env: { SERVICE_COMMIT_STATUS: "true", CIRCLECI: "true", CIRCLE_SHA1: HEAD_SHA },
      line:
        /no commit statuses: commit statuses are written from GitHub Actions, GitLab CI and Bitbucket Pipelines only \(this build: circleci\)/,
    },
  ];
  for (const each of cases) {
    const result = await runWith({ args: each.args ?? ["--agent", AGENT], env: each.env });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, each.line);
    assert.equal(
      result.stderr.split("\n").filter((line) => /no commit statuses/.test(line)).length,
      1,
    );
  }
  assert.equal(github.requests.length, 0);
});

Deno.test("without --commit-status nothing is sent to the forge", async () => {
  await using github = await startFakeStatusForge("github");
  const result = await runWith({ env: githubEnv(github, { SERVICE_COMMIT_STATUS: "" }) });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(github.requests.length, 0);
  assert.doesNotMatch(result.stderr, /commit status/);
});

// GitHub's own description of its REST API (octokit/openapi, generated from GitHub's published
// OpenAPI document): every body the statuses send must be one it accepts.
const GITHUB_REQUESTS: Record<string, { path: string; method: string }> = {
  "create a check run": { path: "/repos/{owner}/{repo}/check-runs", method: "post" },
  "update a check run": {
    path: "/repos/{owner}/{repo}/check-runs/{check_run_id}",
    method: "patch",
  },
  "create a commit status": { path: "/repos/{owner}/{repo}/statuses/{sha}", method: "post" },
};

async function githubRequestValidators() {
  const { default: spec } = await import(
    "npm:@octokit/openapi@23.0.2/generated/api.github.com.json",
    { with: { type: "json" } }
  );
  // OpenAPI 3.0 schemas: `nullable`, and descriptive keywords Ajv's strict mode does not know.
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const paths = (spec as { paths: Record<string, Record<string, unknown>> }).paths;
  return Object.fromEntries(
    Object.entries(GITHUB_REQUESTS).map(([what, { path, method }]) => {
      const schema = (paths[path]![method] as {
        requestBody: { content: { "application/json": { schema: Record<string, unknown> } } };
      }).requestBody.content["application/json"].schema;
      const validate = ajv.compile(schema);
      const known = Object.keys(schema.properties as Record<string, unknown>);
      return [what, (body: Record<string, unknown>) => {
        const errors = validate(body)
          ? []
          : (validate.errors ?? []).map((error: ErrorObject) =>
            `${error.instancePath} ${error.message}`
          );
        // GitHub ignores a field it does not know: a misspelt one would be lost without a word.
        const unknown = Object.keys(body).filter((key) => !known.includes(key));
        return [...errors, ...unknown.map((key) => `unknown field ${key}`)];
      }];
    }),
  );
}

function githubRequestKind(request: StatusRequest): string {
  if (request.method === "POST" && /\/check-runs$/.test(request.path)) return "create a check run";
  if (request.method === "PATCH" && /\/check-runs\/\d+$/.test(request.path)) {
    return "update a check run";
  }
  if (request.method === "POST" && /\/statuses\/[0-9a-f]+$/.test(request.path)) {
    return "create a commit status";
  }
  throw new Error(`unexpected request ${request.method} ${request.path}`);
}

Deno.test("GitHub: every check run and commit status body is one GitHub's OpenAPI description accepts", async () => {
  const validators = await githubRequestValidators();
  const seen = new Set<string>();
  const runs: { reads: Read[]; checksForbidden: boolean }[] = [
    { reads: [{ status: "completed", passed: true }], checksForbidden: false },
    { reads: [{ status: "completed", passed: false }], checksForbidden: false },
    { reads: [{ status: "completed", passed: "maybe" }], checksForbidden: false },
    { reads: [{ status: "completed", passed: false }], checksForbidden: true },
    { reads: [{ status: "completed", passed: "maybe" }], checksForbidden: true },
  ];
  for (const { reads, checksForbidden } of runs) {
    await using github = await startFakeStatusForge("github", { checksForbidden });
    const result = await runWith({ args: twoAgents, reads, env: githubEnv(github) });
    assert.ok([0, 1, 3].includes(result.code), result.stderr);
    for (const request of writes(github)) {
      const what = githubRequestKind(request);
      seen.add(what);
      assert.deepEqual(
        validators[what]!(request.body),
        [],
        `${what}: ${JSON.stringify(request.body)}`,
      );
    }
  }
  assert.deepEqual([...seen].sort(), Object.keys(GITHUB_REQUESTS).sort());
});

Deno.test("the OpenAPI check above can fail: a wrong conclusion and a misspelt field are refused", async () => {
  const validators = await githubRequestValidators();
  assert.notDeepEqual(
    validators["update a check run"]!({ status: "completed", conclusion: "passed" }),
    [],
  );
  assert.deepEqual(
    validators["create a commit status"]!({ state: "success", detail_url: "https://x.example" }),
    ["unknown field detail_url"],
  );
});

Deno.test("GitHub: a check run's summary shows ids in code spans as they are, and no backtick ends one", () => {
  const cases = [
    { agentId: "3f0c6a52-8d1e-4c2b-9a7f-0e1d2c3b4a59", runId: "run_1", status: "in_progress" },
    { agentId: AGENT, runId: "run`1` [x](https://evil.example)", status: "``done`" },
    { agentId: AGENT, runId: "`@octocat` <b>#1</b>", status: " *a* " },
  ];
  for (const ids of cases) {
    const agent = makeAgent({ ...ids, url: null });
    const html = new MarkdownIt({ html: true, linkify: true }).render(
      agentSummary(agent, makeReport([agent])),
    );
    const codes = [...html.matchAll(/<code>([\s\S]*?)<\/code>/g)].map(([, code]) =>
      code!.replaceAll("&lt;", "<").replaceAll("&gt;", ">").replaceAll("&quot;", '"')
        .replaceAll("&amp;", "&")
    );
    assert.deepEqual(codes, [ids.agentId, ids.runId, ids.status], html);
    assert.doesNotMatch(html, /<a |<b>|<em>/, html);
  }
});
