/**
 * Tests scripts/direct-api.sh, the curl-only gate, against the fake service: once with jq on
 * PATH (where jq is installed) and once with a PATH holding only the tools the script says it
 * needs, so its own JSON reader in awk does the reading.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type CommandResult, runCommand } from "./support/command.ts";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  json,
  KEYS,
  problem,
  startFakeService,
} from "./support/fake_service.ts";
import { assertShellcheckPasses } from "./support/shellcheck.ts";
import { ENDED_WITHOUT_VERDICT, FINISHED, IN_PROGRESS } from "../src/verdict.ts";
import {
  DIRECT_API_TOOLS,
  fasterSleep,
  needsTools,
  onlyTools,
  onPath,
  toolTest,
  which,
} from "./support/tools.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/direct-api.sh", import.meta.url));
const SCRIPT_TEXT = Deno.readTextFileSync(SCRIPT);
const DENO_JSON = JSON.parse(
  Deno.readTextFileSync(new URL("../deno.json", import.meta.url)),
) as { version: string };

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const USER_AGENT = /^service-ci\/\d+\.\d+\.\d+\+direct-api \([a-z0-9_]+; [a-z0-9_]+\)$/;

const SH = which("sh");
// POSIX tools: these tests do not run on Windows. A developer's machine without one skips
// them, saying so; in CI (CI=true) they fail.
const NEEDS = needsTools({ tools: ["sh", ...DIRECT_API_TOOLS], notOn: ["windows"] });

/** How the script reads JSON in a run: with jq, or with its awk reader (no jq on PATH). */
interface Mode {
  readonly reader: "jq" | "awk";
  readonly path: string;
}

async function _modes(): Promise<Mode[]> {
  if (NEEDS.ignore || NEEDS.missing.length > 0) return [];
  // A directory holding only the required tools: no jq, no python3, no git.
  const bin = await onlyTools(DIRECT_API_TOOLS);
  const modes: Mode[] = [{ reader: "awk", path: bin }];
  if (onPath("jq")) modes.unshift({ reader: "jq", path: Deno.env.get("PATH")! });
  return modes;
}

const MODES = await _modes();
// The script's waits, ten times shorter; its clock (date +%s), and so every deadline, stays real.
const FASTER = MODES.length > 0 ? await fasterSleep(10) : "";

/** Options of {@linkcode _run}. */
interface RunOptions {
  /** The test checks how long the script waits: its waits are not shortened. */
  readonly realWaits?: boolean;
}

async function _run(
  mode: Mode,
  args: readonly string[],
  env: Record<string, string>,
  options: RunOptions = {},
): Promise<CommandResult> {
  const cwd = await Deno.makeTempDir({ prefix: "direct-api-cwd-" });
  try {
    return await runCommand(SH!, [SCRIPT, ...args], {
      cwd,
      env: {
        PATH: options.realWaits ? mode.path : `${FASTER}:${mode.path}`,
        SERVICE_MAX_POLL_INTERVAL_SECONDS: "0.5",
        ...env,
      },
      clearEnv: true,
    });
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
}

function _env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

/** Runs `fn` once per mode, concurrently, as steps named after the reader. */
function _test(name: string, fn: (mode: Mode) => Promise<void>): void {
  Deno.test({
    name: `${name}${NEEDS.nameSuffix}`,
    ignore: NEEDS.ignore,
    fn: async (t) => {
      NEEDS.assertFound();
      await Promise.all(
        MODES.map((mode) =>
          t.step({
            name: `JSON read with ${mode.reader}`,
            fn: () => fn(mode),
            sanitizeOps: false,
            sanitizeResources: false,
            sanitizeExit: false,
          })
        ),
      );
    },
  });
}

function _agent(id: string, overrides: Partial<FakeAgent>): FakeAgent {
  const base = defaultAgents(100).find((agent) => agent.id === AGENTS.passing)!;
  return { ...base, id, ...overrides };
}

const OTHER = "3d4e5f60-7182-493a-8c1d-2e3f40516273";

_test(
  "a passing gate exits 0, with the contract's headers and body, and prints the run link",
  async (mode) => {
    await using service = await startFakeService({ agents: defaultAgents(100) });
    const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stderr, new RegExp(`JSON read with ${mode.reader}`));
    assert.match(
      result.stderr,
      /triggered run run_0001: http:\/\/127\.0\.0\.1:\d+\/dashboard\/agents\/.*\/runs\/run_0001/,
    );
    assert.match(result.stderr, /PASSED/);
    assert.equal(result.stdout, "");
    const [trigger, ...others] = service.requestsOf("POST");
    assert.ok(trigger);
    assert.equal(others.length, 0);
    assert.equal(trigger.path, `/api/v1/agents/${AGENTS.passing}/runs`);
    assert.equal(trigger.headers["x-api-key"], KEYS.ci);
    assert.equal(trigger.headers["accept"], "application/json");
    assert.equal(trigger.headers["content-type"], "application/json");
    assert.match(trigger.headers["idempotency-key"]!, UUID_V4);
    assert.match(trigger.headers["user-agent"]!, USER_AGENT);
    assert.deepEqual(JSON.parse(trigger.body), {
      ci_metadata: {
        commit_sha: null,
        branch: null,
        pull_request_number: null,
        repository: null,
        actor: null,
        provider: "local",
        build_url: null,
      },
    });
    const reads = service.requestsOf("GET");
    assert.ok(reads.length >= 1);
    for (const read of reads) {
      assert.equal(read.path, `/api/v1/agents/${AGENTS.passing}/runs/run_0001`);
      assert.equal(read.headers["x-api-key"], KEYS.ci);
      assert.equal(read.headers["accept"], "application/json");
    }
  },
);

