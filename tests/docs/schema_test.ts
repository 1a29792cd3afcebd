/**
 * docs/report.schema.json against what the real program prints: every kind of run, spawned from
 * the entry point against the fake service, read by a real JSON Schema validator (Ajv, 2020-12
 * dialect, strict mode, formats checked); and the schema itself keeps docs/compatibility.md's
 * rule that a 1.0 validator accepts every 1.x document.
 */

import assert from "node:assert/strict";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  type FakeService,
  KEYS,
  startFakeService,
} from "../support/fake_service.ts";
import { readGithubOutput } from "../support/github_output.ts";
import { reportSchema, strictAjv } from "../support/report_schema.ts";
import { type ProgramResult, runProgram, startProgram } from "../support/program.ts";

const schema = reportSchema();

const ajv = strictAjv();
const validate = ajv.compile(schema);
const validateAgent = ajv.getSchema(`${schema.$id}#/$defs/agent`)!;

function assertValid(document: unknown, what: string): void {
  assert.ok(validate(document), `${what}: ${JSON.stringify(validate.errors, null, 2)}`);
}

// deno-lint-ignore no-explicit-any
type Json = any;

// Adds a field no 1.0 reader knows to every object of the document, the way a 1.x release may.
// A string value, so that it also reads as a new header in a dry run's `headers`.
function _withAddedFields(value: Json): Json {
  if (Array.isArray(value)) return value.map(_withAddedFields);
  if (typeof value !== "object" || value === null) return value;
  const copy: Record<string, Json> = { added_in_v1_x: "a field from a later 1.x" };
  for (const [key, field] of Object.entries(value)) copy[key] = _withAddedFields(field);
  return copy;
}

const SLOW = {
  timeout: "4e5f6071-8293-44ab-9d2e-3f4051627384",
  sigint: "5f607182-93a4-45bc-8e3f-405162738495",
  sigterm: "60718293-a4b5-46cd-9f40-5162738495a6",
} as const;
const HOSTILE = "8c7b6a5d-4e3f-4b2a-8d9c-0e1f2a3b4c5d";
// What the service may say; the runner shows it as data. `#` is in it on purpose: the document
// may write it as \u0023, and the parsed value is what the schema sees.
const HOSTILE_STATUS = "::error::x ##[group]#1 ##vso[task.complete] \u001b[31m\u0000";

function _agents(): FakeAgent[] {
  const base = defaultAgents(100);
  const passing = base.find((agent) => agent.id === AGENTS.passing)!;
  const slow = Object.values(SLOW).map((id) => ({ ...passing, id, runMs: 60_000 }));
  const hostile: FakeAgent = {
    ...passing,
    id: HOSTILE,
    finished: () => ({ status: HOSTILE_STATUS, results: { gate: { passed: true } } }),
  };
  return [...base, ...slow, hostile];
}

function _env(service: FakeService, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: service.url, ...extra };
}

async function _pullRequestBuild(): Promise<Record<string, string>> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-schema-" });
  const event = `${dir}/event.json`;
  await Deno.writeTextFile(
    event,
    JSON.stringify({
      pull_request: { number: 42, head: { sha: "4f1c".padEnd(40, "a"), ref: "feature/login" } },
    }),
  );
  return {
    GITHUB_ACTIONS: "true",
    GITHUB_EVENT_PATH: event,
    GITHUB_OUTPUT: `${dir}/output`,
    GITHUB_STEP_SUMMARY: `${dir}/summary.md`,
    GITHUB_SHA: "f".repeat(40),
    GITHUB_REF: "refs/pull/42/merge",
    GITHUB_HEAD_REF: "feature/login",
    GITHUB_REPOSITORY: "acme/widgets",
    GITHUB_ACTOR: "octocat",
    GITHUB_SERVER_URL: "https://github.com",
    GITHUB_RUN_ID: "99",
  };
}

// Starts the program on a slow agent and signals it once its run is being polled.
async function _interrupted(
  service: FakeService,
  agent: string,
  signal: "SIGINT" | "SIGTERM",
): Promise<ProgramResult> {
  const program = await startProgram(["--agent", agent, "--json"], { env: _env(service) });
  let gaveUp = false;
  const polled = (async () => {
    await program.waitForStderr(/triggered run run_\d+/);
    while (!gaveUp && !service.requests.some((r) => r.method === "GET" && r.path.includes(agent))) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`agent ${agent} was not polled within 20 s`)),
      20_000,
    );
  });
  try {
    await Promise.race([polled, late]);
  } catch (error) {
    gaveUp = true;
    program.process.kill("SIGKILL");
    await program.finished();
    throw error;
  } finally {
    clearTimeout(timer);
  }
  program.process.kill(signal);
  return await program.finished();
}

