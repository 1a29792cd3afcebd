/**
 * End to end: the reports (contract §4 `--json`, `--junit`, §6 GitHub Actions) and the flags
 * that shape them (`--no-wait`, `--run-id`, `--warn-only`), against the fake service: `run()`
 * in process on virtual time (tests/support/in_process.ts), the real entry point where its
 * streams are the point (`--junit /dev/stdout`).
 */

import assert from "node:assert/strict";
import { Ajv2020 } from "npm:ajv@8.17.1/dist/2020.js";
import addFormatsModule from "npm:ajv-formats@3.0.1";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  KEYS,
  problem,
  startFakeService,
} from "../support/fake_service.ts";
import { readGithubOutput } from "../support/github_output.ts";
import { assertValidJunit, xmlTest, xpath } from "../support/junit.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { type ProgramResult, runProgram } from "../support/program.ts";

const addFormats = addFormatsModule.default ?? addFormatsModule;
const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const validateReport = ajv.compile(
  JSON.parse(await Deno.readTextFile(new URL("../../docs/report.schema.json", import.meta.url))),
);

const SECOND_FAILING = "7b6a5c4d-3e2f-4a1b-9c8d-7e6f5a4b3c2d";
const HOSTILE_AGENT = "8c7b6a5d-4e3f-4b2a-8d9c-0e1f2a3b4c5d";

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

function finishing(id: string, finished: NonNullable<FakeAgent["finished"]>): FakeAgent {
  const base = defaultAgents(100).find((agent) => agent.id === AGENTS.failing)!;
  return { ...base, id, finished };
}

// Parses the whole stdout as one JSON document: anything before or after it fails the parse,
// and re-rendering it must give back exactly what was printed.
function onlyJson(result: ProgramResult): Record<string, unknown> {
  const document = JSON.parse(result.stdout) as Record<string, unknown>;
  assert.equal(result.stdout, `${JSON.stringify(document, null, 2)}\n`);
  assert.ok(validateReport(document), JSON.stringify(validateReport.errors, null, 2));
  return document;
}

type JsonAgent = Record<string, unknown>;

function agentsOf(document: Record<string, unknown>): JsonAgent[] {
  return document.agents as JsonAgent[];
}

async function githubEnv(url: string): Promise<{
  env: Record<string, string>;
  output: () => Promise<Map<string, string>>;
  summary: () => Promise<string>;
}> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-github-" });
  const output = `${dir}/output`;
  const summary = `${dir}/summary.md`;
  return {
    env: env(url, { GITHUB_ACTIONS: "true", GITHUB_OUTPUT: output, GITHUB_STEP_SUMMARY: summary }),
    output: async () => readGithubOutput(await Deno.readTextFile(output)),
    summary: () => Deno.readTextFile(summary),
  };
}

function runUrl(base: string, agent: string, run: unknown): string {
  return `${base}/dashboard/agents/${agent}/runs/${run}`;
}

Deno.test("--json prints one schema-valid document on stdout; progress stays on stderr", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--json"],
    { time, env: env(service.url) },
  );
  assert.equal(result.code, 1, result.stderr);
  const document = onlyJson(result);
  assert.equal(document.exit_code, 1);
  assert.equal(document.warn_only, false);
  assert.equal((document.ci_metadata as Record<string, unknown>).provider, "local");
  const [passed, failed] = agentsOf(document);
  const runIds = service.requestsOf("POST").length;
  assert.equal(runIds, 2);
  for (
    const [agent, id, verdict] of [[passed, AGENTS.passing, true], [
      failed,
      AGENTS.failing,
      false,
    ]] as const
  ) {
    assert.ok(agent);
    assert.match(String(agent.run_id), /^run_000[12]$/);
    assert.deepEqual(agent, {
      agent_id: id,
      run_id: agent.run_id,
      status: "completed",
      passed: verdict,
      outcome: verdict ? "passed" : "failed",
      exit_code: verdict ? 0 : 1,
      duration_ms: agent.duration_ms,
      url: runUrl(service.url, id, agent.run_id),
      error: null,
      // What the fake service says beside its verdict (its agents' rules).
      gate: { rule: verdict ? "toxicity < 0.01" : "jailbreak success rate < 2%" },
    });
    assert.ok(Number(agent.duration_ms) >= 100, `duration ${agent.duration_ms}`);
  }
  assert.notEqual(passed!.run_id, failed!.run_id);
  assert.match(result.stderr, /triggered run run_000[12]/);
  assert.match(result.stderr, /exit 1: 2 gates, 1 passed, 1 failed/);
  assert.doesNotMatch(result.stderr, /"schema_version"/);
});

