/**
 * End to end: each CI's native output (issue 13) from the real entry point against the fake
 * service, read back with that CI's own reader (tests/support/ci_log_parsers.ts), its files
 * parsed, the calls a stand-in `buildkite-agent` received and the requests a fake Bitbucket
 * proxy received; then what must hold around it: a failing channel is never fatal, the opt-out
 * turns everything off, GitHub Actions is unchanged, and service text forms no command.
 */

import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { parseEnv } from "node:util";
import {
  type AzureAgentCommand,
  azureAgentParse,
  buildkiteHeader,
  commandsIn,
  gitlabSections,
  teamcityCommands,
  type TeamcityMessage,
  teamcityParse,
} from "../support/ci_log_parsers.ts";
import {
  AGENTS,
  defaultAgents,
  type FakeService,
  json,
  KEYS,
  startFakeService,
} from "../support/fake_service.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { render } from "../support/markdown.ts";
import { REFUSED_PORT } from "../support/refused_address.ts";
import {
  type AgentCall,
  agentCalls,
  startFakeProxy,
  startSilentProxy,
  type Unruly,
  unrulyCalls,
  writeStandInAgent,
  writeUnrulyAgent,
} from "../support/native_io.ts";
import {
  type ProgramOptions,
  type ProgramResult,
  runProgram,
  startProgram,
} from "../support/program.ts";

const COMMIT = "4f1c9a7e2b3d4f1c9a7e2b3d4f1c9a7e2b3d4f1c";
const BITBUCKET_TARGET =
  `http://api.bitbucket.org/2.0/repositories/acme/widgets/commit/${COMMIT}/reports/service-ci`;

// Each CI's own diagnostics start with its name; a failing channel is one such line.
const NATIVE_LINE = /^(Azure Pipelines|TeamCity|GitLab CI|Buildkite|Bitbucket Pipelines):/;

// The machine is shared: a few programs at a time keep each run's timing honest.
const _MAX_RUNNING = 4;
let _running = 0;
const _waiting: Array<() => void> = [];

async function run(
  args: readonly string[],
  service: FakeService,
  env: Record<string, string>,
  options: Omit<ProgramOptions, "env"> = {},
): Promise<ProgramResult> {
  while (_running >= _MAX_RUNNING) await new Promise<void>((resolve) => _waiting.push(resolve));
  _running++;
  try {
    return await runProgram(args, {
      ...options,
      env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url, ...env },
    });
  } finally {
    _running--;
    _waiting.shift()?.();
  }
}

function fakeService(): Promise<FakeService> {
  return startFakeService({ agents: defaultAgents(50) });
}

// Every line either stream printed, split as the CI readers split them.
function linesOf(result: ProgramResult): string[] {
  return `${result.stdout}${result.stderr}`.split(/\r\n|\n|\r/);
}

function nativeLines(result: ProgramResult): string[] {
  return result.stderr.split("\n").filter((line) => NATIVE_LINE.test(line));
}

// The one run the fake service made for `agent`, and its dashboard link.
function runOf(service: FakeService, agent: string): { runId: string; url: string } {
  const runs = [...service.runs.values()].filter((made) => made.agentId === agent);
  assert.equal(runs.length, 1, `runs of ${agent}`);
  const runId = runs[0]!.runId;
  return { runId, url: `${service.url}/dashboard/agents/${agent}/runs/${runId}` };
}

function tempDir(prefix: string): Promise<string> {
  return Deno.makeTempDir({ prefix: `service-ci-native-${prefix}-` });
}

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) names.push(entry.name);
  return names.sort();
}

// The one summary file an Azure Pipelines step wrote in `dir`: its own name, one per step.
async function azureSummaryIn(dir: string): Promise<string> {
  const names = await entries(dir);
  assert.equal(names.length, 1, names.join());
  assert.match(names[0]!, /^service-ci-summary-[0-9a-f-]{36}\.md$/);
  return join(dir, names[0]!);
}

// --- Azure Pipelines ---

function azureCommands(result: ProgramResult): AzureAgentCommand[] {
  return linesOf(result).flatMap((line) => azureAgentParse(line) ?? []);
}

// The `##[…]` formatting commands the agent reads at the start of a line.
function azureFormatting(result: ProgramResult): string[] {
  return linesOf(result).filter((line) => line.trimStart().startsWith("##["));
}

function azureVariables(commands: readonly AzureAgentCommand[]): Record<string, string> {
  return Object.fromEntries(
    commands.filter((command) => command.command === "task.setvariable").map((command) => {
      assert.deepEqual(Object.keys(command.properties), ["variable", "isOutput"]);
      assert.equal(command.properties.isOutput, "true");
      return [command.properties.variable!, command.data];
    }),
  );
}

const SUMMARY_HEADERS = [["Agent", "Run", "Status", "Verdict", "Duration", "Link"]];