/** One kind of run, and what its document must say besides being valid. */
interface Scenario {
  readonly name: string;
  readonly run: (service: FakeService) => Promise<ProgramResult>;
  readonly code: number;
  /** The agents' outcomes in order; absent for a dry run. */
  readonly outcomes?: readonly string[];
  /** The number of requests a dry run shows. */
  readonly requests?: number;
  readonly check?: (document: Json, result: ProgramResult) => Promise<void> | void;
}

// In GitHub Actions each item of the `agents` output has the shape of an agent in the document.
function _githubScenario(): Scenario {
  let outputPath = "";
  return {
    name: "a pull-request build in GitHub Actions, whose agents output has the same items",
    run: async (service) => {
      const github = await _pullRequestBuild();
      outputPath = github.GITHUB_OUTPUT!;
      return runProgram(["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--json"], {
        env: _env(service, github),
      });
    },
    code: 1,
    outcomes: ["passed", "failed"],
    check: async (document) => {
      assert.equal(document.ci_metadata.pull_request_number, 42);
      assert.equal(document.ci_metadata.provider, "github_actions");
      assert.equal(typeof document.ci_metadata.build_url, "string");
      const outputs = readGithubOutput(await Deno.readTextFile(outputPath));
      const agents = JSON.parse(outputs.get("agents")!);
      assert.equal(agents.length, 2);
      for (const agent of agents) {
        assert.ok(validateAgent(agent), JSON.stringify(validateAgent.errors, null, 2));
      }
    },
  };
}

const json = (args: string[]) => (service: FakeService) =>
  runProgram([...args, "--json"], { env: _env(service) });