_test("a failing gate exits 1", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const result = await _run(mode, ["--agent", AGENTS.failing], _env(service.url));
  assert.equal(result.code, 1, result.stderr);
  assert.match(
    result.stderr,
    /FAILED: the quality gate of agent 9a8b7c6d-.* failed \(run run_0001/,
  );
});

// Documents a finished run may show, and the exit code each must give.
const DOCUMENTS: Array<[string, Record<string, unknown>, number]> = [
  ['"passed": "true"', { status: "completed", results: { gate: { passed: "true" } } }, 3],
  ['"passed": 1', { status: "done", results: { gate: { passed: 1 } } }, 3],
  ['"passed": null', { status: "completed", results: { gate: { passed: null } } }, 3],
  ["a finished run without results", { status: "completed" }, 3],
  ['"passed": [true]', { status: "completed", results: { gate: { passed: [true] } } }, 3],
  ["status error with passed true", { status: "error", results: { gate: { passed: true } } }, 3],
  ["status Cancelled", { status: "Cancelled" }, 3],
  ["status Timed-Out", { status: "Timed-Out", results: { gate: { passed: true } } }, 3],
  ["no status and passed true", { results: { gate: { passed: true } } }, 0],
  [
    "an unknown status and passed false",
    { status: "judged", results: { gate: { passed: false } } },
    1,
  ],
  [
    "status SUCCEEDED and passed true",
    { status: "SUCCEEDED", results: { gate: { passed: true } } },
    0,
  ],
];

for (const [what, document, expected] of DOCUMENTS) {
  _test(`a finished run with ${what} exits ${expected}`, async (mode) => {
    await using service = await startFakeService({
      agents: [_agent(OTHER, { finished: () => document })],
    });
    const result = await _run(mode, ["--agent", OTHER], _env(service.url));
    assert.equal(result.code, expected, result.stderr);
    if (expected === 3) assert.match(result.stderr, /NOT CHECKED/);
  });
}

// Raw answers to every read: JSON that only a real parser reads right.
const RAW_DOCUMENTS: Array<[string, string, number]> = [
  [
    "a duplicate key (the last one wins, as in jq)",
    '{"status":"completed","results":{"gate":{"passed":true}},"results":{"gate":{"passed":false}}}',
    1,
  ],
  [
    "a duplicate key replacing an object by a number",
    '{"status":"completed","results":{"gate":{"passed":true}},"results":7}',
    3,
  ],
  [
    "an escaped key",
    '{"status":"completed","results":{"gate":{"pass\\u0065d":true}}}',
    0,
  ],
  [
    "a verdict inside a string",
    '{"status":"completed","note":"{\\"results\\":{\\"gate\\":{\\"passed\\":true}}}","results":{"gate":{"passed":"true"}}}',
    3,
  ],
  [
    "a passed key elsewhere",
    '{"status":"completed","results":{"gate":{"x":{"passed":true},"passed":false},"passed":true}}',
    1,
  ],
  [
    "whitespace, an array and escapes around the verdict",
    ' {\n "url" : "http://x/\\"y\\"" ,\t"list":[{"passed":true},[],{}],\r\n "status":"comp\\u006ceted",' +
    ' "results" : { "gate" : { "passed" :true } } }\n',
    0,
  ],
];

