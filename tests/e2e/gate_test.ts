/**
 * End to end: the gate against the fake service, one behaviour of contract §1–§6 each. The exit
 * codes, the environment and the command line go through the real entry point; what the service
 * answers plays in process on virtual time (tests/support/in_process.ts).
 */

import { OPTION_NAMES } from "../../src/config/options.ts";
import assert from "node:assert/strict";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  hang,
  KEYS,
  problem,
  startFakeService,
} from "../support/fake_service.ts";
import { FakeTime } from "../support/fake_time.ts";
import { runInProcess } from "../support/in_process.ts";
import { runProgram } from "../support/program.ts";

const UA = /^service-ci\/\d+\.\d+\.\d+\S* \([a-z0-9_]+; [a-z0-9_]+\)$/;

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

function agentFinishing(id: string, finished: NonNullable<FakeAgent["finished"]>): FakeAgent {
  const base = defaultAgents(100).find((agent) => agent.id === AGENTS.passing)!;
  return { ...base, id, finished };
}

Deno.test("a passing gate exits 0, and the key appears in no output", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing], { env: env(service.url) });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /triggered run run_0001: http:\/\/127\.0\.0\.1:\d+\/dashboard/);
  assert.match(result.stderr, /PASSED/);
  assert.match(result.stderr, /exit 0: 1 gate, 1 passed/);
  assert.equal(result.stdout, "");
  assert.ok(!result.stderr.includes(KEYS.ci));
});

Deno.test("a failing gate exits 1", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.failing], { env: env(service.url) });
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /agent 9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d: FAILED \(run run_0001\)/,
  );
});

Deno.test("the trigger carries the contract's headers and only ci_metadata", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const result = await runInProcess(["--agent", AGENTS.passing, "--branch", "feature/x"], {
    time,
    env: env(service.url),
  });
  assert.equal(result.code, 0, result.stderr);
  const [trigger] = service.requestsOf("POST");
  assert.ok(trigger);
  assert.equal(trigger.path, `/api/v1/agents/${AGENTS.passing}/runs`);
  assert.equal(trigger.headers["x-api-key"], KEYS.ci);
  assert.equal(trigger.headers["accept"], "application/json");
  assert.equal(trigger.headers["content-type"], "application/json");
  assert.match(trigger.headers["user-agent"]!, UA);
  assert.match(
    trigger.headers["idempotency-key"]!,
    /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
  );
  const body = JSON.parse(trigger.body);
  assert.deepEqual(Object.keys(body), ["ci_metadata"]);
  assert.equal(body.ci_metadata.branch, "feature/x");
  for (const read of service.requestsOf("GET")) {
    assert.equal(read.path, `/api/v1/agents/${AGENTS.passing}/runs/run_0001`);
    assert.equal(read.headers["x-api-key"], KEYS.ci);
    assert.match(read.headers["user-agent"]!, UA);
  }
});

const UNCHECKED_DOCUMENTS: Array<[string, Record<string, unknown>]> = [
  ['"passed": "true"', { status: "completed", results: { gate: { passed: "true" } } }],
  ["a finished run without results", { status: "completed" }],
  ["status error", { status: "error", results: { gate: { passed: true } } }],
  ["status cancelled", { status: "Cancelled" }],
  ['"passed": 1', { status: "done", results: { gate: { passed: 1 } } }],
];

for (const [what, document] of UNCHECKED_DOCUMENTS) {
  Deno.test(`${what} cannot be checked: exit 3`, async () => {
    const time = new FakeTime();
    const id = "3d4e5f60-7182-493a-8c1d-2e3f40516273";
    await using service = await startFakeService({
      now: time.now,
      agents: [agentFinishing(id, () => document)],
    });
    const result = await runInProcess(["--agent", id], { time, env: env(service.url) });
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /NOT CHECKED/);
  });
}

const REFUSALS: Array<[number, string, RegExp]> = [
  [401, "invalid_api_key", /401.*fix: check that SERVICE_API_KEY/],
  [403, "ci_access_required", /403.*ci access required.*fix: the API key needs CI access/],
  [404, "agent_not_found", /404.*fix: check the agent UUID/],
  [422, "quality_gate_missing", /422.*fix: the agent has no quality gate/],
];