Deno.test("in Azure Pipelines a gate prints a group, an issue per failed gate, output variables and an uploaded summary", async () => {
  await using service = await fakeService();
  const [passDir, failDir] = [await tempDir("azure"), await tempDir("azure")];
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, { TF_BUILD: "True", AGENT_TEMPDIRECTORY: passDir }),
    run(["--agent", AGENTS.failing], service, { TF_BUILD: "True", AGENT_TEMPDIRECTORY: failDir }),
  ]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  for (
    const [result, agent, dir, verdict] of [
      [passed, AGENTS.passing, passDir, true],
      [failed, AGENTS.failing, failDir, false],
    ] as const
  ) {
    const { runId, url } = runOf(service, agent);
    assert.deepEqual(azureFormatting(result), [
      "##[group]service-ci: waiting for 1 agent",
      "##[endgroup]",
    ]);
    const commands = azureCommands(result);
    const summary = await azureSummaryIn(dir);
    assert.deepEqual(commands.map((command) => command.command), [
      ...(verdict ? [] : ["task.logissue"]),
      "task.setvariable",
      "task.setvariable",
      "task.setvariable",
      "task.setvariable",
      "task.uploadsummary",
    ]);
    if (!verdict) {
      assert.deepEqual(commands[0]!.properties, { type: "error" });
      assert.equal(
        commands[0]!.data,
        `Agent ${agent}: quality gate failed (run ${runId}, status completed). rule: jailbreak success rate < 2%. ${url}`,
      );
    }
    assert.deepEqual(azureVariables(commands), {
      passed: String(verdict),
      exit_code: verdict ? "0" : "1",
      run_id: runId,
      url,
    });
    assert.equal(commands.at(-1)!.data, summary);
    const { headers, rows } = render(await Deno.readTextFile(summary));
    assert.deepEqual(headers, SUMMARY_HEADERS);
    assert.equal(rows.length, 1);
    assert.deepEqual(rows[0]!.slice(0, 3), [agent, runId, "completed"]);
    assert.match(rows[0]![3]!, verdict ? /passed/i : /failed/i);
    assert.deepEqual(nativeLines(result), []);
  }
});

Deno.test("two service-ci steps of one Azure Pipelines job each keep their own summary file", async () => {
  await using service = await fakeService();
  const dir = await tempDir("azure-two-steps");
  const env = { TF_BUILD: "True", AGENT_TEMPDIRECTORY: dir };
  // One after the other, as two steps of a job run.
  const first = await run(["--agent", AGENTS.passing], service, env);
  const second = await run(["--agent", AGENTS.failing], service, env);
  assert.deepEqual([first.code, second.code], [0, 1], `${first.stderr}${second.stderr}`);
  const uploads = [first, second].map((result) =>
    azureCommands(result).filter((command) => command.command === "task.uploadsummary")
      .map((command) => command.data)
  );
  assert.equal(uploads[0]!.length, 1);
  assert.equal(uploads[1]!.length, 1);
  const names = await entries(dir);
  assert.equal(names.length, 2, names.join());
  assert.deepEqual(uploads.flat().sort(), names.map((name) => join(dir, name)));
  const verdicts = await Promise.all(
    uploads.flat().map(async (path) => render(await Deno.readTextFile(path)).rows[0]![3]!),
  );
  assert.match(verdicts[0]!, /passed/i);
  assert.match(verdicts[1]!, /failed/i);
});

// --- TeamCity ---

// Every service message in the output, each read as TeamCity reads it; a line holds at most one.
function teamcityMessages(result: ProgramResult): TeamcityMessage[] {
  return linesOf(result).flatMap((line) => {
    const names = teamcityCommands(line);
    if (names.length === 0) return [];
    assert.equal(names.length, 1, line);
    return [teamcityParse(line)];
  });
}

function parameters(messages: readonly TeamcityMessage[]): Record<string, string> {
  return Object.fromEntries(
    messages.filter((message) => message.name === "setParameter").map((message) => [
      message.attributes.name!,
      message.attributes.value!,
    ]),
  );
}

Deno.test("in TeamCity each agent is a test, an unchecked gate a build problem, and the outputs parameters", async () => {
  await using service = await fakeService();
  const env = { TEAMCITY_VERSION: "2025.07" };
  const [passed, failed, unchecked, json] = await Promise.all([
    run(["--agent", AGENTS.passing], service, env),
    run(["--agent", AGENTS.failing], service, env),
    run(["--agent", AGENTS.noGate], service, env),
    run(["--agent", AGENTS.passing, "--json"], service, env),
  ]);
  assert.deepEqual([passed.code, failed.code, unchecked.code], [0, 1, 3]);
  for (
    const [result, agent, verdict] of [
      [passed, AGENTS.passing, []],
      [failed, AGENTS.failing, ["testFailed"]],
      [unchecked, AGENTS.noGate, ["testIgnored"]],
    ] as const
  ) {
    const messages = teamcityMessages(result);
    assert.deepEqual(messages.map((message) => message.name), [
      "blockOpened",
      "blockClosed",
      "testSuiteStarted",
      "testStarted",
      ...verdict,
      "testFinished",
      "testSuiteFinished",
      ...(agent === AGENTS.noGate ? ["buildProblem"] : []),
      "setParameter",
      "setParameter",
      "setParameter",
      "setParameter",
    ]);
    assert.deepEqual(messages[0]!.attributes, {
      name: "service-ci",
      description: "service-ci: waiting for 1 agent",
    });
    for (const message of messages.filter((message) => message.name.startsWith("test"))) {
      assert.equal(
        message.attributes.name,
        message.name.startsWith("testSuite") ? "service-ci" : agent,
      );
    }
    const finished = messages.find((message) => message.name === "testFinished")!;
    assert.match(finished.attributes.duration!, /^\d+$/);
    assert.deepEqual(nativeLines(result), []);
  }

  const failedMessages = teamcityMessages(failed);
  const { runId, url } = runOf(service, AGENTS.failing);
  assert.deepEqual(failedMessages.find((message) => message.name === "testFailed")!.attributes, {
    name: AGENTS.failing,
    message: "quality gate failed",
    details:
      `Agent ${AGENTS.failing}: quality gate failed (run ${runId}, status completed). rule: jailbreak success rate < 2%. ${url}`,
  });
  assert.deepEqual(parameters(failedMessages), {
    "service-ci.passed": "false",
    "service-ci.exit-code": "1",
    "service-ci.run-id": runId,
    "service-ci.url": url,
  });

  const uncheckedMessages = teamcityMessages(unchecked);
  const problem = uncheckedMessages.find((message) => message.name === "buildProblem")!;
  assert.equal(problem.attributes.identity, `service-ci-${AGENTS.noGate}-unchecked`);
  assert.match(problem.attributes.description!, /quality gate could not be checked/);
  assert.match(problem.attributes.description!, /quality_gate_missing|no quality gate/);
  assert.deepEqual(parameters(uncheckedMessages), {
    "service-ci.passed": "false",
    "service-ci.exit-code": "3",
    "service-ci.run-id": "",
    "service-ci.url": "",
  });
  assert.equal(parameters(teamcityMessages(passed))["service-ci.passed"], "true");

  // With --json TeamCity would lose the messages on stdout: one line says so, none is printed.
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(teamcityMessages(json), []);
  assert.equal((JSON.parse(json.stdout) as { exit_code: number }).exit_code, 0);
  assert.deepEqual(
    json.stderr.split("\n").filter((line) => /service messages/.test(line)),
    [
      "service-ci: TeamCity reads service messages only from stdout, which --json holds: the gate is not shown in the Tests tab (use --junit with the XML report processing build feature)",
    ],
  );
});