for (const [what, body, expected] of RAW_DOCUMENTS) {
  _test(`a run document with ${what} exits ${expected}`, async (mode) => {
    await using service = await startFakeService({ agents: defaultAgents(100) });
    service.script({
      method: "GET",
      times: 100,
      answer: () => new Response(body, { headers: { "content-type": "application/json" } }),
    });
    const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
    assert.equal(result.code, expected, result.stderr);
  });
}

_test("a truncated or HTML answer is a transient fault, never a verdict", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({
    method: "GET",
    answer: () => new Response('{"status":"completed","results":{"gate":{"passed":false}}'),
  });
  service.script({
    method: "GET",
    answer: () =>
      new Response("<html>passed: false</html>", { headers: { "content-type": "text/html" } }),
  });
  const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /transient fault \(HTTP 200 that is not a JSON object\)/);
});

_test("a 503 on the trigger is retried with the same Idempotency-Key: one run", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({ method: "POST", answer: () => problem(503, "unavailable", "try again") });
  const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
  assert.equal(result.code, 0, result.stderr);
  const triggers = service.requestsOf("POST");
  assert.equal(triggers.length, 2);
  assert.equal(triggers[0]!.headers["idempotency-key"], triggers[1]!.headers["idempotency-key"]);
  assert.equal(triggers[0]!.body, triggers[1]!.body);
  assert.equal(service.runs.size, 1);
  assert.match(result.stderr, /transient fault \(HTTP 503: try again\)/);
});

_test("a 502 after the service created the run still leaves one run", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({
    method: "POST",
    answer: async (_request, next) => {
      await next();
      return new Response("<html>bad gateway</html>", { status: 502 });
    },
  });
  const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
  assert.equal(result.code, 0, result.stderr);
  assert.equal(service.requestsOf("POST").length, 2);
  assert.equal(service.runs.size, 1);
  assert.match(result.stderr, /HTTP 502: <html>bad gateway<\/html>/);
});

_test("a refused trigger exits 3 after exactly one request, with a hint", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const cases: Array<[string, Record<string, string>, RegExp]> = [
    [AGENTS.inactive, {}, /HTTP 409: .*inactive.*fix: /],
    [AGENTS.noGate, {}, /HTTP 422: .*no quality gate configured.*fix: /],
    [
      AGENTS.passing,
      { SERVICE_API_KEY: KEYS.noCi },
      // The service's message names the fix (Settings → API Keys): said once, with no hint.
      /HTTP 403: [^\n]*under Settings → API Keys\n/,
    ],
    [
      AGENTS.passing,
      { SERVICE_API_KEY: "sk_unknown" },
      /HTTP 401: .*fix: check that SERVICE_API_KEY/,
    ],
    ["00000000-0000-4000-8000-000000000000", {}, /HTTP 404: .*fix: check the agent UUID/],
  ];
  for (const [agent, extra, message] of cases) {
    const before = service.requests.length;
    const result = await _run(mode, ["--agent", agent], _env(service.url, extra));
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, message);
    assert.equal(service.requests.length - before, 1);
  }
});

_test(
  "nothing listening at the address: said plainly once, with the address and what to check",
  async (mode) => {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    const port = (listener.addr as Deno.NetAddr).port;
    listener.close();
    const url = `http://127.0.0.1:${port}`;
    // The 30 s give-up is service-ci's (tests/run_test.ts); here a short timeout ends the wait.
    // Shorter waits would reach the ten attempts before the deadline.
    const result = await _run(mode, ["--agent", AGENTS.passing, "--timeout", "0.04"], _env(url), {
      realWaits: true,
    });
    assert.equal(result.code, 4, result.stderr);
    assert.equal(
      result.stderr.match(
        /connection refused by 127\.0\.0\.1:\d+: check the address and its port, that the service is up, and any proxy in http_proxy\/ALL_PROXY; trying for up to 30 s\n/g,
      )?.length,
      1,
      result.stderr,
    );
    assert.doesNotMatch(result.stderr, /curl: \(7\)/);
  },
);