const SCENARIOS: readonly Scenario[] = [
  {
    name: "a passing gate",
    run: json(["--agent", AGENTS.passing]),
    code: 0,
    outcomes: ["passed"],
  },
  {
    name: "a failing gate",
    run: json(["--agent", AGENTS.failing]),
    code: 1,
    outcomes: ["failed"],
  },
  {
    name: "a gate that cannot be checked (inactive agent)",
    run: json(["--agent", AGENTS.inactive]),
    code: 3,
    outcomes: ["unchecked"],
    check: (document) => {
      assert.equal(document.agents[0].run_id, null);
      assert.equal(typeof document.agents[0].error, "string");
    },
  },
  {
    name: "a run that outlives --timeout-minutes",
    run: json(["--agent", SLOW.timeout, "--timeout-minutes", "0.005"]),
    code: 4,
    outcomes: ["timed_out"],
  },
  {
    name: "a run interrupted by SIGINT",
    run: (service) => _interrupted(service, SLOW.sigint, "SIGINT"),
    code: 130,
    outcomes: ["interrupted"],
    check: (document) => assert.match(document.agents[0].run_id, /^run_\d+$/),
  },
  {
    name: "a run interrupted by SIGTERM",
    run: (service) => _interrupted(service, SLOW.sigterm, "SIGTERM"),
    code: 143,
    outcomes: ["interrupted"],
  },
  {
    name: "several agents: passing, failing, inactive and without a gate",
    run: json([
      "--agent",
      AGENTS.passing,
      "--agent",
      AGENTS.failing,
      "--agent",
      AGENTS.inactive,
      "--agent",
      AGENTS.noGate,
    ]),
    code: 3,
    outcomes: ["passed", "failed", "unchecked", "unchecked"],
  },
  {
    name: "--warn-only on a failing gate",
    run: json(["--agent", AGENTS.failing, "--warn-only"]),
    code: 0,
    outcomes: ["failed"],
    check: (document) => assert.equal(document.warn_only, true),
  },
  {
    name: "--no-wait",
    run: json(["--agent", AGENTS.failing, "--no-wait"]),
    code: 0,
    outcomes: ["triggered"],
  },
  {
    name: "--run-id attached to a run started with --no-wait",
    run: async (service) => {
      const started = await runProgram(["--agent", AGENTS.failing, "--no-wait"], {
        env: _env(service),
      });
      const runId = /triggered run (run_\d+)/.exec(started.stderr)?.[1];
      assert.ok(runId, started.stderr);
      return await runProgram(["--agent", AGENTS.failing, "--run-id", runId, "--json"], {
        env: _env(service),
      });
    },
    code: 1,
    outcomes: ["failed"],
  },
  {
    name: "a service that answers with log commands and escapes in its status",
    run: json(["--agent", HOSTILE]),
    code: 0,
    outcomes: ["passed"],
    check: (document) => assert.match(document.agents[0].status, /#/),
  },
  _githubScenario(),
  {
    name: "--dry-run with two agents on a pull-request build",
    run: async (service) =>
      runProgram(["--agent", AGENTS.passing, "--agent", AGENTS.failing, "--dry-run", "--json"], {
        env: _env(service, await _pullRequestBuild()),
      }),
    code: 0,
    requests: 2,
    check: (document) => {
      assert.equal(document.requests[0].headers["x-api-key"], "***");
      assert.equal(document.requests[0].body.ci_metadata.pull_request_number, 42);
    },
  },
  {
    name: "--dry-run with a base URL whose path keeps characters RFC 3986 does not allow",
    run: (service) =>
      runProgram(["--agent", AGENTS.passing, "--dry-run", "--json"], {
        env: _env(service, { SERVICE_BASE_URL: "https://service.example/a|b^c/" }),
      }),
    code: 0,
    requests: 1,
    check: (document) => assert.match(document.requests[0].url, /\|/),
  },
];

Deno.test("every kind of run prints a --json document that docs/report.schema.json accepts", async (t) => {
  await using service = await startFakeService({ agents: _agents() });
  // Spawned all at once: each waits mostly on the fake service, not on the CPU.
  const results = await Promise.allSettled(SCENARIOS.map((scenario) => scenario.run(service)));
  for (const [index, scenario] of SCENARIOS.entries()) {
    await t.step(scenario.name, async () => {
      const settled = results[index]!;
      if (settled.status === "rejected") throw settled.reason;
      const result = settled.value;
      assert.equal(result.code, scenario.code, result.stderr);
      const document = JSON.parse(result.stdout);
      assertValid(document, scenario.name);
      assertValid(_withAddedFields(document), `${scenario.name}, with a field added everywhere`);
      if (scenario.outcomes !== undefined) {
        assert.equal(document.exit_code, result.code);
        assert.deepEqual(document.agents.map((agent: Json) => agent.outcome), scenario.outcomes);
        assert.equal(validate({ ...document, exit_code: String(document.exit_code) }), false);
      } else {
        assert.equal(document.dry_run, true);
        assert.equal(document.requests.length, scenario.requests);
      }
      await scenario.check?.(document, result);
    });
  }
});

Deno.test("docs/report.schema.json compiles in Ajv's strict mode, which refuses unknown keywords and formats", () => {
  const strict = strictAjv();
  assert.doesNotThrow(() => strict.compile(schema));
  // The same settings must refuse what strict mode exists to catch, or the line above proves nothing.
  assert.throws(() => strictAjv().compile({ type: "object", propertys: {} }), /unknown keyword/);
  assert.throws(
    () => strictAjv().compile({ type: "string", format: "datetime" }),
    /unknown format/,
  );
});

Deno.test("no object in docs/report.schema.json refuses fields it does not know", () => {
  // docs/compatibility.md: fields may be added within v1, so a closed object would make a 1.0
  // validator refuse a 1.x document.
  const closed: string[] = [];
  const walk = (node: Json, path: string): void => {
    if (typeof node !== "object" || node === null) return;
    for (const keyword of ["additionalProperties", "unevaluatedProperties"]) {
      if (node[keyword] === false) closed.push(`${path}/${keyword}`);
    }
    for (const [key, child] of Object.entries(node)) walk(child, `${path}/${key}`);
  };
  walk(schema, "#");
  assert.deepEqual(closed, []);
});

const REPORT = {
  schema_version: 1,
  version: "1.0.0",
  exit_code: 0,
  started_at: "2026-11-23T09:41:20.947Z",
  duration_ms: 2187,
  warn_only: false,
  ci_metadata: {
    commit_sha: null,
    branch: null,
    pull_request_number: null,
    repository: null,
    actor: null,
    provider: "local",
    build_url: null,
  },
  agents: [{
    agent_id: AGENTS.passing,
    run_id: "run_0001",
    status: "completed",
    passed: true,
    outcome: "passed",
    exit_code: 0,
    duration_ms: 2186,
    url: null,
    error: null,
    gate: { rule: "toxicity < 0.01" },
  }],
};

const DRY_RUN = {
  dry_run: true,
  base_url: "https://service.example/",
  base_url_source: "--base-url",
  api_key_source: "SERVICE_API_KEY",
  env_file: null,
  requests: [{
    method: "POST",
    url: `https://service.example/api/v1/agents/${AGENTS.passing}/runs`,
    headers: {
      "x-api-key": "***",
      accept: "application/json",
      "user-agent": "service-ci/1.0.0 (linux; x86_64)",
      "content-type": "application/json",
      "idempotency-key": "<a new UUID v4 for each trigger>",
    },
    body: { ci_metadata: REPORT.ci_metadata },
  }],
};

Deno.test("docs/report.schema.json refuses wrong types, bad formats, an unmasked key, a trigger without its body, and a document of neither shape", () => {
  assertValid(REPORT, "the report example");
  assertValid(DRY_RUN, "the dry-run example");
  // Contract §1: only a trigger carries a body, Content-Type and an Idempotency-Key.
  const { "content-type": _type, "idempotency-key": _key, ...readHeaders } = DRY_RUN.requests[0]!
    .headers;
  assertValid(
    {
      ...DRY_RUN,
      requests: [{ method: "GET", url: `${DRY_RUN.requests[0]!.url}/run_1`, headers: readHeaders }],
    },
    "a dry run showing a read",
  );
  const cases: [string, Json][] = [
    ["exit_code as a string", { ...REPORT, exit_code: "0" }],
    ["exit_code as a fraction", { ...REPORT, exit_code: 0.5 }],
    ["started_at that is not a date-time", { ...REPORT, started_at: "2026-11-23 09:41" }],
    ["agent_id that is not a UUID", {
      ...REPORT,
      agents: [{ ...REPORT.agents[0], agent_id: "agent-1" }],
    }],
    ["a gate field that is an object", {
      ...REPORT,
      agents: [{ ...REPORT.agents[0], gate: { rule: { text: "x" } } }],
    }],
    ["a gate field longer than 200 characters", {
      ...REPORT,
      agents: [{ ...REPORT.agents[0], gate: { rule: "x".repeat(201) } }],
    }],
    ["an agent without its gate object", {
      ...REPORT,
      agents: [{ ...REPORT.agents[0], gate: undefined }],
    }],
    ["dry_run false", { ...DRY_RUN, dry_run: false }],
    ["a dry run without where the address came from", { ...DRY_RUN, base_url_source: undefined }],
    ["a dry run with an unknown address source", { ...DRY_RUN, base_url_source: "guess" }],
    ["a dry run with the key itself as its source", { ...DRY_RUN, api_key_source: "sk_live_1" }],
    ["a request showing the key", {
      ...DRY_RUN,
      requests: [{
        ...DRY_RUN.requests[0],
        headers: { ...DRY_RUN.requests[0]!.headers, "x-api-key": KEYS.ci },
      }],
    }],
    ["a header that is not a string", {
      ...DRY_RUN,
      requests: [{ ...DRY_RUN.requests[0], headers: { ...DRY_RUN.requests[0]!.headers, dnt: 1 } }],
    }],
    ["a trigger without a body", {
      ...DRY_RUN,
      requests: [{ ...DRY_RUN.requests[0], body: undefined }],
    }],
    ["a trigger without an idempotency key", {
      ...DRY_RUN,
      requests: [{
        ...DRY_RUN.requests[0],
        headers: { ...DRY_RUN.requests[0]!.headers, "idempotency-key": undefined },
      }],
    }],
    ["neither a report nor a dry run", { dry_run: true }],
    ["both a report and a dry run", { ...REPORT, ...DRY_RUN }],
  ];
  for (const [why, document] of cases) {
    // JSON has no undefined: a field set to undefined above is a field left out.
    assert.equal(
      validate(JSON.parse(JSON.stringify(document))),
      false,
      `should not validate: ${why}`,
    );
  }
});
