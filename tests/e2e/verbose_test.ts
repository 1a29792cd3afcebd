/**
 * End to end: the verbose mode (issue 36). `--verbose`, `SERVICE_VERBOSE` and each CI's own debug
 * switch show one line per exchange with the service and the forges, in that CI's debug format,
 * and never the key, a token or a body but an error's bounded, masked excerpt.
 */

import assert from "node:assert/strict";
import {
  FORGE_TARGET,
  FORGE_TOKENS,
  githubPullRequestEnv,
  startFakeGithub,
} from "../support/fake_forge.ts";
import { AGENTS, defaultAgents, KEYS, problem, startFakeService } from "../support/fake_service.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { type ProgramResult, runProgram } from "../support/program.ts";

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

function log(result: ProgramResult): string {
  return `exit ${result.code}\n--- stdout\n${result.stdout}--- stderr\n${result.stderr}`;
}

// The verbose lines of stderr, without the CI's debug prefix `prefix`.
function exchanges(result: ProgramResult, prefix: string): string[] {
  return result.stderr.split("\n").filter((line) => line.startsWith(prefix) && line.includes(" → "))
    .map((line) => line.slice(prefix.length));
}

const RUNS = `/api/v1/agents/${AGENTS.passing}/runs`;
const FAILING_RUNS = `/api/v1/agents/${AGENTS.failing}/runs`;
const TRIGGER = new RegExp(`^POST 127\\.0\\.0\\.1:\\d+${RUNS} → 201 in \\d+ ms, attempt 1$`);
const READ = new RegExp(`^GET 127\\.0\\.0\\.1:\\d+${RUNS}/run_0001 → 200 in \\d+ ms, attempt 1$`);

Deno.test("--verbose shows each exchange with the service on stderr: method, path, status, attempt; never the key", async () => {
  await using service = await startFakeService({ agents: defaultAgents(50) });
  const result = await runProgram(["--agent", AGENTS.passing, "--verbose"], {
    env: env(service.url),
  });
  assert.equal(result.code, 0, log(result));
  const lines = exchanges(result, "service-ci: ");
  assert.match(lines[0] ?? "", TRIGGER, log(result));
  assert.ok(lines.length >= 2 && lines.slice(1).every((line) => READ.test(line)), log(result));
  assert.equal(lines.length, service.requests.length);
  assert.equal(result.stdout, "");
  assert.ok(!`${result.stdout}${result.stderr}`.includes(KEYS.ci));
});

Deno.test("without --verbose or a CI's debug switch, no exchange is shown; SERVICE_VERBOSE=true shows them", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const quiet = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, { GITHUB_ACTIONS: "true", SERVICE_CI_NATIVE: "false" }),
  });
  assert.equal(quiet.code, 0, log(quiet));
  assert.ok(!`${quiet.stdout}${quiet.stderr}`.includes(" → 20"), log(quiet));
  const variable = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, { SERVICE_VERBOSE: "true" }),
  });
  assert.match(exchanges(variable, "service-ci: ")[0] ?? "", TRIGGER, log(variable));
});

Deno.test("RUNNER_DEBUG=1 on GitHub Actions shows the exchanges as ::debug:: lines; SERVICE_VERBOSE=false keeps them off", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const github = { GITHUB_ACTIONS: "true", RUNNER_DEBUG: "1", SERVICE_CI_NATIVE: "false" };
  const debug = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, github),
  });
  assert.equal(debug.code, 0, log(debug));
  const lines = exchanges(debug, "::debug::");
  assert.match(lines[0] ?? "", TRIGGER, log(debug));
  assert.ok(lines.length >= 2 && lines.slice(1).every((line) => READ.test(line)), log(debug));
  assert.deepEqual(exchanges(debug, "service-ci: "), []);
  assert.ok(!`${debug.stdout}${debug.stderr}`.includes(KEYS.ci));

  const off = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, { ...github, SERVICE_VERBOSE: "false" }),
  });
  assert.equal(off.code, 0, log(off));
  assert.ok(!`${off.stdout}${off.stderr}`.includes(" → 20"), log(off));
});

Deno.test("SYSTEM_DEBUG=true on Azure Pipelines shows ##[debug] lines, CI_DEBUG_TRACE=true on GitLab plain ones", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const azure = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, { TF_BUILD: "True", SYSTEM_DEBUG: "True", SERVICE_CI_NATIVE: "false" }),
  });
  assert.equal(azure.code, 0, log(azure));
  assert.match(exchanges(azure, "##[debug]")[0] ?? "", TRIGGER, log(azure));
  const gitlab = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, {
      GITLAB_CI: "true",
      CI_DEBUG_TRACE: "true",
      SERVICE_CI_NATIVE: "false",
    }),
  });
  assert.equal(gitlab.code, 0, log(gitlab));
  assert.match(exchanges(gitlab, "service-ci: ")[0] ?? "", TRIGGER, log(gitlab));
  // Each switch counts only on its own CI.
  const elsewhere = await runInProcess(["--agent", AGENTS.passing], {
    time,
    env: env(service.url, { RUNNER_DEBUG: "1", SYSTEM_DEBUG: "true" }),
  });
  assert.ok(!elsewhere.stderr.includes(" → 20"), log(elsewhere));
});