_test(
  "a host name that does not resolve: said plainly once, with the name and what to check",
  async (mode) => {
    // .invalid never resolves (RFC 6761); https, so the message names the HTTPS proxy variable.
    const result = await _run(
      mode,
      ["--agent", AGENTS.passing, "--timeout", "0.04"],
      _env("https://service.invalid"),
    );
    assert.ok(result.code === 3 || result.code === 4, result.stderr);
    assert.equal(
      result.stderr.match(
        /could not resolve host service\.invalid: check the address, this machine's DNS, and any proxy in HTTPS_PROXY\/ALL_PROXY; trying for up to 30 s\n/g,
      )?.length,
      1,
      result.stderr,
    );
    assert.doesNotMatch(result.stderr, /curl: \(6\)/);
  },
);

_test(
  "an address on a port fetch never connects to is used, where service-ci refuses it (exit 2)",
  async (mode) => {
    // Whatever is (or is not) at 127.0.0.1:6000, the address is not a usage error here.
    const result = await _run(
      mode,
      ["--agent", AGENTS.passing, "--timeout", "0.02"],
      _env("http://127.0.0.1:6000"),
    );
    assert.notEqual(result.code, 2, result.stderr);
    assert.doesNotMatch(result.stderr, /must not use port/);
  },
);

_test("a run that outlasts --timeout exits 4", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(60_000) });
  const started = Date.now();
  const result = await _run(
    mode,
    ["--agent", AGENTS.passing, "--timeout", "0.01"],
    _env(service.url),
  );
  assert.equal(result.code, 4, result.stderr);
  assert.match(result.stderr, /TIMED OUT: .*run run_0001 still (queued|running)/);
  assert.ok(Date.now() - started < 6_000, `took ${Date.now() - started} ms`);
});

_test("SERVICE_TIMEOUT_MINUTES bounds the wait too", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(60_000) });
  const result = await _run(
    mode,
    ["--agent", AGENTS.passing],
    _env(service.url, { SERVICE_TIMEOUT_MINUTES: "0.01" }),
  );
  assert.equal(result.code, 4, result.stderr);
});

_test("the key appears in no output, even when the service echoes it", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({
    method: "POST",
    answer: () => problem(500, "echo", `bad key ${KEYS.ci}\u001b[31m!`),
  });
  service.script({
    method: "POST",
    answer: async (_request, next) => {
      const document = await (await next()).json();
      return json(201, { ...document, url: `${document.url}?key=${KEYS.ci}` });
    },
  });
  const result = await _run(mode, ["--agent", AGENTS.failing], _env(service.url));
  assert.equal(result.code, 1, result.stderr);
  assert.ok(!result.stderr.includes(KEYS.ci), result.stderr);
  assert.ok(!result.stdout.includes(KEYS.ci));
  assert.match(result.stderr, /HTTP 500: bad key \*\*\*!/);
  assert.match(result.stderr, /triggered run run_0001: http:.*\/runs\/run_0001\?key=\*\*\*/);
  // deno-lint-ignore no-control-regex
  assert.doesNotMatch(result.stderr, /[\x00-\x08\x0b-\x1f\x7f]/);
});

_test("the run id is sent as one percent-encoded path segment", async (mode) => {
  const runId = "weird/../id ü?#";
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({
    method: "POST",
    answer: () => json(201, { run_id: runId, status: "queued" }),
  });
  service.script({
    method: "GET",
    times: 10,
    answer: () => json(200, { status: "completed", results: { gate: { passed: true } } }),
  });
  const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /triggered run weird\/\.\.\/id ü\?#/);
  const [read] = service.requestsOf("GET");
  assert.equal(
    read?.path,
    `/api/v1/agents/${AGENTS.passing}/runs/weird%2F..%2Fid%20%C3%BC%3F%23`,
  );
});

