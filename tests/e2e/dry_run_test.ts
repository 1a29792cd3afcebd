/** End to end: `--dry-run` shows the exact request and sends nothing (issue 4's proof of what is sent). */

import assert from "node:assert/strict";
import { AGENTS, KEYS, startFakeService } from "../support/fake_service.ts";
import { runProgram } from "../support/program.ts";

const PR_BUILD = {
  GITHUB_ACTIONS: "true",
  GITHUB_SHA: "ffffffffffffffffffffffffffffffffffffffff",
  GITHUB_REF: "refs/pull/42/merge",
  GITHUB_HEAD_REF: "feature/login",
  GITHUB_REPOSITORY: "acme/widgets",
  GITHUB_ACTOR: "octocat",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_RUN_ID: "99",
};

async function prEvent(): Promise<string> {
  const path = await Deno.makeTempFile({ suffix: ".json" });
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      pull_request: { number: 42, head: { sha: "4f1c".padEnd(40, "a"), ref: "feature/login" } },
    }),
  );
  return path;
}

Deno.test("--dry-run prints the request with the key masked and sends nothing", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing, "--dry-run"], {
    env: {
      SERVICE_API_KEY: KEYS.ci,
      SERVICE_BASE_URL: `${service.url}/eval/`,
      ...PR_BUILD,
      GITHUB_EVENT_PATH: await prEvent(),
    },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(service.requests.length, 0);
  assert.ok(!result.stdout.includes(KEYS.ci) && !result.stderr.includes(KEYS.ci));
  const [head, body] = result.stdout.split("\n\n");
  const lines = head!.split("\n");
  assert.equal(lines[0], `POST ${service.url}/eval/api/v1/agents/${AGENTS.passing}/runs`);
  assert.ok(lines.includes("x-api-key: ***"), head);
  assert.ok(lines.includes("content-type: application/json"), head);
  assert.ok(lines.some((line) => /^user-agent: service-ci\/\S+ \(\w+; \w+\)$/.test(line)), head);
  assert.ok(lines.some((line) => line.startsWith("idempotency-key: ")), head);
  assert.deepEqual(JSON.parse(body!), {
    ci_metadata: {
      commit_sha: "4f1c".padEnd(40, "a"),
      branch: "feature/login",
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/99",
    },
  });
  assert.match(result.stderr, /dry run, nothing is sent; detected GitHub Actions/);
});

Deno.test("--dry-run --json prints the requests as one JSON document", async () => {
  const result = await runProgram(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--dry-run", "--json", "--actor", "me"],
    { env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: "https://service.example" } },
  );
  assert.equal(result.code, 0, result.stderr);
  const document = JSON.parse(result.stdout);
  assert.equal(document.dry_run, true);
  assert.equal(document.requests.length, 2);
  assert.equal(
    document.requests[1].url,
    `https://service.example/api/v1/agents/${AGENTS.failing}/runs`,
  );
  assert.equal(document.requests[0].headers["x-api-key"], "***");
  assert.equal(document.requests[0].body.ci_metadata.actor, "me");
});

Deno.test("a PR build's trigger carries the PR head, source branch and number, and nothing else", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: {
      SERVICE_API_KEY: KEYS.ci,
      SERVICE_BASE_URL: service.url,
      ...PR_BUILD,
      GITHUB_EVENT_PATH: await prEvent(),
    },
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /detected GitHub Actions, PR #42/);
  const [trigger] = service.requestsOf("POST");
  const body = JSON.parse(trigger!.body);
  assert.deepEqual(Object.keys(body), ["ci_metadata"]);
  assert.equal(body.ci_metadata.commit_sha, "4f1c".padEnd(40, "a"));
  assert.equal(body.ci_metadata.branch, "feature/login");
  assert.equal(body.ci_metadata.pull_request_number, 42);
  assert.equal(Object.keys(body.ci_metadata).length, 7);
});

Deno.test("--dry-run says whether the comment and the statuses would be written, where, and with which token's name", async () => {
  await using service = await startFakeService();
  const token = "ghs_dryRunTokenValue0123456789abcdef";
  const env = {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: service.url,
    ...PR_BUILD,
    GITHUB_EVENT_PATH: await prEvent(),
    GITHUB_EVENT_NAME: "pull_request",
    GITHUB_TOKEN: token,
  };
  const on = await runProgram(
    [
      "--agent",
      AGENTS.passing,
      "--agent",
      AGENTS.failing,
      "--dry-run",
      "--pr-comment",
      "--commit-status",
    ],
    { env },
  );
  assert.equal(on.code, 0, on.stderr);
  assert.equal(service.requests.length, 0);
  assert.match(
    on.stderr,
    /^service-ci: the comment would be kept on GitHub pull request #42, commit 4f1caaa \(the pull request's head\) of acme\/widgets, with GITHUB_TOKEN to https:\/\/api\.github\.com$/m,
  );
  assert.match(
    on.stderr,
    /^service-ci: 2 commit statuses \(one per agent\) would be written on GitHub pull request #42, commit 4f1caaa \(the pull request's head\) of acme\/widgets, with GITHUB_TOKEN to https:\/\/api\.github\.com$/m,
  );
  assert.ok(!on.stderr.includes(token.slice(0, 8)) && !on.stdout.includes(token.slice(0, 8)));
  const off = await runProgram(["--agent", AGENTS.passing, "--dry-run"], { env });
  assert.match(off.stderr, /^service-ci: --pr-comment is off: no comment would be written$/m);
  assert.match(
    off.stderr,
    /^service-ci: --commit-status is off: no commit status would be written$/m,
  );
  const noToken = await runProgram(["--agent", AGENTS.passing, "--dry-run", "--commit-status"], {
    env: { ...env, GITHUB_TOKEN: "" },
  });
  assert.match(noToken.stderr, /^service-ci: no commit statuses: GITHUB_TOKEN is not set/m);
});