for (const [status, code, message] of REFUSALS) {
  Deno.test(`a ${status} answer to the trigger exits 3 after exactly one request`, async () => {
    const time = new FakeTime();
    await using service = await startFakeService({ now: time.now });
    service.script({ answer: () => problem(status, code, `${code.replaceAll("_", " ")}`) });
    const result = await runInProcess(["--agent", AGENTS.passing], { time, env: env(service.url) });
    assert.equal(result.code, 3, result.stderr);
    assert.equal(service.requests.length, 1);
    assert.match(result.stderr, message);
  });
}

Deno.test("the service's prerequisites are refused by the fake service itself, each with a hint", async (t) => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [AGENTS.inactive, {}, /409.*inactive.*fix: the agent is inactive: activate it/],
    [AGENTS.noGate, {}, /422.*no quality gate configured.*fix: the agent has no quality gate/],
    // The service's message names the fix (Settings → API Keys): said once, with no hint.
    [
      AGENTS.passing,
      { SERVICE_API_KEY: KEYS.noCi },
      /403.*lacks CI access; create a key with CI access under Settings → API Keys\n/,
    ],
    ["00000000-0000-4000-8000-000000000000", {}, /404.*fix: check the agent UUID/],
  ];
  for (const [agent, extra, message] of cases) {
    await t.step(`${agent} ${JSON.stringify(extra)}`, async () => {
      const before = service.requests.length;
      const result = await runInProcess(["--agent", agent], { time, env: env(service.url, extra) });
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(service.requests.length - before, 1);
    });
  }
});

Deno.test("a 5xx on every poll never becomes a verdict", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  service.script({ method: "GET", times: 100, answer: () => problem(503, "unavailable", "down") });
  const result = await runInProcess(["--agent", AGENTS.passing, "--timeout-minutes", "0.05"], {
    time,
    env: env(service.url),
  });
  assert.ok(result.code === 3 || result.code === 4, `${result.code}: ${result.stderr}`);
  assert.doesNotMatch(result.stderr, /PASSED/);
});

Deno.test("the timeout exits 4 within a second of the deadline", async () => {
  const id = "4e5f6071-8293-44ab-9d2e-3f4051627384";
  const slow = { ...defaultAgents()[0]!, id, runMs: 60_000 };
  await using service = await startFakeService({ agents: [slow] });
  const started = performance.now();
  const result = await runProgram(["--agent", id, "--timeout-minutes", "0.03"], {
    env: env(service.url),
  });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /TIMED OUT.*last status (queued|running)/);
  assert.ok(seconds < 1.8 + 1 + 1.5, `took ${seconds} s`);
});

Deno.test("the timeout cuts a request that hangs: exit 4 within a second of the deadline", async () => {
  await using service = await startFakeService();
  service.script({ method: "POST", answer: (request) => hang(request.signal) });
  const started = performance.now();
  const result = await runProgram(["--agent", AGENTS.passing, "--timeout-minutes", "0.02"], {
    env: env(service.url),
  });
  const seconds = (performance.now() - started) / 1000;
  assert.equal(result.code, 4, result.stderr);
  assert.ok(seconds < 1.2 + 1 + 1.5, `took ${seconds} s`);
  assert.equal(service.requests.length, 1);
});

Deno.test("a missing key exits 2 and sends nothing", async () => {
  await using service = await startFakeService();
  const result = await runProgram(["--agent", AGENTS.passing, "--base-url", service.url], {
    env: {},
  });
  assert.equal(result.code, 2);
  assert.match(result.stderr, /^service-ci: SERVICE_API_KEY is not set/);
  assert.equal(result.stderr.trim().split("\n").length, 1);
  assert.equal(service.requests.length, 0);
});

Deno.test("two agents: pass and fail exit 1, pass and pass exit 0", async () => {
  const time = new FakeTime();
  await using service = await startFakeService({ now: time.now });
  const mixed = await runInProcess(["--agent", AGENTS.passing, "--agent", AGENTS.failing], {
    time,
    env: env(service.url),
  });
  assert.equal(mixed.code, 1, mixed.stderr);
  assert.match(mixed.stderr, /exit 1: 2 gates, 1 passed, 1 failed/);
  const second = "5f607182-93a4-45bc-8e3f-405162738495";
  service.setAgent({ ...defaultAgents(100)[0]!, id: second });
  const both = await runInProcess([], {
    time,
    env: env(service.url, { SERVICE_AGENT_ID: `${AGENTS.passing}, ${second}` }),
  });
  assert.equal(both.code, 0, both.stderr);
  assert.equal(service.requestsOf("POST").length, 4);
});