_test("a trigger answer without a usable run_id exits 3 without a retry", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  for (const runId of ["..", "", 42]) {
    service.script({ method: "POST", answer: () => json(201, { run_id: runId }) });
  }
  for (let i = 0; i < 3; i++) {
    const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
    assert.equal(result.code, 3, result.stderr);
    assert.match(result.stderr, /without a usable run_id/);
  }
  assert.equal(service.requestsOf("POST").length, 3);
  assert.equal(service.requestsOf("GET").length, 0);
});

_test(
  "a same-origin 307 is followed with the same key; another origin is refused",
  async (mode) => {
    await using service = await startFakeService({ agents: defaultAgents(100) });
    const path = `/api/v1/agents/${AGENTS.passing}/runs`;
    service.script({
      method: "POST",
      answer: () => new Response(null, { status: 307, headers: { location: path } }),
    });
    const followed = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
    assert.equal(followed.code, 0, followed.stderr);
    const triggers = service.requestsOf("POST");
    assert.equal(triggers.length, 2);
    assert.equal(triggers[0]!.headers["idempotency-key"], triggers[1]!.headers["idempotency-key"]);

    // localhost is the same server, but not the same origin: the key must not go there.
    const elsewhere = service.url.replace("127.0.0.1", "localhost") + path;
    service.script({
      method: "POST",
      answer: () => new Response(null, { status: 307, headers: { location: elsewhere } }),
    });
    const before = service.requests.length;
    const refused = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
    assert.equal(refused.code, 3, refused.stderr);
    assert.match(refused.stderr, /redirect to another origin .*refused/);
    assert.equal(service.requests.length - before, 1);
  },
);

_test("a 404 right after the trigger is retried; Retry-After is honoured", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  service.script({
    method: "GET",
    answer: () => problem(404, "run_not_found", "not yet"),
  });
  service.script({
    method: "GET",
    answer: () =>
      json(429, { error: { code: "slow_down", message: "too many" } }, { "retry-after": "1" }),
  });
  const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url), {
    realWaits: true,
  });
  assert.equal(result.code, 0, result.stderr);
  assert.match(result.stderr, /HTTP 429: too many/);
  const [notFound, tooMany, next] = service.requestsOf("GET");
  assert.ok(notFound && tooMany && next);
  assert.ok(next.at - tooMany.at >= 900, `${next.at - tooMany.at} ms after the 429`);
});

_test("CI metadata is read from GitHub Actions' event and Jenkins' variables", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const event = await Deno.makeTempFile({ suffix: ".json" });
  try {
    await Deno.writeTextFile(
      event,
      JSON.stringify({
        pull_request: { number: 42, head: { sha: "abc123", ref: 'feature/"login"' } },
      }),
    );
    const github = await _run(
      mode,
      ["--agent", AGENTS.passing],
      _env(service.url, {
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_PATH: event,
        GITHUB_SHA: "merge999",
        GITHUB_REF: "refs/pull/42/merge",
        GITHUB_REPOSITORY: "acme/widgets",
        GITHUB_ACTOR: "octocat",
        GITHUB_SERVER_URL: "https://github.com",
        GITHUB_RUN_ID: "7",
      }),
    );
    assert.equal(github.code, 0, github.stderr);
    const jenkins = await _run(
      mode,
      ["--agent", AGENTS.passing, "--branch", "override", "--pull-request", "9"],
      _env(service.url, {
        JENKINS_URL: "https://jenkins.example/",
        GIT_COMMIT: "def456",
        GIT_BRANCH: "origin/main",
        GIT_URL: "https://user:token@git.example.com/group/sub/widgets.git",
        BUILD_URL: "https://jenkins.example/job/x/1/",
      }),
    );
    assert.equal(jenkins.code, 0, jenkins.stderr);
    const [first, second] = service.requestsOf("POST").map((request) =>
      JSON.parse(request.body).ci_metadata
    );
    assert.deepEqual(first, {
      commit_sha: "abc123",
      branch: 'feature/"login"',
      pull_request_number: 42,
      repository: "acme/widgets",
      actor: "octocat",
      provider: "github_actions",
      build_url: "https://github.com/acme/widgets/actions/runs/7",
    });
    assert.deepEqual(second, {
      commit_sha: "def456",
      branch: "override",
      pull_request_number: 9,
      repository: "group/sub/widgets",
      actor: null,
      provider: "jenkins",
      build_url: "https://jenkins.example/job/x/1/",
    });
  } finally {
    await Deno.remove(event);
  }
});