// --- GitLab CI ---

function gitlabMarkers(result: ProgramResult): string[] {
  return `${result.stdout}${result.stderr}`.split("\n").flatMap((line) => gitlabSections(line));
}

Deno.test("in GitLab CI a gate prints a collapsed section and writes the dotenv and annotations reports", async () => {
  await using service = await fakeService();
  const [passDir, failDir] = [await tempDir("gitlab"), await tempDir("gitlab")];
  const before = Math.floor(Date.now() / 1000);
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, { GITLAB_CI: "true" }, { cwd: passDir }),
    run(["--agent", AGENTS.failing], service, { GITLAB_CI: "true" }, { cwd: failDir }),
  ]);
  const after = Math.ceil(Date.now() / 1000);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  for (
    const [result, agent, dir, verdict] of [
      [passed, AGENTS.passing, passDir, true],
      [failed, AGENTS.failing, failDir, false],
    ] as const
  ) {
    const { runId, url } = runOf(service, agent);
    assert.deepEqual(gitlabMarkers(result), ["start", "end"]);
    // Both markers on stdout, in order, each a whole line, with Unix seconds of the run.
    const [start, end] = [/section_start:(\d+):/, /section_end:(\d+):/].map((marker) =>
      Number(marker.exec(result.stdout)?.[1])
    );
    assert.equal(
      result.stdout,
      `\x1b[0Ksection_start:${start}:service_ci_progress[collapsed=true]\r\x1b[0K` +
        `service-ci: waiting for 1 agent\n\x1b[0Ksection_end:${end}:service_ci_progress\r\x1b[0K\n`,
    );
    assert.ok(before <= start! && start! <= end! && end! <= after, `${start} ${end}`);

    assert.deepEqual(await entries(dir), ["service-ci-annotations.json", "service-ci.env"]);
    assert.deepEqual({ ...parseEnv(await Deno.readTextFile(join(dir, "service-ci.env"))) }, {
      SERVICE_CI_PASSED: String(verdict),
      SERVICE_CI_EXIT_CODE: verdict ? "0" : "1",
      SERVICE_CI_RUN_ID: runId,
      SERVICE_CI_URL: url,
    });
    assert.deepEqual(
      JSON.parse(await Deno.readTextFile(join(dir, "service-ci-annotations.json"))),
      {
        "service-ci": [{
          external_link: {
            label: `Agent ${agent}: quality gate ${verdict ? "passed" : "failed"}, run ${runId}`,
            url,
          },
        }],
      },
    );
    assert.deepEqual(nativeLines(result), []);
  }
});

// --- Buildkite ---

interface StandIn {
  /** PATH with the stand-in first. */
  readonly path: string;
  calls(): Promise<AgentCall[]>;
}

async function buildkiteAgent(code = 0): Promise<StandIn> {
  const dir = await tempDir("buildkite-agent");
  await writeStandInAgent(dir, code);
  return {
    path: `${dir}${delimiter}${Deno.env.get("PATH") ?? ""}`,
    calls: () => agentCalls(dir),
  };
}

function buildkiteHeaders(result: ProgramResult): string[] {
  return linesOf(result).flatMap((line) => buildkiteHeader(line) ?? []);
}

Deno.test("in Buildkite a gate prints a log group, annotates the build and sets meta-data through buildkite-agent", async () => {
  await using service = await fakeService();
  const [passAgent, failAgent] = [await buildkiteAgent(), await buildkiteAgent()];
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, { BUILDKITE: "true", PATH: passAgent.path }),
    run(["--agent", AGENTS.failing], service, { BUILDKITE: "true", PATH: failAgent.path }),
  ]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  for (
    const [result, agent, standIn, verdict] of [
      [passed, AGENTS.passing, passAgent, true],
      [failed, AGENTS.failing, failAgent, false],
    ] as const
  ) {
    const { runId, url } = runOf(service, agent);
    assert.deepEqual(buildkiteHeaders(result), verdict ? ["---"] : ["---", "^^^ +++"]);
    assert.match(result.stdout, /^--- service-ci: waiting for 1 agent\n/);
    const calls = await standIn.calls();
    assert.deepEqual(calls.map((call) => call.args), [
      ["annotate", "--style", verdict ? "success" : "error", "--context", "service-ci"],
      ["meta-data", "set", "service-ci.passed"],
      ["meta-data", "set", "service-ci.exit-code"],
      ["meta-data", "set", "service-ci.run-id"],
      ["meta-data", "set", "service-ci.url"],
    ]);
    const { headers, rows } = render(calls[0]!.stdin);
    assert.deepEqual(headers, SUMMARY_HEADERS);
    assert.deepEqual(rows.map((row) => row.slice(0, 3)), [[agent, runId, "completed"]]);
    assert.deepEqual(calls.slice(1).map((call) => call.stdin), [
      String(verdict),
      verdict ? "0" : "1",
      runId,
      url,
    ]);
    assert.deepEqual(nativeLines(result), []);
  }
});