Deno.test("an error answer shows its request id, the next attempt, and a bounded, masked, inert excerpt of its body", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const message = `key ${KEYS.ci} ##vso[task.complete result=Succeeded] ${"x".repeat(1000)}`;
  service.script({
    method: "POST",
    answer: () =>
      new Response(JSON.stringify({ error: { code: "unavailable", message } }), {
        status: 503,
        headers: { "content-type": "application/json", "x-request-id": "req-7f3a" },
      }),
  });
  const result = await runInProcess(["--agent", AGENTS.passing, "--verbose"], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 0, log(result));
  const lines = exchanges(result, "service-ci: ");
  const failed = lines[0] ?? "";
  assert.match(
    failed,
    new RegExp(
      `^POST 127\\.0\\.0\\.1:\\d+${RUNS} → 503 in \\d+ ms, attempt 1, request id req-7f3a, body: \\{"error":`,
    ),
    log(result),
  );
  const excerpt = failed.slice(failed.indexOf("body: ") + "body: ".length);
  assert.ok(excerpt.length <= 200 && excerpt.endsWith("…"), excerpt);
  assert.ok(excerpt.includes("key *** ##vso [task.complete"), excerpt);
  assert.match(lines[1] ?? "", /^POST \S+ → 201 in \d+ ms, attempt 2$/, log(result));
  assert.match(lines[2] ?? "", READ, log(result));
  assert.ok(!`${result.stdout}${result.stderr}`.includes(KEYS.ci));
});

Deno.test("--verbose shows the exchanges with the forge too, never its token", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  await using github = await startFakeGithub();
  const result = await runInProcess(["--agent", AGENTS.passing, "--verbose", "--pr-comment"], {
    time,
    env: {
      ...env(service.url),
      ...githubPullRequestEnv(github.apiUrl, { SERVICE_COMMIT_STATUS: "false" }),
    },
  });
  assert.equal(result.code, 0, log(result));
  const host = new URL(github.origin).host;
  const comments = `/repos/${FORGE_TARGET.repository}/issues/${FORGE_TARGET.pullRequest}/comments`;
  const forge = exchanges(result, "service-ci: ").filter((line) => line.includes(host));
  assert.ok(forge.length >= 2, log(result));
  assert.equal(forge.length, github.requests.length, log(result));
  assert.ok(forge.some((line) => line.startsWith(`GET ${host}${comments} → 200`)), log(result));
  assert.ok(forge.some((line) => line.startsWith(`POST ${host}${comments} → 201`)), log(result));
  // A pagination link's query is not shown: the path only.
  assert.ok(forge.every((line) => !line.includes("?")), forge.join("\n"));
  const all = `${result.stdout}${result.stderr}`;
  assert.ok(!all.includes(FORGE_TOKENS.github) && !all.includes(KEYS.ci));
});

Deno.test("--verbose and RUNNER_DEBUG=1 change nothing a 503 with a 2 MiB body leads to: the same exit code, the same requests", async () => {
  const plays = {
    quiet: { args: [], env: {} },
    "--verbose": { args: ["--verbose"], env: {} },
    "RUNNER_DEBUG=1": {
      args: [],
      env: { GITHUB_ACTIONS: "true", RUNNER_DEBUG: "1", SERVICE_CI_NATIVE: "false" },
    },
  };
  const results = await Promise.all(
    Object.entries(plays).map(async ([name, play]) => {
      await using service = await startFakeService({ agents: defaultAgents(50) });
      service.script({
        method: "POST",
        answer: () => new Response("x".repeat(2 * 1024 * 1024), { status: 503 }),
      });
      const result = await runProgram(["--agent", AGENTS.failing, ...play.args], {
        env: env(service.url, { SERVICE_TIMEOUT_MINUTES: "0.25", ...play.env }),
      });
      const requests = service.requests.map((request) => `${request.method} ${request.path}`);
      return { name, result, requests };
    }),
  );
  const [quiet] = results;
  assert.equal(quiet!.result.code, 1, log(quiet!.result));
  assert.deepEqual(quiet!.requests.slice(0, 2), [`POST ${FAILING_RUNS}`, `POST ${FAILING_RUNS}`]);
  for (const { name, result, requests } of results) {
    assert.equal(result.code, quiet!.result.code, `${name}\n${log(result)}`);
    assert.deepEqual(requests, quiet!.requests, name);
  }
  const [, verbose, debug] = results;
  const shown = [
    ...exchanges(verbose!.result, "service-ci: "),
    ...exchanges(debug!.result, "::debug::"),
  ];
  assert.equal(shown.filter((line) => line.includes(" → 503 ")).length, 2, log(verbose!.result));
});

Deno.test("--verbose masks the key in an error's body in any spelling: another case, full-width, percent-escaped", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(50) });
  const fullWidth = KEYS.ci.replace(
    /[!-~]/g,
    (char) => String.fromCharCode(char.charCodeAt(0) + 0xfee0),
  );
  const escaped = [...KEYS.ci].map((char) => `%${char.charCodeAt(0).toString(16)}`).join("");
  const spellings = [KEYS.ci.toUpperCase(), fullWidth, escaped];
  service.script({
    method: "POST",
    answer: () => problem(503, "unavailable", `keys ${spellings.join(" ")}`),
  });
  const result = await runInProcess(["--agent", AGENTS.passing, "--verbose"], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 0, log(result));
  const failed = exchanges(result, "service-ci: ")[0] ?? "";
  assert.match(failed, /→ 503 .*body: .*keys \*\*\* \*\*\* \*\*\*/, log(result));
  const all = `${result.stdout}${result.stderr}`;
  for (const spelling of spellings) assert.ok(!all.includes(spelling), spelling);
  assert.ok(!all.normalize("NFKC").toLowerCase().includes(KEYS.ci), log(result));
});