_test("bad input exits 2 and sends nothing", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [["--agent", AGENTS.passing], { SERVICE_API_KEY: "" }, /SERVICE_API_KEY is not set/],
    [["--agent", AGENTS.passing], { SERVICE_API_KEY: `${KEYS.ci}\n` }, /whitespace or control/],
    [["--agent", "not-a-uuid"], {}, /--agent must be an agent UUID/],
    [[], {}, /no agent given/],
    [["--agent", `${AGENTS.passing},${AGENTS.failing}`], {}, /one agent per call/],
    [["--agent", AGENTS.passing, "--base-url", "http://eval.example.com"], {}, /must use https/],
    [["--agent", AGENTS.passing, "--timeout", "soon"], {}, /--timeout-minutes must be a positive/],
    [["--agent", AGENTS.passing, "--pull-request", "0"], {}, /--pull-request must be/],
    [["--agent", AGENTS.passing, "--bogus"], {}, /unknown argument --bogus/],
  ];
  for (const [args, extra, message] of cases) {
    const result = await _run(mode, args, _env(service.url, extra));
    assert.equal(result.code, 2, `${args.join(" ")}: ${result.stderr}`);
    assert.match(result.stderr, message);
    assert.ok(!result.stderr.includes(KEYS.ci));
  }
  assert.equal(service.requests.length, 0);
  const help = await _run(mode, ["--help"], {});
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Runs one agent's quality gate/);
  assert.match(help.stdout, /Exit codes: 0 the gate passed/);
});

Deno.test("direct-api.sh declares the version of deno.json", () => {
  assert.match(
    SCRIPT_TEXT,
    new RegExp(`^VERSION=${DENO_JSON.version.replaceAll(".", "\\.")}$`, "m"),
  );
});

toolTest(
  "direct-api.sh passes shellcheck as POSIX sh",
  { tools: ["shellcheck"], notOn: ["windows"] },
  async () => {
    await assertShellcheckPasses([SCRIPT]);
  },
);

// The awk reader against JSON.parse on documents jq and JSON.parse agree on.
const READER_CORPUS: string[] = [
  '{"run_id":"r1","status":"queued"}',
  '{"run_id":"a\\"b\\\\c\\/d","status":null,"results":{"gate":{"passed":false}}}',
  '{"run_id":"\\u00fc\\ud83d\\ude00","url":"x","results":{"gate":null}}',
  '{"results":[{"gate":{"passed":true}}],"status":15}',
  '{"results":{"gate":{"passed":true}},"results":{"gate":{}}}',
  '{"a":{"b":{"c":{"d":[1,2,{"e":"}"}]}}},"status":"done","error":{"message":"m"}}',
  '{"detail":"x","message":"y","error":"z"}',
  "{}",
  '  {"status" : "ok" }  \n',
  '{"status":"ok"} {"status":"again"}',
  '["status"]',
  '"status"',
  '{"status":"ok",}',
  '{"status":"o\tk"}',
  '{"status":01}',
  '{"status":"ok"',
  '{"status":tru}',
  "",
  "<html></html>",
];

const READER_PATHS = ["run_id", "status", "url", "results.gate.passed", "error.message", "error"];

function _expected(text: string): string[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return ["doc\tother"];
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) {
    return ["doc\tother"];
  }
  const lines = ["doc\tobject"];
  for (const path of READER_PATHS) {
    let value: unknown = document;
    let found = true;
    for (const key of path.split(".")) {
      if (typeof value === "object" && value !== null && !Array.isArray(value) && key in value) {
        value = (value as Record<string, unknown>)[key];
      } else {
        found = false;
      }
    }
    const type = !found
      ? "missing"
      : value === null
      ? "null"
      : Array.isArray(value)
      ? "array"
      : typeof value;
    const shown = type === "string"
      ? `=${value}`
      : type === "boolean" || type === "number"
      ? `=${JSON.stringify(value)}`
      : "=";
    lines.push(`${path}\t${type}\t${shown}`);
    if (path === "run_id" && type === "string") {
      lines.push(`run_id.uri\tstring\t=${encodeURIComponent(value as string)}`);
    }
  }
  return lines;
}