Deno.test("a .env file in the working directory is read, and set variables win over it", async () => {
  await using service = await startFakeService();
  const cwd = await Deno.makeTempDir();
  await Deno.writeTextFile(
    `${cwd}/.env`,
    `SERVICE_API_KEY=${KEYS.ci}\nSERVICE_BASE_URL=http://127.0.0.1:1\nSERVICE_AGENT_ID=${AGENTS.passing}\n`,
  );
  const result = await runProgram([], { cwd, env: { SERVICE_BASE_URL: service.url } });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(service.requestsOf("POST").length, 1);
});

Deno.test("--env-file names another file; a missing one is a usage error", async () => {
  await using service = await startFakeService();
  const dir = await Deno.makeTempDir();
  await Deno.writeTextFile(`${dir}/ci.env`, `SERVICE_API_KEY="${KEYS.ci}"\n`);
  const ok = await runProgram(
    ["--env-file", `${dir}/ci.env`, "--agent", AGENTS.passing, "--base-url", service.url],
  );
  assert.equal(ok.code, 0, ok.stderr);
  const missing = await runProgram(["--env-file", `${dir}/nope.env`, "--agent", AGENTS.passing]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /--env-file cannot be read/);
});

Deno.test("--help and --version print to stdout and exit 0", async () => {
  const help = await runProgram(["--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /Usage:\n {2}service-ci --agent <uuid>/);
  assert.match(help.stdout, /--timeout-minutes/);
  for (const name of OPTION_NAMES) {
    assert.ok(help.stdout.includes(`--${name}`), `--help does not mention --${name}`);
  }
  // The source tree has no built-in service address; help and version say so.
  assert.match(help.stdout, /built-in default: none\n/);
  const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
  const version = await runProgram(["--version"]);
  assert.equal(version.code, 0);
  assert.equal(version.stdout, `service-ci ${config.version}\nbuilt-in service address: none\n`);
  assert.equal(version.stderr, "");
});

Deno.test("bad input exits 2 with one line naming the input", async (t) => {
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [
      ["--agent", "nope"],
      { SERVICE_API_KEY: "k", SERVICE_BASE_URL: "https://x.example" },
      /--agent must be an agent UUID.*"nope"/,
    ],
    [["--agent", AGENTS.passing], {
      SERVICE_API_KEY: "k",
      SERVICE_BASE_URL: "http://service.example",
    }, /SERVICE_BASE_URL must use https:\/\/ for a remote host/],
    [
      ["--agent", AGENTS.passing, "--base-url", "ftp://x"],
      { SERVICE_API_KEY: "k" },
      /--base-url must be an https:\/\/ URL/,
    ],
    [["--agent", AGENTS.passing, "--base-url", "https://x.example", "--timeout-minutes", "soon"], {
      SERVICE_API_KEY: "k",
    }, /--timeout-minutes must be a positive number of minutes.*"soon"/],
    [
      ["--agent", AGENTS.passing, "--frobnicate"],
      { SERVICE_API_KEY: "k" },
      /unknown option --frobnicate/,
    ],
    [[], { SERVICE_API_KEY: "k", SERVICE_BASE_URL: "https://x.example" }, /no agent given/],
    [
      ["--agent", AGENTS.passing, "--api-key", "sk_from_the_command_line"],
      { SERVICE_BASE_URL: "https://x.example" },
      /^service-ci: --api-key is not an option: .* read only from SERVICE_API_KEY; set it from your CI's secret store \(GitHub: secrets, GitLab: masked CI\/CD variable, Jenkins: withCredentials/,
    ],
  ];
  for (const [args, variables, message] of cases) {
    await t.step(args.join(" ") || "(no args)", async () => {
      const result = await runProgram(args, { env: variables });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
      assert.equal(result.stderr.trim().split("\n").length, 1, result.stderr);
      assert.ok(!result.stderr.includes("sk_from_the_command_line"), result.stderr);
    });
  }
});