xmlTest(
  "--junit writes an XSD-valid file with one testcase per agent and a failure for the failing one",
  async () => {
    const time = new FakeTime();
    await using service = await startFakeService({ now: time.now });
    const dir = await Deno.makeTempDir();
    const file = `${dir}/gates.xml`;
    const result = await runInProcess(
      ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--junit", file],
      { time, env: env(service.url) },
    );
    assert.equal(result.code, 1, result.stderr);
    assert.equal(result.stdout, "");
    await assertValidJunit(file);
    assert.equal(await xpath(file, "count(//testsuite)"), "1");
    assert.equal(await xpath(file, "count(//testcase)"), "2");
    assert.equal(
      await xpath(file, "string(//testcase[1]/@name)"),
      `agent ${AGENTS.passing}`,
    );
    assert.equal(await xpath(file, "count(//testcase[1]/*[self::failure or self::error])"), "0");
    assert.equal(
      await xpath(file, "string(//testcase[failure]/@name)"),
      `agent ${AGENTS.failing}`,
    );
    assert.equal(await xpath(file, "count(//failure)"), "1");
    assert.equal(await xpath(file, "count(//error)"), "0");
    assert.equal(await xpath(file, "string(//testsuite/@failures)"), "1");
    assert.equal(await xpath(file, "string(//failure/@type)"), "gate_failed");
  },
);

xmlTest("--junit keeps a hostile status from the service escaped", async () => {
  const time = new FakeTime();
  const hostile = "completed</testcase>\u001b[31m::error::x";
  await using service = await startFakeService({
    now: time.now,
    agents: [
      finishing(HOSTILE_AGENT, () => ({ status: hostile, results: { gate: { passed: false } } })),
    ],
  });
  const dir = await Deno.makeTempDir();
  const file = `${dir}/gates.xml`;
  const result = await runInProcess(["--agent", HOSTILE_AGENT, "--junit", file], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 1, result.stderr);
  await assertValidJunit(file);
  const xml = await Deno.readTextFile(file);
  assert.ok(!xml.includes("\x1b"), xml);
  assert.ok(!xml.includes("</testcase>::"), xml);
  assert.ok(xml.includes("completed&lt;/testcase&gt;::error::x"), xml);
  assert.equal(await xpath(file, "count(//testcase)"), "1");
  assert.match(
    await xpath(file, "string(//testcase/system-out)"),
    /^status: completed<\/testcase>::error::x$/m,
  );
  for (const line of `${result.stdout}${result.stderr}`.split("\n")) {
    assert.doesNotMatch(line, /^\s*::/, line);
  }
  assert.ok(!result.stderr.includes("\x1b"), result.stderr);
});

// Every report path is checked before the trigger: exit 2, the flag or variable named, nothing sent.
const BAD_PATHS: Array<
  [string, (dir: string) => string[], (dir: string) => Record<string, string>, RegExp]
> = [
  [
    "--junit into a missing directory",
    (dir) => ["--junit", `${dir}/nope/gates.xml`],
    () => ({}),
    /^service-ci: --junit "[^"]*\/nope\/gates\.xml" is in a directory that does not exist; create it first \(mkdir -p '[^']*\/nope'\) or give it a writable file path \(nothing was sent\)\n$/,
  ],
  [
    "--junit that is a directory",
    (dir) => ["--junit", dir],
    () => ({}),
    /^service-ci: --junit "[^"]*" is a directory: /,
  ],
  [
    "--junit under a file",
    (dir) => ["--junit", `${dir}/file.txt/gates.xml`],
    () => ({}),
    /^service-ci: --junit "[^"]*" a part of its directory is not a directory: /,
  ],
  [
    "GITHUB_STEP_SUMMARY that is a directory",
    () => [],
    (dir) => ({ GITHUB_ACTIONS: "true", GITHUB_STEP_SUMMARY: dir }),
    /^service-ci: GITHUB_STEP_SUMMARY "[^"]*" is a directory: give the step a writable file path/,
  ],
  [
    "GITHUB_OUTPUT in a missing directory (GITHUB_ACTIONS in any letter case)",
    () => [],
    (dir) => ({ GITHUB_ACTIONS: "TRUE", GITHUB_OUTPUT: `${dir}/nope/output` }),
    /^service-ci: GITHUB_OUTPUT "[^"]*" is in a directory that does not exist; create it first/,
  ],
];