Deno.test({
  name: "the awk JSON reader reads what JSON.parse reads, and refuses what it refuses",
  ignore: NEEDS.ignore || !onPath("awk"),
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "direct-api-awk-" });
    try {
      for (const name of ["lib", "read", "show"]) {
        const match = new RegExp(`cat >"\\$tmp/${name}\\.awk" <<'AWK'\\n([\\s\\S]*?)\\nAWK\\n`)
          .exec(SCRIPT_TEXT);
        assert.ok(match, `${name}.awk is in the script`);
        await Deno.writeTextFile(join(dir, `${name}.awk`), match[1]!);
      }
      for (const text of READER_CORPUS) {
        const read = await new Deno.Command("awk", {
          args: ["-f", join(dir, "lib.awk"), "-f", join(dir, "read.awk")],
          env: { LC_ALL: "C", JSON_PATHS: READER_PATHS.join(" ") },
          stdin: "piped",
          stdout: "piped",
        }).spawn();
        const writer = read.stdin.getWriter();
        await writer.write(new TextEncoder().encode(text));
        await writer.close();
        const raw = (await read.output()).stdout;
        const show = new Deno.Command("awk", {
          args: ["-f", join(dir, "lib.awk"), "-f", join(dir, "show.awk")],
          env: { LC_ALL: "C", SERVICE_API_KEY: KEYS.ci },
          stdin: "piped",
          stdout: "piped",
        }).spawn();
        const showWriter = show.stdin.getWriter();
        await showWriter.write(raw);
        await showWriter.close();
        const lines = new TextDecoder().decode((await show.output()).stdout).trimEnd().split("\n");
        // encodeURIComponent keeps !'()* that the script encodes; the corpus has none.
        assert.deepEqual(lines, _expected(text), JSON.stringify(text));
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("direct-api.sh's status lists are src/verdict.ts's", () => {
  const body = /\nstate_of\(\) \{\n([\s\S]*?)\n\}\n/.exec(SCRIPT_TEXT)?.[1];
  assert.ok(body, "state_of() is in the script");
  const lists = new Map<string, string[]>();
  // `    queued | pending | …) state=going ;;`, the state on the same line or the next.
  for (const [, statuses, state] of body.matchAll(/^ {4}([a-z_ |]+)\)\s*state=(\w+)/gm)) {
    lists.set(state!, statuses!.split("|").map((status) => status.trim()));
  }
  const sorted = (statuses: Iterable<string>) => [...statuses].sort();
  assert.deepEqual(sorted(lists.get("going") ?? []), sorted(IN_PROGRESS));
  assert.deepEqual(sorted(lists.get("ended") ?? []), sorted(ENDED_WITHOUT_VERDICT));
  assert.deepEqual(sorted(lists.get("finished") ?? []), sorted(FINISHED));
});

// ---- the deliberate differences the script's header lists, one test each ----------------------

_test(
  "difference: one agent per call, no --json, --junit, --run-id or --no-wait, no CI outputs",
  async (mode) => {
    await using service = await startFakeService({ agents: defaultAgents(100) });
    for (
      const args of [["--json"], ["--junit", "report.xml"], ["--run-id", "run_1"], ["--no-wait"]]
    ) {
      const result = await _run(mode, ["--agent", AGENTS.passing, ...args], _env(service.url));
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`unknown argument ${args[0]}`));
    }
    assert.equal(service.requests.length, 0);
    const output = await Deno.makeTempFile();
    try {
      const result = await _run(
        mode,
        ["--agent", AGENTS.passing],
        _env(service.url, { GITHUB_ACTIONS: "true", GITHUB_OUTPUT: output }),
      );
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, "");
      assert.equal(await Deno.readTextFile(output), "");
    } finally {
      await Deno.remove(output);
    }
  },
);