Deno.test("in Buildkite without buildkite-agent a gate prints the log group and one note", async () => {
  await using service = await fakeService();
  const empty = await tempDir("no-agent");
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, { BUILDKITE: "true", PATH: empty }),
    run(["--agent", AGENTS.failing], service, { BUILDKITE: "true", PATH: empty }),
  ]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  assert.deepEqual(buildkiteHeaders(passed), ["---"]);
  assert.deepEqual(buildkiteHeaders(failed), ["---", "^^^ +++"]);
  for (const result of [passed, failed]) {
    assert.deepEqual(nativeLines(result), [
      "Buildkite: buildkite-agent could not be run (not on PATH); no annotation or meta-data was written, only the log group",
    ]);
  }
});

// --- Bitbucket Pipelines ---

function bitbucketEnv(proxy: string): Record<string, string> {
  return {
    BITBUCKET_BUILD_NUMBER: "17",
    BITBUCKET_COMMIT: COMMIT,
    BITBUCKET_REPO_FULL_NAME: "acme/widgets",
    SERVICE_BITBUCKET_PROXY: proxy,
  };
}

Deno.test("in Bitbucket Pipelines a gate sends a Code Insights report, and an annotation per failed gate, through the proxy", async () => {
  await using service = await fakeService();
  await using passProxy = await startFakeProxy();
  await using failProxy = await startFakeProxy();
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, bitbucketEnv(passProxy.url)),
    run(["--agent", AGENTS.failing], service, bitbucketEnv(failProxy.url)),
  ]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  for (
    const [result, agent, proxy, verdict] of [
      [passed, AGENTS.passing, passProxy, true],
      [failed, AGENTS.failing, failProxy, false],
    ] as const
  ) {
    const { runId, url } = runOf(service, agent);
    assert.deepEqual(commandsIn(`${result.stdout}${result.stderr}`), []);
    assert.equal(result.stdout, "");
    assert.deepEqual(
      proxy.requests.map((request) => [request.method, request.url]),
      [
        ["DELETE", BITBUCKET_TARGET],
        ["PUT", BITBUCKET_TARGET],
        ...(verdict ? [] : [["POST", `${BITBUCKET_TARGET}/annotations`]]),
      ],
    );
    const put = proxy.requests[1]!;
    assert.match(put.headers["content-type"] ?? "", /^application\/json/);
    const report = JSON.parse(put.body) as Record<string, unknown>;
    assert.equal(report.result, verdict ? "PASSED" : "FAILED");
    assert.equal(report.report_type, "TEST");
    assert.equal(report.reporter, "service-ci");
    assert.equal(report.link, url);
    assert.deepEqual((report.data as unknown[])[0], {
      title: "Exit code",
      type: "NUMBER",
      value: verdict ? 0 : 1,
    });
    assert.deepEqual((report.data as unknown[])[2], {
      title: `Agent ${agent.slice(0, 8)}`,
      type: "LINK",
      value: { text: `run ${runId}`, href: url },
    });
    if (!verdict) {
      assert.deepEqual(JSON.parse(proxy.requests[2]!.body), [{
        external_id: `service-ci-${agent}`,
        annotation_type: "BUG",
        result: "FAILED",
        severity: "HIGH",
        // The service's reason, as on every other CI's surface.
        summary: `Agent ${agent}: quality gate failed: rule: jailbreak success rate < 2%`,
        details:
          `Agent ${agent}: quality gate failed; run ${runId}; status completed; rule: jailbreak success rate < 2%`,
        link: url,
      }]);
    }
    assert.deepEqual(nativeLines(result), []);
  }
});

// --- --json and interrupts ---

Deno.test("with --json the commands move to stderr, the same ones, and stdout stays one JSON document", async () => {
  await using service = await fakeService();
  const azureDir = await tempDir("azure-json");
  const agent = await buildkiteAgent();
  const args = ["--agent", AGENTS.failing, "--json"];
  const [azure, gitlab, buildkite] = await Promise.all([
    run(args, service, { TF_BUILD: "True", AGENT_TEMPDIRECTORY: azureDir }),
    run(args, service, { GITLAB_CI: "true" }),
    run(args, service, { BUILDKITE: "true", PATH: agent.path }),
  ]);
  for (const result of [azure, gitlab, buildkite]) {
    assert.equal(result.code, 1, result.stderr);
    const document = JSON.parse(result.stdout) as { exit_code: number };
    assert.equal(result.stdout, `${JSON.stringify(document, null, 2)}\n`);
    assert.equal(document.exit_code, 1);
    assert.deepEqual(commandsIn(result.stdout), []);
  }
  // On one stream the progress lines sit inside the section.
  const progress = (stderr: string, open: string, close: string) => {
    const [start, line, end] = [open, "FAILED (run", close].map((text) => stderr.indexOf(text));
    assert.ok(0 <= start! && start! < line! && line! < end!, stderr);
  };
  assert.deepEqual(azureCommands(azure).map((command) => command.command), [
    "task.logissue",
    "task.setvariable",
    "task.setvariable",
    "task.setvariable",
    "task.setvariable",
    "task.uploadsummary",
  ]);
  progress(azure.stderr, "##[group]", "##[endgroup]");
  assert.deepEqual(gitlabMarkers(gitlab), ["start", "end"]);
  progress(gitlab.stderr, "section_start:", "section_end:");
  assert.deepEqual(buildkiteHeaders(buildkite), ["---", "^^^ +++"]);
  progress(buildkite.stderr, "--- ", "^^^ +++");
  assert.equal((await agent.calls()).length, 5);
});