for (const [name, args, extra, message] of BAD_PATHS) {
  Deno.test(`${name}: exit 2 before anything is sent, naming it`, async () => {
    const time = new FakeTime();
    await using service = await startFakeService({ now: time.now });
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/file.txt`, "x");
      const result = await runInProcess(["--agent", AGENTS.passing, ...args(dir)], {
        time,
        env: { ...env(service.url), ...extra(dir) },
      });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(service.requests.length, 0);
      // Nothing was left behind by the check.
      assert.deepEqual([...Deno.readDirSync(dir)].map((entry) => entry.name), ["file.txt"]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("--junit /dev/stdout (and -) writes the report to stdout, progress on stderr, no Deno prompt text", async () => {
  await using service = await startFakeService();
  for (const path of ["/dev/stdout", "-"]) {
    const result = await runProgram(["--agent", AGENTS.passing, "--junit", path], {
      env: env(service.url),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /^<\?xml [^\n]*\?>\n<testsuites[\s\S]*<\/testsuites>\n$/);
    assert.match(result.stderr, /exit 0:/);
    assert.doesNotMatch(result.stderr, /allow-all|Requires .* access/);
  }
});

Deno.test("--junit /dev/stdout with --json: exit 2, both cannot own stdout", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing, "--json", "--junit", "/dev/stdout"], {
    env: env(service.url),
  });
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--junit \/dev\/stdout and --json cannot both be written to stdout/);
  assert.equal(service.requests.length, 0);
});

Deno.test("GITHUB_ACTIONS=TRUE (any letter case) is GitHub Actions everywhere: outputs and summary written", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const dir = await Deno.makeTempDir();
  try {
    const result = await runInProcess(["--agent", AGENTS.passing], {
      time,
      env: {
        ...env(service.url),
        GITHUB_ACTIONS: "TRUE",
        GITHUB_OUTPUT: `${dir}/output`,
        GITHUB_STEP_SUMMARY: `${dir}/summary.md`,
      },
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(await Deno.readTextFile(`${dir}/output`), /exit-code<<(\S+)\n0\n\1\n/);
    assert.match(await Deno.readTextFile(`${dir}/summary.md`), /Exit code 0/);
    const sent = JSON.parse(service.requestsOf("POST")[0]!.body);
    assert.equal(sent.ci_metadata.provider, "github_actions");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("in GitHub Actions: outputs, a summary table, a log group and one annotation per failed gate", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.setAgent({ ...defaultAgents()[1]!, id: SECOND_FAILING });

  const one = await githubEnv(service.url);
  const single = await runInProcess(["--agent", AGENTS.failing], { time, env: one.env });
  assert.equal(single.code, 1, single.stderr);
  const outputs = await one.output();
  assert.deepEqual(Object.fromEntries([...outputs].filter(([name]) => name !== "agents")), {
    passed: "false",
    "run-id": "run_0001",
    status: "completed",
    url: runUrl(service.url, AGENTS.failing, "run_0001"),
    "exit-code": "1",
  });
  assert.equal(JSON.parse(outputs.get("agents")!)[0].outcome, "failed");

  const many = await githubEnv(service.url);
  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--agent", SECOND_FAILING],
    { time, env: many.env },
  );
  assert.equal(result.code, 1, result.stderr);
  const lines = result.stdout.trimEnd().split("\n");
  assert.equal(lines[0], "::group::service-ci progress");
  assert.equal(lines[1], "::endgroup::");
  const errors = lines.slice(2);
  assert.equal(errors.length, 2, result.stdout);
  for (const [index, agent] of [AGENTS.failing, SECOND_FAILING].entries()) {
    assert.match(
      errors[index]!,
      new RegExp(`^::error title=service-ci%3A quality gate failed::Agent ${agent}: `),
    );
  }
  const multi = await many.output();
  assert.equal(multi.get("passed"), "false");
  assert.equal(multi.get("exit-code"), "1");
  assert.deepEqual(JSON.parse(multi.get("status")!), ["completed", "completed", "completed"]);
  const runIds = JSON.parse(multi.get("run-id")!) as string[];
  assert.deepEqual(
    JSON.parse(multi.get("url")!),
    [AGENTS.passing, AGENTS.failing, SECOND_FAILING].map((id, i) =>
      runUrl(service.url, id, runIds[i])
    ),
  );
  const summary = await many.summary();
  assert.match(summary, /^### ❌ service-ci: quality gates failed$/m);
  assert.match(summary, /^\| Agent \| Run \| Status \| Verdict \| Duration \| Link \|$/m);
  const rows = summary.split("\n").filter((line) => /^\| [0-9a-f]/.test(line));
  assert.equal(rows.length, 3);
  assert.match(rows[0]!, /^\| 6f1d2c3b\\-0a9e.* \| ✅ passed \| /);
  assert.match(rows[1]!, /^\| 9a8b7c6d\\-5e4f.* \| ❌ failed: rule\\:&#8203; jailbreak .* \| /);
});

Deno.test("in GitHub Actions with --json, workflow commands move to stderr and stdout stays JSON", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const github = await githubEnv(service.url);
  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--json"],
    { time, env: github.env },
  );
  assert.equal(result.code, 1, result.stderr);
  const document = onlyJson(result);
  assert.equal((document.ci_metadata as Record<string, unknown>).provider, "github_actions");
  assert.doesNotMatch(result.stdout, /::/);
  const commands = result.stderr.split("\n").filter((line) => line.startsWith("::"));
  assert.deepEqual(commands.map((line) => line.replace(/::Agent .*/, "")), [
    "::group::service-ci progress",
    "::endgroup::",
    "::error title=service-ci%3A quality gate failed",
  ]);
  assert.equal((await github.output()).get("exit-code"), "1");
});

Deno.test("--no-wait triggers once, prints the run id and exits 0; --run-id then gives the plain run's verdict", async (t) => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now, agents: defaultAgents(200) });
  for (
    const [agent, code, verdict] of [[AGENTS.passing, 0, "PASSED"], [
      AGENTS.failing,
      1,
      "FAILED",
    ]] as const
  ) {
    await t.step(verdict, async () => {
      const plain = await runInProcess(["--agent", agent], { time, env: env(service.url) });
      assert.equal(plain.code, code, plain.stderr);

      const before = service.requests.length;
      const triggered = await runInProcess(["--agent", agent, "--no-wait"], {
        time,
        env: env(service.url),
      });
      assert.equal(triggered.code, 0, triggered.stderr);
      const sent = service.requests.slice(before);
      assert.deepEqual(sent.map((request) => request.method), ["POST"]);
      const runId = /triggered run (run_\d+)/.exec(triggered.stderr)?.[1];
      assert.ok(runId, triggered.stderr);
      assert.equal(triggered.stdout, "");
      assert.match(triggered.stderr, new RegExp(`TRIGGERED \\(run ${runId}\\)`));
      assert.match(triggered.stderr, /exit 0: 1 gate, 1 triggered without waiting/);

      const attachedFrom = service.requests.length;
      const attached = await runInProcess(["--agent", agent, "--run-id", runId], {
        time,
        env: env(service.url),
      });
      assert.equal(attached.code, plain.code, attached.stderr);
      assert.match(attached.stderr, new RegExp(`attached to run ${runId}`));
      assert.match(attached.stderr, new RegExp(`${verdict} \\(run ${runId}\\)`));
      const reads = service.requests.slice(attachedFrom);
      assert.ok(reads.length > 0);
      for (const read of reads) {
        assert.equal(read.method, "GET");
        assert.equal(read.path, `/api/v1/agents/${agent}/runs/${runId}`);
      }
    });
  }
});

Deno.test("--run-id with two agents is a usage error: exit 2, nothing sent", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const result = await runInProcess(
    ["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--run-id", "run_0001"],
    { time, env: env(service.url) },
  );
  assert.equal(result.code, 2, result.stderr);
  assert.match(result.stderr, /--run-id needs exactly one --agent \(got 2\)/);
  assert.equal(service.requests.length, 0);
});

Deno.test("--no-wait --json prints a document whose agent was triggered", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const result = await runInProcess(["--agent", AGENTS.failing, "--no-wait", "--json"], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 0, result.stderr);
  const document = onlyJson(result);
  assert.equal(document.exit_code, 0);
  const [agent] = agentsOf(document);
  assert.equal(agent?.outcome, "triggered");
  assert.equal(agent?.run_id, "run_0001");
  assert.equal(agent?.passed, null);
  assert.equal(agent?.exit_code, 0);
  assert.equal(agent?.url, runUrl(service.url, AGENTS.failing, "run_0001"));
  assert.equal(service.requestsOf("GET").length, 0);
});

xmlTest(
  "--warn-only exits 0 on a failed gate but still reports it as failed everywhere",
  async () => {
    const time = new FakeTime();
    await using service = await startFakeService({ now: time.now });
    const github = await githubEnv(service.url);
    const dir = await Deno.makeTempDir();
    const file = `${dir}/gates.xml`;
    const result = await runInProcess(
      ["--agent", AGENTS.failing, "--warn-only", "--json", "--junit", file],
      { time, env: github.env },
    );
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, /FAILED \(run run_0001\)/);
    assert.match(
      result.stderr,
      /exit 0: 1 gate, 1 failed \(--warn-only: a failed gate does not fail the build\)/,
    );
    const document = onlyJson(result);
    assert.equal(document.exit_code, 0);
    assert.equal(document.warn_only, true);
    assert.equal(agentsOf(document)[0]?.outcome, "failed");
    assert.equal(agentsOf(document)[0]?.passed, false);
    await assertValidJunit(file);
    assert.equal(await xpath(file, "count(//testcase/failure)"), "1");
    const outputs = await github.output();
    assert.equal(outputs.get("passed"), "false");
    assert.equal(outputs.get("exit-code"), "0");
    assert.match(result.stderr, /^::error title=service-ci%3A quality gate failed::/m);
    assert.match(
      await github.summary(),
      /^### ⚠️ service-ci: quality gate failed \(ignored: --warn-only\)$/m,
    );
  },
);

Deno.test("--warn-only keeps exit 3 for a gate that cannot be checked", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const result = await runInProcess(["--agent", AGENTS.inactive, "--warn-only", "--json"], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 3, result.stderr);
  assert.equal(agentsOf(onlyJson(result))[0]?.outcome, "unchecked");
  const mixed = await runInProcess(
    ["--agent", AGENTS.failing, "--agent", AGENTS.inactive, "--warn-only"],
    { time, env: env(service.url) },
  );
  assert.equal(mixed.code, 3, mixed.stderr);
});

xmlTest("the API key appears in no output or report, even when the service echoes it", async () => {
  const time = new FakeTime();
  const echoing = finishing(HOSTILE_AGENT, () => ({
    status: `failed for ${KEYS.ci}`,
    url: `https://dashboard.example/runs/1?key=${KEYS.ci}`,
    results: { gate: { passed: false } },
  }));
  await using service = await startFakeService({
    now: time.now,
    agents: [...defaultAgents(100), echoing],
  });
  service.script({
    method: "POST",
    path: AGENTS.passing,
    times: 2,
    answer: () => problem(422, "invalid_request", `the key ${KEYS.ci} may not start runs`),
  });
  service.script({
    method: "GET",
    times: 2,
    answer: () => problem(503, "unavailable", `busy, try again, ${KEYS.ci}`),
  });
  const github = await githubEnv(service.url);
  const dir = await Deno.makeTempDir();
  const junit = `${dir}/gates.xml`;
  for (const json of [[], ["--json"]]) {
    const result = await runInProcess(
      ["--agent", AGENTS.passing, "--agent", HOSTILE_AGENT, "--junit", junit, ...json],
      { time, env: github.env },
    );
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /422.*the key \*\*\* may not start runs/);
    assert.match(result.stderr, /failed for \*\*\*/);
    const files = [
      await Deno.readTextFile(junit),
      [...(await github.output()).values()].join("\n"),
      await github.summary(),
    ];
    for (const text of [result.stdout, result.stderr, ...files]) {
      assert.ok(!text.includes(KEYS.ci), text);
    }
    await assertValidJunit(junit);
  }
  assert.ok(
    service.requestsOf("GET").some((request) => request.headers["x-api-key"] === KEYS.ci),
    "the key was sent, so it was there to leak",
  );
});

Deno.test("in GitHub Actions a usage error still annotates and sets passed=false, exit-code=2", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const github = await githubEnv(service.url);
  for (const args of [["--agent", "not-a-uuid"], ["--agent", "not-a-uuid", "--json"]]) {
    const result = await runInProcess(args, { time, env: github.env });
    assert.equal(result.code, 2, result.stderr);
    assert.equal(result.stdout, "", "stdout stays empty (and JSON-free) on a usage error");
    const lines = result.stderr.trimEnd().split("\n");
    assert.match(lines[0]!, /^service-ci: --agent /);
    assert.match(lines[1]!, /^::error title=service-ci%3A usage error::--agent .*not-a-uuid/);
    assert.equal(lines.length, 2, result.stderr);
  }
  const outputs = await github.output();
  assert.deepEqual(Object.fromEntries(outputs), { passed: "false", "exit-code": "2" });
  assert.equal(service.requests.length, 0);
});