_test("difference: a .env file in the working directory is not read", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const cwd = await Deno.makeTempDir({ prefix: "direct-api-dotenv-" });
  try {
    await Deno.writeTextFile(join(cwd, ".env"), `SERVICE_API_KEY=${KEYS.ci}\n`);
    const result = await runCommand(SH!, [SCRIPT, "--agent", AGENTS.passing], {
      cwd,
      env: { PATH: mode.path, SERVICE_BASE_URL: service.url },
      clearEnv: true,
    });
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /SERVICE_API_KEY is not set/);
    assert.equal(service.requests.length, 0);
  } finally {
    await Deno.remove(cwd, { recursive: true });
  }
});

_test("difference: CI systems other than the five named send provider local", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  const result = await _run(
    mode,
    ["--agent", AGENTS.passing],
    _env(service.url, { TF_BUILD: "True", BUILD_SOURCEVERSION: "abc123", BUILDKITE: "true" }),
  );
  assert.equal(result.code, 0, result.stderr);
  const [trigger] = service.requestsOf("POST");
  const metadata = JSON.parse(trigger!.body).ci_metadata;
  assert.equal(metadata.provider, "local");
  assert.equal(metadata.commit_sha, null);
});

_test(
  "difference: a redirect with a percent-encoded dot segment is refused even under the runs path",
  async (mode) => {
    await using service = await startFakeService({ agents: defaultAgents(100) });
    const path = `/api/v1/agents/${AGENTS.passing}/runs`;
    // service-ci resolves these to `${path}/` and follows; curl leaves them as they are.
    for (const location of [`${path}/x/%2E%2e/`, `${path}/%2e/`]) {
      service.script({
        method: "POST",
        answer: () => new Response(null, { status: 307, headers: { location } }),
      });
      const before = service.requests.length;
      const result = await _run(mode, ["--agent", AGENTS.passing], _env(service.url));
      assert.equal(result.code, 3, result.stderr);
      assert.match(result.stderr, /with a dot segment in its path; refused/);
      assert.equal(service.requests.length - before, 1, location);
    }
  },
);

_test("difference: the timeout is rounded up to a whole second", async (mode) => {
  // 0.001 minutes is 60 ms, which service-ci keeps to; the script's clock (date +%s) has whole
  // seconds, so it waits at least until the next whole second after it started.
  await using service = await startFakeService({ agents: defaultAgents(60_000) });
  const started = Date.now();
  const result = await _run(
    mode,
    ["--agent", AGENTS.passing, "--timeout-minutes", "0.001"],
    _env(service.url),
  );
  const ended = Date.now();
  assert.equal(result.code, 4, result.stderr);
  const nextSecond = (Math.floor(started / 1000) + 1) * 1000;
  assert.ok(ended >= nextSecond, `ended ${nextSecond - ended} ms before the next whole second`);
});

_test("the script's own failures exit 3, never 1: 1 is only a failed gate", async (mode) => {
  await using service = await startFakeService({ agents: defaultAgents(100) });
  // No scratch directory: before the trap.
  const noTmp = await _run(mode, ["--agent", AGENTS.failing], {
    ..._env(service.url),
    TMPDIR: "/nonexistent/direct-api",
  });
  assert.equal(noTmp.code, 3, noTmp.stderr);
  assert.match(noTmp.stderr, /cannot make a scratch directory in \/nonexistent\/direct-api/);
  // A tool that fails under set -e after the trap is set (here: date, the script's clock).
  const stubs = await Deno.makeTempDir({ prefix: "direct-api-stubs-" });
  try {
    await Deno.writeTextFile(join(stubs, "date"), "#!/bin/sh\nexit 1\n");
    await Deno.chmod(join(stubs, "date"), 0o755);
    const broken = await _run(mode, ["--agent", AGENTS.failing], {
      ..._env(service.url),
      PATH: `${stubs}:${mode.path}`,
    });
    assert.equal(broken.code, 3, broken.stderr);
    assert.match(
      broken.stderr,
      /stopped by an unexpected error \(above\): the gate was not checked/,
    );
    assert.doesNotMatch(broken.stderr, /FAILED/);
  } finally {
    await Deno.remove(stubs, { recursive: true });
  }
});
