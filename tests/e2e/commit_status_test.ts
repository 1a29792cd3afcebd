/**
 * End to end: the commit statuses (issue 22 §1) from the real entry point, with deno.json's
 * permission set, against the fake service and a fake GitHub on loopback: check runs on the pull
 * request's head, the exit code the gate's, the token only to GitHub and masked.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { statusName } from "../../src/forge/writes.ts";
import { FORGE_TARGET, FORGE_TOKENS, githubPullRequestJob } from "../support/fake_forge.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { startFakeStatusForge } from "../support/fake_status.ts";
import { runProgram } from "../support/program.ts";

const HEAD_SHA = "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c";

Deno.test("with --commit-status on a GitHub pull request, each agent's check run is created on the head and completed with its verdict", async () => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  await using github = await startFakeStatusForge("github");
  const dir = await Deno.makeTempDir({ prefix: "service-ci-commit-status-" });
  const event = join(dir, "event.json");
  await Deno.writeTextFile(
    event,
    JSON.stringify({
      number: FORGE_TARGET.pullRequest,
      pull_request: { number: FORGE_TARGET.pullRequest, head: { sha: HEAD_SHA, ref: "feature" } },
    }),
  );

  const result = await runProgram(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--commit-status"],
    {
      env: {
        SERVICE_API_KEY: KEYS.ci,
        SERVICE_BASE_URL: service.url,
        SERVICE_TIMEOUT_MINUTES: "1",
        SERVICE_CI_NATIVE: "false",
        ...githubPullRequestJob({
          apiUrl: github.apiUrl,
          eventPath: event,
          sha: "0000000000000000000000000000000000000001",
          pullRequest: FORGE_TARGET.pullRequest,
          repository: FORGE_TARGET.repository,
          token: FORGE_TOKENS.github,
        }),
      },
    },
  );

  const log = `exit ${result.code}\n${result.stderr}`;
  assert.equal(result.code, 1, log);
  const runs = [...github.checkRuns.values()];
  assert.deepEqual(
    runs.map((run) => [run.name, run.head_sha, run.status, run.conclusion]).sort(),
    [
      [statusName(AGENTS.failing), HEAD_SHA, "completed", "failure"],
      [statusName(AGENTS.passing), HEAD_SHA, "completed", "success"],
    ].sort(),
  );
  for (const request of github.requests) {
    assert.equal(request.headers.authorization, `Bearer ${FORGE_TOKENS.github}`);
    assert.ok(!JSON.stringify(request).includes(KEYS.ci));
  }
  for (const request of service.requests) {
    assert.ok(!JSON.stringify(request).includes(FORGE_TOKENS.github));
  }
  assert.ok(!(result.stdout + result.stderr).includes(FORGE_TOKENS.github));
  await Deno.remove(dir, { recursive: true });
});