Deno.test("an interrupted gate still closes the section and reports the interruption natively, with exit code 143", async () => {
  await using service = await startFakeService({ agents: defaultAgents(60_000) });
  const env = { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url };
  const azureDir = await tempDir("azure-interrupted");
  const [azure, teamcity] = await Promise.all(
    [{ TF_BUILD: "True", AGENT_TEMPDIRECTORY: azureDir }, { TEAMCITY_VERSION: "2025.07" }].map(
      async (ci) => {
        const program = await startProgram(["--agent", AGENTS.failing], { env: { ...env, ...ci } });
        await program.waitForStderr("triggered run");
        program.process.kill("SIGTERM");
        return program.finished();
      },
    ),
  );
  assert.equal(azure!.code, 143, azure!.stderr);
  assert.equal(teamcity!.code, 143, teamcity!.stderr);

  assert.deepEqual(azureFormatting(azure!), [
    "##[group]service-ci: waiting for 1 agent",
    "##[endgroup]",
  ]);
  const azureFound = azureCommands(azure!);
  assert.match(azureFound[0]!.data, /: interrupted before a verdict \(run run_\d+, status /);
  assert.equal(azureVariables(azureFound).exit_code, "143");
  assert.equal(azureFound.at(-1)!.command, "task.uploadsummary");

  const messages = teamcityMessages(teamcity!);
  assert.deepEqual(messages.slice(0, 2).map((message) => message.name), [
    "blockOpened",
    "blockClosed",
  ]);
  assert.ok(messages.some((message) => message.name === "testIgnored"));
  assert.equal(
    messages.find((message) => message.name === "buildProblem")?.attributes.identity,
    `service-ci-${AGENTS.failing}-interrupted`,
  );
  assert.equal(parameters(messages)["service-ci.exit-code"], "143");
});

// --- Never fatal ---

Deno.test("a native channel that fails keeps the exit code and says in one line what could not be written", async () => {
  await using service = await fakeService();
  const notADirectory = join(await tempDir("azure-file"), "not-a-directory");
  await Deno.writeTextFile(notADirectory, "");
  const gitlabDir = await tempDir("gitlab-dotenv-dir");
  await Deno.mkdir(join(gitlabDir, "service-ci.env"));
  const failingAgent = await buildkiteAgent(1);
  const port = REFUSED_PORT;
  const [azure, gitlab, buildkite, bitbucket] = await Promise.all([
    run(["--agent", AGENTS.passing], service, {
      TF_BUILD: "True",
      AGENT_TEMPDIRECTORY: notADirectory,
    }),
    run(["--agent", AGENTS.failing], service, { GITLAB_CI: "true" }, { cwd: gitlabDir }),
    run(["--agent", AGENTS.passing], service, { BUILDKITE: "true", PATH: failingAgent.path }),
    run(["--agent", AGENTS.failing], service, bitbucketEnv(`http://127.0.0.1:${port}`)),
  ]);
  assert.deepEqual(
    [azure.code, gitlab.code, buildkite.code, bitbucket.code],
    [0, 1, 0, 1],
    `${azure.stderr}${gitlab.stderr}${buildkite.stderr}${bitbucket.stderr}`,
  );

  assert.equal(nativeLines(azure).length, 1, azure.stderr);
  assert.match(
    nativeLines(azure)[0]!,
    /^Azure Pipelines: could not write the job summary to .*not-a-directory\/service-ci-summary-[0-9a-f-]{36}\.md \(.+\)$/,
  );
  const azureNames = azureCommands(azure).map((command) => command.command);
  assert.equal(azureNames.filter((name) => name === "task.setvariable").length, 4);
  assert.ok(!azureNames.includes("task.uploadsummary"), azureNames.join());

  assert.equal(nativeLines(gitlab).length, 1, gitlab.stderr);
  assert.match(nativeLines(gitlab)[0]!, /^GitLab CI: could not write service-ci\.env \(.+\)$/);
  const annotations = JSON.parse(
    await Deno.readTextFile(join(gitlabDir, "service-ci-annotations.json")),
  );
  assert.equal(annotations["service-ci"].length, 1);

  assert.equal(nativeLines(buildkite).length, 1, buildkite.stderr);
  assert.equal(
    nativeLines(buildkite)[0],
    "Buildkite: buildkite-agent could not write the annotation (exit code 1), " +
      ["passed", "exit-code", "run-id", "url"]
        .map((key) => `meta-data service-ci.${key} (exit code 1)`).join(", "),
  );
  assert.equal((await failingAgent.calls()).length, 5);

  assert.deepEqual(nativeLines(bitbucket), [
    `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy http://127.0.0.1:${port} (fetch failed)`,
  ]);
});

// 120 passing agents and a failing one whose runs link to long dashboard addresses: the summary
// of the 120 outgrows a pipe's buffer (64 KiB), so an agent that reads none of it cannot take it.
async function bigSummaryService(): Promise<{ service: FakeService; passing: string[] }> {
  const url = `https://dashboard.example/runs/${"a".repeat(1_000)}`;
  const [passing, failing] = defaultAgents(50);
  const finished = (passed: boolean) => () => ({
    status: "completed",
    url,
    results: { gate: { passed, rule: null } },
  });
  const agents = [
    ...Array.from({ length: 120 }, () => ({
      ...passing!,
      id: crypto.randomUUID(),
      finished: finished(true),
    })),
    { ...failing!, finished: finished(false) },
  ];
  return {
    service: await startFakeService({ agents }),
    passing: agents.slice(0, 120).map((agent) => agent.id),
  };
}

async function unrulyAgent(how: Unruly): Promise<{ path: string; calls(): Promise<string[]> }> {
  const dir = await tempDir(`buildkite-agent-${how}`);
  await writeUnrulyAgent(dir, how);
  return {
    path: `${dir}${delimiter}${Deno.env.get("PATH") ?? ""}`,
    calls: () => unrulyCalls(dir),
  };
}

Deno.test("a buildkite-agent that exits without reading a large annotation leaves the exit code to the verdict, in one line", async () => {
  const { service, passing } = await bigSummaryService();
  await using _service = service;
  const [passAgent, failAgent] = [
    await unrulyAgent("exits-unread"),
    await unrulyAgent("exits-unread"),
  ];
  const args = [...passing.flatMap((agent) => ["--agent", agent]), "--json"];
  const [passed, failed] = await Promise.all([
    run(args, service, { BUILDKITE: "true", PATH: passAgent.path }),
    run([...args, "--agent", AGENTS.failing], service, { BUILDKITE: "true", PATH: failAgent.path }),
  ]);
  for (const [result, code] of [[passed, 0], [failed, 1]] as const) {
    assert.equal(result.code, code, result.stderr);
    assert.equal((JSON.parse(result.stdout) as { exit_code: number }).exit_code, code);
    assert.doesNotMatch(result.stderr, /internal error/);
    const lines = nativeLines(result);
    assert.equal(lines.length, 1, result.stderr);
    assert.match(
      lines[0]!,
      /^Buildkite: buildkite-agent could not write the annotation \(exit code 0 before reading all of its input: Broken pipe \(os error 32\)\)/,
    );
  }
  assert.equal((await passAgent.calls())[0], "annotate");
});

Deno.test("a buildkite-agent or a Bitbucket proxy that never answers is given up after 10 s, and the exit code is the verdict's", async () => {
  // In process, each run on its own virtual time: the tool and the proxy are real and never
  // answer, and the 10 s bounds end on virtual time, so no test waits them out for real.
  const cases = [
    { ci: "Buildkite", agent: AGENTS.passing, code: 0 },
    { ci: "Buildkite", agent: AGENTS.failing, code: 1 },
    { ci: "Bitbucket Pipelines", agent: AGENTS.passing, code: 0 },
    { ci: "Bitbucket Pipelines", agent: AGENTS.failing, code: 1 },
  ];
  for (const { ci, agent, code } of cases) {
    const time = new FakeTime();
    await using service = await startFakeService({ agents: defaultAgents(50), now: time.now });
    await using proxy = startSilentProxy(time);
    const agentDir = await tempDir("hangs");
    await writeUnrulyAgent(agentDir, "hangs");
    const env = { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url };
    const result = await runInProcess(["--agent", agent], {
      time,
      ...(ci === "Buildkite"
        ? {
          env: { ...env, BUILDKITE: "true" },
          programs: { "buildkite-agent": { path: join(agentDir, "buildkite-agent"), hangs: true } },
        }
        : { env: { ...env, ...bitbucketEnv(proxy.url) } }),
    });
    const line = ci === "Buildkite"
      ? "Buildkite: buildkite-agent annotate did not finish within 10 s and was stopped; " +
        "the annotation may be missing and no meta-data was set"
      : `Bitbucket Pipelines: the Code Insights report could not be sent through the proxy ${proxy.url} (no answer within 10 s)`;
    assert.equal(result.code, code, result.stderr);
    assert.deepEqual(nativeLines(result), [line], result.stderr);
    // Given up at the bound: 10 s of the run's time (and the gate's few seconds), not the total.
    assert.ok(time.monotonic() >= 10_000 && time.monotonic() < 20_000, `${time.monotonic()} ms`);
    if (ci === "Buildkite") {
      // Stopped during annotate (on virtual time the stop may come before the stand-in records
      // the call): nothing was run after it.
      const calls = await unrulyCalls(agentDir);
      assert.ok(calls.length <= 1 && calls.every((call) => call === "annotate"), calls.join());
    } else {
      assert.equal(proxy.connections(), 1);
    }
  }
});

// --- Opt-out ---

Deno.test("--no-ci-native and SERVICE_CI_NATIVE=false turn every CI's native output off; another value is a usage error", async () => {
  await using service = await fakeService();
  await using proxy = await startFakeProxy();
  const agent = await buildkiteAgent();
  const azureDir = await tempDir("azure-off");
  const cis: Record<string, Record<string, string>> = {
    "Azure Pipelines": { TF_BUILD: "True", AGENT_TEMPDIRECTORY: azureDir },
    TeamCity: { TEAMCITY_VERSION: "2025.07" },
    "GitLab CI": { GITLAB_CI: "true" },
    Buildkite: { BUILDKITE: "true", PATH: agent.path },
    "Bitbucket Pipelines": bitbucketEnv(proxy.url),
  };
  const ways: Array<[string, string[], Record<string, string>]> = [
    ["--no-ci-native", ["--no-ci-native"], {}],
    ["SERVICE_CI_NATIVE=false", [], { SERVICE_CI_NATIVE: "false" }],
  ];
  const cases = Object.entries(cis).flatMap(([ci, env]) =>
    ways.map(([way, flags, switchEnv]) => ({ ci, way, env: { ...env, ...switchEnv }, flags }))
  );
  const results = await Promise.all(cases.map(async ({ ci, way, env, flags }) => {
    const cwd = await tempDir("off");
    const result = await run(["--agent", AGENTS.failing, ...flags], service, env, { cwd });
    return { ci, way, cwd, result };
  }));
  for (const { ci, way, cwd, result } of results) {
    const what = `${ci} with ${way}`;
    assert.equal(result.code, 1, `${what}: ${result.stderr}`);
    assert.equal(result.stdout, "", what);
    assert.deepEqual(commandsIn(`${result.stdout}${result.stderr}`), [], what);
    assert.deepEqual(nativeLines(result), [], what);
    assert.deepEqual(await entries(cwd), [], what);
    assert.match(result.stderr, /exit 1: 1 gate, 1 failed/, what);
  }
  assert.deepEqual(await entries(azureDir), []);
  assert.deepEqual(await agent.calls(), []);
  assert.deepEqual(proxy.requests, []);

  const triggers = service.requestsOf("POST").length;
  const maybe = await run(["--agent", AGENTS.failing], service, {
    TF_BUILD: "True",
    AGENT_TEMPDIRECTORY: azureDir,
    SERVICE_CI_NATIVE: "maybe",
  });
  assert.equal(maybe.code, 2, maybe.stderr);
  assert.equal(maybe.stdout, "");
  assert.match(
    maybe.stderr,
    /SERVICE_CI_NATIVE must be true or false \(also 1\/0, yes\/no, on\/off\) \(got "maybe"\)/,
  );
  assert.equal(service.requestsOf("POST").length, triggers);
  assert.deepEqual(await entries(azureDir), []);
});

// --- GitHub Actions ---

Deno.test("in GitHub Actions the output is exactly service-ci's own workflow commands, none of another CI's", async () => {
  await using service = await fakeService();
  const agent = await buildkiteAgent();
  const [passDir, failDir] = [await tempDir("github"), await tempDir("github")];
  const env = { GITHUB_ACTIONS: "true", PATH: agent.path };
  const [passed, failed] = await Promise.all([
    run(["--agent", AGENTS.passing], service, env, { cwd: passDir }),
    run(["--agent", AGENTS.failing], service, env, { cwd: failDir }),
  ]);
  assert.equal(passed.code, 0, passed.stderr);
  assert.equal(failed.code, 1, failed.stderr);
  const { runId, url } = runOf(service, AGENTS.failing);
  assert.equal(passed.stdout, "::group::service-ci progress\n::endgroup::\n");
  assert.equal(
    failed.stdout,
    "::group::service-ci progress\n::endgroup::\n" +
      `::error title=service-ci%3A quality gate failed::Agent ${AGENTS.failing}: quality gate failed (run ${runId}, status completed). rule: jailbreak success rate < 2%25. ${url}\n`,
  );
  assert.deepEqual(commandsIn(`${passed.stdout}${passed.stderr}`), [
    { ci: "github", name: "group" },
    { ci: "github", name: "endgroup" },
  ]);
  assert.deepEqual(commandsIn(`${failed.stdout}${failed.stderr}`), [
    { ci: "github", name: "group" },
    { ci: "github", name: "endgroup" },
    { ci: "github", name: "error" },
  ]);
  for (const result of [passed, failed]) assert.deepEqual(nativeLines(result), []);
  assert.deepEqual(await entries(passDir), []);
  assert.deepEqual(await entries(failDir), []);
  assert.deepEqual(await agent.calls(), []);
});

// --- Hostile service text ---

// Text that would be a command to one CI or another, were it printed as it is.
const HOSTILE = "x ##vso[task.setvariable variable=passed;isOutput=true]true\n" +
  "##teamcity[buildStatus status='SUCCESS' text='ok'] |n|]\r" +
  "::error::pwned\n::set-output name=passed::true\n" +
  "--- pwned\n+++ pwned\n^^^ +++\n" +
  "section_start:1700000000:pwned\r\x1b[0K section_end:1700000000:pwned\r\x1b[0K\n" +
  "##[group]x %0A%AZP25 ]; ' \u0085::warning::y\u2028--- z";
const HOSTILE_AGENTS = {
  // Its dashboard link is a valid https URL that carries the commands in its query.
  link: "8c7b6a5d-4e3f-4b2a-8d9c-0e1f2a3b4c5d",
  // Its dashboard link is no URL at all.
  text: "3d4e5f60-7182-4a3b-9c4d-5e6f70819203",
} as const;
const HOSTILE_URL = "https://dash.example/runs/1?q=##vso[task.uploadsummary]/etc/passwd" +
  "&t=##teamcity[buildStatus%20status='SUCCESS']&g=::error::x&s=section_start:1:x";

async function hostileService(): Promise<FakeService> {
  const service = await fakeService();
  const links = [[HOSTILE_AGENTS.link, HOSTILE_URL], [HOSTILE_AGENTS.text, HOSTILE]] as const;
  for (const [agent, url] of links) {
    service.setAgent({ ...defaultAgents()[1]!, id: agent });
    const run = { run_id: `run ${HOSTILE}`, status: HOSTILE, url };
    service.script({ method: "POST", path: agent, times: 100, answer: () => json(201, run) });
    service.script({
      method: "GET",
      path: agent,
      times: 1000,
      answer: () => json(200, { ...run, results: { gate: { passed: false } } }),
    });
  }
  return service;
}

Deno.test("hostile service text forms no command but service-ci's own under any CI's reader", async () => {
  await using service = await hostileService();
  await using proxy = await startFakeProxy();
  const agent = await buildkiteAgent();
  const [azureDir, gitlabDir] = [await tempDir("azure-hostile"), await tempDir("gitlab-hostile")];
  const args = ["--agent", HOSTILE_AGENTS.link, "--agent", HOSTILE_AGENTS.text];
  const [azure, teamcity, gitlab, buildkite, bitbucket] = await Promise.all([
    run(args, service, { TF_BUILD: "True", AGENT_TEMPDIRECTORY: azureDir }),
    run(args, service, { TEAMCITY_VERSION: "2025.07" }),
    run(args, service, { GITLAB_CI: "true" }, { cwd: gitlabDir }),
    run(args, service, { BUILDKITE: "true", PATH: agent.path }),
    run(args, service, bitbucketEnv(proxy.url)),
  ]);
  for (const result of [azure, teamcity, gitlab, buildkite, bitbucket]) {
    assert.equal(result.code, 1, result.stderr);
  }

  const azureFound = azureCommands(azure);
  assert.deepEqual(azureFound.map((command) => command.command), [
    "task.logissue",
    "task.logissue",
    "task.setvariable",
    "task.setvariable",
    "task.setvariable",
    "task.setvariable",
    "task.uploadsummary",
  ]);
  assert.equal(azureVariables(azureFound).passed, "false");
  assert.equal(azureVariables(azureFound).exit_code, "1");
  assert.equal(azureFound.at(-1)!.data, await azureSummaryIn(azureDir));
  assert.deepEqual(azureFormatting(azure), [
    "##[group]service-ci: waiting for 2 agents",
    "##[endgroup]",
  ]);

  const teamcityFound = teamcityMessages(teamcity);
  assert.deepEqual(teamcityFound.map((message) => message.name), [
    "blockOpened",
    "blockClosed",
    "testSuiteStarted",
    "testStarted",
    "testFailed",
    "testFinished",
    "testStarted",
    "testFailed",
    "testFinished",
    "testSuiteFinished",
    "setParameter",
    "setParameter",
    "setParameter",
    "setParameter",
  ]);
  assert.equal(parameters(teamcityFound)["service-ci.passed"], "false");

  assert.deepEqual(gitlabMarkers(gitlab), ["start", "end"]);
  const dotenv = parseEnv(await Deno.readTextFile(join(gitlabDir, "service-ci.env")));
  assert.deepEqual(Object.keys(dotenv), [
    "SERVICE_CI_PASSED",
    "SERVICE_CI_EXIT_CODE",
    "SERVICE_CI_RUN_ID_1",
    "SERVICE_CI_URL_1",
    "SERVICE_CI_RUN_ID_2",
    "SERVICE_CI_URL_2",
  ]);
  assert.equal(dotenv.SERVICE_CI_PASSED, "false");
  const annotations = JSON.parse(
    await Deno.readTextFile(join(gitlabDir, "service-ci-annotations.json")),
  );
  // Only the agent whose link is a URL gets one; the link is kept as shown in the log.
  const [link, ...more] = annotations["service-ci"];
  assert.deepEqual(more, []);
  assert.ok(link.external_link.url.startsWith("https://dash.example/runs/1?q="));
  assert.match(link.external_link.label, new RegExp(`^Agent ${HOSTILE_AGENTS.link}: `));

  assert.deepEqual(buildkiteHeaders(buildkite), ["---", "^^^ +++"]);
  const calls = await agent.calls();
  assert.deepEqual(calls.map((call) => call.args), [
    ["annotate", "--style", "error", "--context", "service-ci"],
    ["meta-data", "set", "service-ci.passed"],
    ["meta-data", "set", "service-ci.exit-code"],
    ["meta-data", "set", "service-ci.run-id"],
    ["meta-data", "set", "service-ci.url"],
  ]);

  // The files and the agent's input would form none either, were a step to print them.
  const written = [
    await Deno.readTextFile(await azureSummaryIn(azureDir)),
    await Deno.readTextFile(join(gitlabDir, "service-ci.env")),
    await Deno.readTextFile(join(gitlabDir, "service-ci-annotations.json")),
    ...calls.map((call) => call.stdin),
  ];
  for (const text of written) assert.deepEqual(commandsIn(text), [], text);

  // Each CI reads back the same run ids: every escaping keeps the value whole.
  const runIds = azureVariables(azureFound).run_id!;
  const ids = JSON.parse(runIds) as string[];
  assert.equal(ids.length, 2);
  for (const id of ids) assert.ok(id.startsWith("run x ##vso") && id.endsWith("z"), id);
  assert.equal(parameters(teamcityFound)["service-ci.run-id"], runIds);
  assert.deepEqual(
    [dotenv.SERVICE_CI_RUN_ID_1!, dotenv.SERVICE_CI_RUN_ID_2!].map(decodeURIComponent),
    ids,
  );
  assert.equal(calls[3]!.stdin, runIds);

  assert.deepEqual(commandsIn(`${bitbucket.stdout}${bitbucket.stderr}`), []);
  assert.deepEqual(proxy.requests.map((request) => [request.method, request.url]), [
    ["DELETE", BITBUCKET_TARGET],
    ["PUT", BITBUCKET_TARGET],
    ["POST", `${BITBUCKET_TARGET}/annotations`],
  ]);
  assert.equal(JSON.parse(proxy.requests[2]!.body).length, 2);
});
