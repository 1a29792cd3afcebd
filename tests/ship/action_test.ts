/**
 * Tests the GitHub action: action.yml declares the documented inputs and outputs and passes
 * values only through `env:`, and its step (scripts/action.sh) really runs service-ci, from
 * source against the fake service and as a release binary from a fake release server.
 */

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  archiveName,
  readBuildConfig,
  sha256sumsLine,
  type Target,
  TARGETS,
  zipArchive,
} from "../../scripts/build.ts";
import { runCommand } from "../support/command.ts";
import { fakeGh } from "../support/fake_gh.ts";
import { FORGE_TARGET, startFakeGithub } from "../support/fake_forge.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { readGithubOutput } from "../support/github_output.ts";
import { HOST_TARGET, type ReleaseServer, serveRelease, sha256Hex } from "../support/release.ts";
import { assertShellcheckPasses } from "../support/shellcheck.ts";
import { type ToolOptions, toolTest, which } from "../support/tools.ts";
import { assertYamllintPasses, parseYaml } from "../support/yaml.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url)).replace(/[\\/]$/, "");
const SCRIPT = join(ROOT, "scripts", "action.sh");
const DENO_JSON = join(ROOT, "deno.json");
const OWN_VERSION = readBuildConfig(Deno.readTextFileSync(DENO_JSON)).version;

interface Input {
  readonly description?: string;
  readonly required?: boolean;
  readonly default?: string;
}

interface Step {
  readonly name?: string;
  readonly id?: string;
  readonly if?: string;
  readonly uses?: string;
  readonly with?: Record<string, unknown>;
  readonly shell?: string;
  readonly env?: Record<string, string>;
  readonly run?: string;
}

interface Action {
  readonly name?: string;
  readonly description?: string;
  readonly branding?: { readonly icon?: string; readonly color?: string };
  readonly inputs: Record<string, Input>;
  readonly outputs: Record<string, { readonly description?: string; readonly value?: string }>;
  readonly runs: { readonly using: string; readonly steps: readonly Step[] };
}

const ACTION_TEXT = Deno.readTextFileSync(join(ROOT, "action.yml"));
const ACTION = parseYaml<Action>(ACTION_TEXT, join(ROOT, "action.yml"));
const GATE_STEP = ACTION.runs.steps.find((step) => step.id === "gate");

function _gateStep(): Step & { readonly run: string; readonly env: Record<string, string> } {
  assert.ok(GATE_STEP?.run !== undefined && GATE_STEP.env !== undefined, "a run step id: gate");
  return GATE_STEP as Step & { readonly run: string; readonly env: Record<string, string> };
}

// The action's script is POSIX sh, so the tests that need programs do not run on Windows.
const NOT_WINDOWS = ["windows"] as const;
const SHELLCHECK: ToolOptions = { tools: ["shellcheck"], notOn: NOT_WINDOWS };
const YAMLLINT: ToolOptions = { tools: ["yamllint"], notOn: NOT_WINDOWS };
// What the step runs: bash for `run:`, sh for the script, and what install.sh runs.
const STEP_TOOLS: ToolOptions = { tools: ["bash", "sh", "sed", "tr"], notOn: NOT_WINDOWS };
const INSTALL_TOOLS: ToolOptions = {
  ...STEP_TOOLS,
  tools: [...STEP_TOOLS.tools, "tar", "awk", ["curl", "wget"], ["sha256sum", "shasum"]],
};

interface Scratch extends AsyncDisposable {
  readonly dir: string;
}

async function _scratch(): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), "service-ci-action-"));
  return { dir, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}

interface ActionRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** What was written to GITHUB_OUTPUT, read as the runner reads it. */
  readonly outputs: ReadonlyMap<string, string>;
  readonly summary: string;
  /** The job's working directory (the checkout the workflow runs in). */
  readonly workspace: string;
  /** The command lines the stand-in gh received. */
  readonly ghCalls: readonly string[];
  /** The GH_TOKEN the stand-in gh received on each call. */
  readonly ghTokens: readonly string[];
}

// The job's token as the runner would give it; the stand-in gh records what it received.
const JOB_TOKEN = "ghs_job-token-for-the-tests";

interface RunOptions {
  /** The stand-in gh's exit code; default 0. */
  readonly ghExit?: number;
  /** The job's umask (octal, as `umask` takes it); default this process's. */
  readonly umask?: string;
}

// Runs the gate step as the runner would: its `env:` with each `${{ inputs.x }}` replaced by
// the given input or the input's default (and `${{ github.token }}` by JOB_TOKEN), then its
// `run:` with bash, in the job's workspace. `env` holds the job's own environment; a stand-in
// gh comes first on PATH unless `env` sets PATH.
async function _runAction(
  dir: string,
  inputs: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>> = {},
  { ghExit = 0, umask }: RunOptions = {},
): Promise<ActionRun> {
  const step = _gateStep();
  for (const name of Object.keys(inputs)) assert.ok(name in ACTION.inputs, `input ${name}`);
  const stepEnv: Record<string, string> = {};
  for (const [name, expression] of Object.entries(step.env)) {
    if (expression === "${{ github.token }}") {
      stepEnv[name] = JOB_TOKEN;
      continue;
    }
    const input = /^\$\{\{ inputs\.([\w-]+) \}\}$/.exec(expression)?.[1];
    assert.ok(input !== undefined && input in ACTION.inputs, `${name}: ${expression}`);
    const value = inputs[input] ?? ACTION.inputs[input]?.default ?? "";
    stepEnv[name] = value === "${{ github.token }}" ? JOB_TOKEN : value;
  }
  const gh = await fakeGh(dir, { exitCode: ghExit });
  const workspace = join(dir, "workspace");
  const runnerTemp = join(dir, "runner-temp");
  await Deno.mkdir(workspace, { recursive: true });
  await Deno.mkdir(runnerTemp, { recursive: true });
  const outputFile = join(dir, "github-output");
  const summaryFile = join(dir, "github-step-summary");
  await Deno.writeTextFile(outputFile, "");
  await Deno.writeTextFile(summaryFile, "");
  const inherited: Record<string, string> = {};
  for (const name of ["HOME", "DENO_DIR", "XDG_CACHE_HOME"]) {
    const value = Deno.env.get(name);
    if (value !== undefined) inherited[name] = value;
  }
  const run = umask === undefined ? step.run : `umask ${umask}\n${step.run}`;
  const bash = ["--noprofile", "--norc", "-eo", "pipefail", "-c", run];
  const output = await runCommand("bash", bash, {
    cwd: workspace,
    clearEnv: true,
    env: {
      ...inherited,
      // The deno that runs these tests stands in for the one setup-deno installs.
      PATH: [gh.bin, dirname(Deno.execPath()), Deno.env.get("PATH") ?? ""].join(delimiter),
      NO_COLOR: "1",
      CI: "true",
      GITHUB_ACTIONS: "true",
      GITHUB_ACTION_PATH: ROOT,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      RUNNER_TEMP: runnerTemp,
      ...env,
      ...stepEnv,
    },
  });
  return {
    ...output,
    outputs: readGithubOutput(await Deno.readTextFile(outputFile)),
    summary: await Deno.readTextFile(summaryFile),
    workspace,
    ghCalls: await gh.calls(),
    ghTokens: await gh.tokens(),
  };
}

function _log(run: ActionRun): string {
  return `exit ${run.code}\n--- stdout\n${run.stdout}--- stderr\n${run.stderr}`;
}

// The key is shown to the runner once, in the command that masks it, and nowhere else.
function _assertKeyOnlyMasked(run: ActionRun, key: string): void {
  const lines = `${run.stdout}\n${run.stderr}`.split("\n").filter((line) => line.includes(key));
  assert.deepEqual(lines, [`::add-mask::${key}`], _log(run));
}

function _agentIds(run: ActionRun): string[] {
  const agents = JSON.parse(run.outputs.get("agents") ?? "null") as { agent_id: string }[];
  return agents.map((agent) => agent.agent_id);
}

// --- action.yml --------------------------------------------------------------------------

Deno.test("action.yml is a composite action with a name, a description and branding", () => {
  assert.equal(ACTION.runs.using, "composite");
  assert.ok(ACTION.name && ACTION.description);
  assert.ok(ACTION.branding?.icon && ACTION.branding.color);
});

Deno.test("action.yml takes the documented inputs; only agent and api-key are required", () => {
  assert.deepEqual(Object.keys(ACTION.inputs), [
    "agent",
    "api-key",
    "base-url",
    "timeout-minutes",
    "version",
    "junit",
    "warn-only",
    "verify-attestation",
    "pr-comment",
    "pr-comment-key",
    "commit-status",
    "github-token",
    "verbose",
    "ca-cert",
    "request-timeout-seconds",
    "no-wait",
    "run-id",
    "commit-sha",
    "branch",
    "pull-request",
    "repository",
    "actor",
  ]);
  const docs = Deno.readTextFileSync(new URL("../../docs/github-actions.md", import.meta.url));
  for (const [name, input] of Object.entries(ACTION.inputs)) {
    assert.ok(docs.includes(`| \`${name}\``), `docs/github-actions.md documents the input ${name}`);
    assert.ok(input.description, `input ${name} has a description`);
    const required = name === "agent" || name === "api-key";
    assert.equal(input.required, required, `input ${name} required: ${required}`);
    // A required input has no default, so a missing one is an error rather than a guess.
    assert.equal(input.default === undefined, required, `input ${name} default`);
  }
  assert.equal(ACTION.inputs["timeout-minutes"]?.default, "30");
  assert.equal(ACTION.inputs["warn-only"]?.default, "false");
  assert.equal(ACTION.inputs.version?.default, "");
  assert.equal(ACTION.inputs["base-url"]?.default, "");
  assert.equal(ACTION.inputs.junit?.default, "");
  assert.equal(ACTION.inputs["verify-attestation"]?.default, "auto");
  assert.equal(ACTION.inputs["pr-comment"]?.default, "auto");
});

Deno.test("docs/github-actions.md's inputs table is action.yml's inputs, with their required and defaults", () => {
  const docs = Deno.readTextFileSync(new URL("../../docs/github-actions.md", import.meta.url));
  const table = docs.split("\n### Inputs\n")[1]?.split("\n\n").map((block) => block.trim()).find((
    block,
  ) => block.startsWith("| input"));
  assert.ok(table !== undefined, "docs/github-actions.md has an inputs table under ### Inputs");
  const rows = table.split("\n").slice(2).map((line) => {
    const [name, required, fallback] = line.split(" | ").map((cell) =>
      cell.replace(/^\|\s*|\s*\|$/g, "").trim()
    );
    return { name: name!.replace(/^`|`$/g, ""), required, fallback };
  });
  assert.deepEqual(rows.map((row) => row.name).sort(), Object.keys(ACTION.inputs).sort());
  for (const row of rows) {
    const input = ACTION.inputs[row.name]!;
    assert.equal(row.required, input.required ? "yes" : "no", `${row.name}: required`);
    const expected = input.default === undefined
      ? ""
      : input.default === ""
      ? "empty"
      : `\`${input.default}\``;
    assert.equal(row.fallback, expected, `${row.name}: default`);
  }
});

Deno.test("action.yml maps every output to the same output of the gate step", () => {
  assert.deepEqual(Object.keys(ACTION.outputs), [
    "passed",
    "run-id",
    "status",
    "url",
    "exit-code",
    "agents",
  ]);
  for (const [name, output] of Object.entries(ACTION.outputs)) {
    assert.ok(output.description, `output ${name} has a description`);
    assert.equal(output.value, `\${{ steps.gate.outputs.${name} }}`);
  }
});

Deno.test("action.yml passes every input to the script through env, the key as SERVICE_API_KEY", () => {
  const step = _gateStep();
  assert.deepEqual(step.env, {
    SERVICE_API_KEY: "${{ inputs.api-key }}",
    SERVICE_CI_AGENT: "${{ inputs.agent }}",
    SERVICE_CI_BASE_URL: "${{ inputs.base-url }}",
    SERVICE_CI_TIMEOUT_MINUTES: "${{ inputs.timeout-minutes }}",
    SERVICE_CI_VERSION: "${{ inputs.version }}",
    SERVICE_CI_JUNIT: "${{ inputs.junit }}",
    SERVICE_CI_WARN_ONLY: "${{ inputs.warn-only }}",
    SERVICE_CI_VERIFY_ATTESTATION: "${{ inputs.verify-attestation }}",
    SERVICE_CI_PR_COMMENT: "${{ inputs.pr-comment }}",
    SERVICE_CI_PR_COMMENT_KEY: "${{ inputs.pr-comment-key }}",
    SERVICE_CI_COMMIT_STATUS: "${{ inputs.commit-status }}",
    SERVICE_CI_GITHUB_TOKEN: "${{ inputs.github-token }}",
    SERVICE_CI_VERBOSE: "${{ inputs.verbose }}",
    SERVICE_CI_CA_CERT: "${{ inputs.ca-cert }}",
    SERVICE_CI_REQUEST_TIMEOUT_SECONDS: "${{ inputs.request-timeout-seconds }}",
    SERVICE_CI_NO_WAIT: "${{ inputs.no-wait }}",
    SERVICE_CI_RUN_ID: "${{ inputs.run-id }}",
    SERVICE_CI_COMMIT_SHA: "${{ inputs.commit-sha }}",
    SERVICE_CI_BRANCH: "${{ inputs.branch }}",
    SERVICE_CI_PULL_REQUEST: "${{ inputs.pull-request }}",
    SERVICE_CI_REPOSITORY: "${{ inputs.repository }}",
    SERVICE_CI_ACTOR: "${{ inputs.actor }}",
  });
  assert.equal(ACTION.inputs["github-token"]?.default, "${{ github.token }}");
  assert.equal(step.shell, "bash");
  assert.equal(step.run, 'exec sh "$GITHUB_ACTION_PATH/scripts/action.sh"');
});

Deno.test("no run: script of action.yml expands an expression (script injection)", () => {
  const runs = ACTION.runs.steps.flatMap((step) => step.run ?? []);
  assert.ok(runs.length > 0);
  for (const run of runs) {
    assert.ok(!run.includes("${{ inputs."), run);
    assert.ok(!run.includes("${{ github.event"), run);
    assert.ok(!run.includes("${{"), `no expression at all: ${run}`);
  }
});

Deno.test("action.yml pins every third-party action to a full commit SHA with its version", () => {
  const uses = ACTION.runs.steps.flatMap((step) => step.uses ?? []);
  assert.ok(uses.length > 0);
  for (const action of uses) {
    assert.match(action, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/);
    assert.match(
      ACTION_TEXT,
      new RegExp(`uses: ${action.replaceAll(".", "\\.")} # v\\d`),
      `${action} carries a # vX.Y.Z comment`,
    );
  }
});

Deno.test("action.yml sets up the same Deno as ci.yml, and only for version: source", () => {
  const setups = ACTION.runs.steps.filter((step) => step.uses?.startsWith("denoland/setup-deno@"));
  assert.equal(setups.length, 1);
  const ciPath = join(ROOT, ".github", "workflows", "ci.yml");
  const ci = parseYaml<{ jobs: Record<string, { steps?: Step[] }> }>(
    Deno.readTextFileSync(ciPath),
    ciPath,
  );
  const ciSetup = Object.values(ci.jobs).flatMap((job) => job.steps ?? [])
    .find((step) => step.uses?.startsWith("denoland/setup-deno@"));
  assert.equal(setups[0]!.uses, ciSetup?.uses);
  assert.deepEqual(setups[0]!.with, { "deno-version": ciSetup?.with?.["deno-version"] });
  assert.equal(setups[0]!.if, "inputs.version == 'source'");
  assert.ok(ACTION.runs.steps.indexOf(setups[0]!) < ACTION.runs.steps.indexOf(_gateStep()));
});

toolTest("action.yml passes yamllint --strict", YAMLLINT, async () => {
  await assertYamllintPasses(["action.yml"]);
});

toolTest("scripts/action.sh passes shellcheck -s sh", SHELLCHECK, async () => {
  await assertShellcheckPasses([SCRIPT]);
});

// --- version: source, against the fake service -------------------------------------------

toolTest(
  "version: source runs the gate from the checkout: a passing agent exits 0 with passed=true",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });

    const run = await _runAction(scratch.dir, {
      agent: AGENTS.passing,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
      junit: "junit.xml",
    });

    assert.equal(run.code, 0, _log(run));
    assert.equal(run.outputs.get("passed"), "true");
    assert.equal(run.outputs.get("exit-code"), "0");
    assert.equal(run.outputs.get("run-id"), [...service.runs.keys()][0]);
    assert.deepEqual(_agentIds(run), [AGENTS.passing]);
    assert.match(run.summary, new RegExp(AGENTS.passing));
    // A relative --junit path is the workspace's, not the action's directory.
    const junit = await Deno.readTextFile(join(run.workspace, "junit.xml"));
    assert.match(junit, new RegExp(`<testcase [^>]*${AGENTS.passing}`));
    assert.equal(service.requestsOf("POST")[0]?.headers["x-api-key"], KEYS.ci);
    _assertKeyOnlyMasked(run, KEYS.ci);
  },
);

toolTest(
  "version: source: a failing agent exits 1 with passed=false",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });

    // The base URL comes from the job's environment when the input is empty.
    const run = await _runAction(
      scratch.dir,
      { agent: AGENTS.failing, "api-key": KEYS.ci, version: "source" },
      { SERVICE_BASE_URL: service.url },
    );

    assert.equal(run.code, 1, _log(run));
    assert.equal(run.outputs.get("passed"), "false");
    assert.equal(run.outputs.get("exit-code"), "1");
    assert.match(run.stdout, /^::error title=service-ci%3A quality gate failed::/m);
  },
);

toolTest(
  'version: source: agent "a,b" runs both agents, and the exit code combines them',
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });

    const run = await _runAction(scratch.dir, {
      agent: `${AGENTS.passing},${AGENTS.failing}`,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
    });

    assert.equal(run.code, 1, _log(run));
    assert.deepEqual(_agentIds(run), [AGENTS.passing, AGENTS.failing]);
    assert.equal(service.requestsOf("POST").length, 2);
    assert.equal(run.outputs.get("passed"), "false");
  },
);

toolTest(
  "version: source with warn-only: a failing gate exits 0 but passed stays false",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });

    const run = await _runAction(scratch.dir, {
      agent: AGENTS.failing,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
      "warn-only": "true",
    });

    assert.equal(run.code, 0, _log(run));
    assert.equal(run.outputs.get("passed"), "false");
    assert.equal(run.outputs.get("exit-code"), "0");
  },
);

toolTest(
  "version: source: a refusal names the action's inputs (timeout-minutes:, base-url:), not flags",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });

    const badTimeout = await _runAction(scratch.dir, {
      agent: AGENTS.passing,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
      "timeout-minutes": "soon",
    });
    assert.equal(badTimeout.code, 2, _log(badTimeout));
    assert.match(
      _log(badTimeout),
      /service-ci: timeout-minutes: must be a positive number of minutes up to 10080, decimals allowed \(got "soon"\)/,
    );
    assert.doesNotMatch(_log(badTimeout), /--timeout-minutes/);
    const badUrl = await _runAction(scratch.dir, {
      agent: AGENTS.passing,
      "api-key": KEYS.ci,
      "base-url": `${service.url}/api/v1`,
      version: "source",
    });
    assert.equal(badUrl.code, 2, _log(badUrl));
    assert.match(
      _log(badUrl),
      /service-ci: base-url: must be the service's address without its API path/,
    );
    assert.equal(service.requests.length, 0);
  },
);

toolTest(
  "version: source runs src/main.ts with exactly deno.json's default permission set (-P)",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    // A deno that records how the program would be run; `deno eval` is left to the real one.
    const bin = join(scratch.dir, "bin");
    const calls = join(scratch.dir, "deno-args");
    await Deno.mkdir(bin);
    await Deno.writeTextFile(
      join(bin, "deno"),
      `#!/bin/sh
if [ "$1" = eval ]; then exec "$REAL_DENO" "$@"; fi
printf '%s\\n' "$@" > "$CALLS"
`,
      { mode: 0o755 },
    );

    const run = await _runAction(
      scratch.dir,
      { agent: AGENTS.passing, "api-key": KEYS.ci, version: "source" },
      {
        PATH: `${bin}${delimiter}${Deno.env.get("PATH") ?? ""}`,
        REAL_DENO: Deno.execPath(),
        CALLS: calls,
      },
    );

    assert.equal(run.code, 0, _log(run));
    assert.deepEqual((await Deno.readTextFile(calls)).split("\n").slice(0, -1), [
      "run",
      "--quiet",
      "--no-prompt",
      "--no-remote",
      "--no-npm",
      "--config",
      DENO_JSON,
      "-P",
      join(ROOT, "src", "main.ts"),
      `--agent=${AGENTS.passing}`,
      "--timeout-minutes=30",
    ]);
  },
);

toolTest(
  "version: source: pr-comment auto comments with the job's token on pull_request events only",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });
    await using github = await startFakeGithub({ token: JOB_TOKEN });
    const event = join(scratch.dir, "event.json");
    await Deno.writeTextFile(
      event,
      JSON.stringify({ pull_request: { number: FORGE_TARGET.pullRequest } }),
    );
    const inputs = { agent: AGENTS.passing, "api-key": KEYS.ci, version: "source" };
    // The job's environment as the runner gives it; the job asks for the comment in vain.
    const job = (eventName: string) => ({
      SERVICE_BASE_URL: service.url,
      SERVICE_PR_COMMENT: "true",
      GITHUB_EVENT_NAME: eventName,
      GITHUB_EVENT_PATH: event,
      GITHUB_REPOSITORY: FORGE_TARGET.repository,
      GITHUB_API_URL: github.apiUrl,
      GITHUB_WORKFLOW: "quality gate",
      GITHUB_JOB: "gate",
    });

    for (const eventName of ["pull_request", "pull_request_target"]) {
      const run = await _runAction(scratch.dir, inputs, job(eventName));
      assert.equal(run.code, 0, _log(run));
      assert.ok(!/pull-request comment/.test(run.stderr), _log(run));
    }
    assert.equal(github.comments.length, 1);
    assert.match(github.comments[0]!.body, /quality gate passed/);
    assert.deepEqual(github.writes.map((request) => request.method), [
      "POST",
      "PATCH",
      "PATCH",
      "PATCH",
    ]);
    for (const request of github.requests) {
      assert.equal(request.headers.authorization, `Bearer ${JOB_TOKEN}`);
    }

    // The github-token input: the comment goes with the token given instead of the job's.
    await using other = await startFakeGithub({ token: "ghp_another-token-for-the-tests" });
    const given = await _runAction(
      scratch.dir,
      { ...inputs, "github-token": "ghp_another-token-for-the-tests" },
      { ...job("pull_request"), GITHUB_API_URL: other.apiUrl },
    );
    assert.equal(given.code, 0, _log(given));
    assert.equal(other.comments.length, 1, _log(given));
    for (const request of other.requests) {
      assert.equal(request.headers.authorization, "Bearer ghp_another-token-for-the-tests");
    }
    assert.ok(!given.stdout.includes("ghp_another") && !given.stderr.includes("ghp_another"));

    const before = github.requests.length;
    const push = await _runAction(scratch.dir, inputs, job("push"));
    const off = await _runAction(scratch.dir, { ...inputs, "pr-comment": "false" }, {
      ...job("pull_request"),
    });
    for (const run of [push, off]) {
      assert.equal(run.code, 0, _log(run));
      assert.ok(!/pull-request comment/.test(run.stderr), _log(run));
    }
    assert.equal(github.requests.length, before);

    // true on another event: service-ci says in one line why there is no comment.
    const forced = await _runAction(scratch.dir, { ...inputs, "pr-comment": "true" }, {
      ...job("push"),
      GITHUB_EVENT_PATH: join(scratch.dir, "no-event.json"),
    });
    assert.equal(forced.code, 0, _log(forced));
    assert.match(forced.stderr, /no pull-request comment: this build is not for a pull request/);
    assert.equal(github.requests.length, before);
  },
);

toolTest(
  "version: source: verbose, the metadata overrides, request-timeout-seconds and ca-cert reach service-ci",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });
    const inputs = {
      agent: AGENTS.passing,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
      verbose: "true",
      "request-timeout-seconds": "12",
      "commit-sha": "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
      branch: "release/2",
      "pull-request": "7",
      repository: "acme/other",
      actor: "octo-bot",
    };

    const run = await _runAction(scratch.dir, inputs);

    assert.equal(run.code, 0, _log(run));
    const body = JSON.parse(service.requestsOf("POST")[0]?.body ?? "{}");
    assert.deepEqual(
      {
        commit_sha: body.ci_metadata?.commit_sha,
        branch: body.ci_metadata?.branch,
        pull_request_number: body.ci_metadata?.pull_request_number,
        repository: body.ci_metadata?.repository,
        actor: body.ci_metadata?.actor,
      },
      {
        commit_sha: inputs["commit-sha"],
        branch: "release/2",
        pull_request_number: 7,
        repository: "acme/other",
        actor: "octo-bot",
      },
    );
    assert.match(
      run.stderr,
      /^service-ci: POST 127\.0\.0\.1:\d+\/api\/v1\/agents\/\S+\/runs → 201 in \d+ ms, attempt 1$/m,
    );
    _assertKeyOnlyMasked(run, KEYS.ci);

    // A bad value is refused in the input's name; ca-cert names a file that is not there.
    const badTimeout = await _runAction(scratch.dir, { ...inputs, "request-timeout-seconds": "x" });
    assert.equal(badTimeout.code, 2, _log(badTimeout));
    assert.match(
      _log(badTimeout),
      /service-ci: request-timeout-seconds: must be a positive number/,
    );
    const badCa = await _runAction(scratch.dir, { ...inputs, "ca-cert": "missing.pem" });
    assert.equal(badCa.code, 2, _log(badCa));
    assert.match(_log(badCa), /service-ci: ca-cert:.*missing\.pem/);
    const badVerbose = await _runAction(scratch.dir, { ...inputs, verbose: "yes please" });
    assert.equal(badVerbose.code, 2, _log(badVerbose));
    assert.match(badVerbose.stdout, /the verbose input must be true or false/);
  },
);

toolTest(
  "version: source: no-wait triggers and passes at once; run-id then waits for that run",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });
    const inputs = {
      agent: AGENTS.failing,
      "api-key": KEYS.ci,
      "base-url": service.url,
      version: "source",
    };

    const started = await _runAction(scratch.dir, { ...inputs, "no-wait": "true" });
    assert.equal(started.code, 0, _log(started));
    const runId = started.outputs.get("run-id") ?? "";
    assert.equal(runId, [...service.runs.keys()][0]);
    assert.equal(service.requestsOf("GET").length, 0);

    const waited = await _runAction(scratch.dir, { ...inputs, "run-id": runId });
    assert.equal(waited.code, 1, _log(waited));
    assert.equal(waited.outputs.get("run-id"), runId);
    assert.equal(service.requestsOf("POST").length, 1);
  },
);

toolTest(
  "version: source: SERVICE_* variables in the job's env: reach service-ci, for the options without an input",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using service = await startFakeService({ agents: defaultAgents(50) });
    const inputs = { agent: AGENTS.passing, "api-key": KEYS.ci, version: "source" };

    const native = await _runAction(scratch.dir, inputs, { SERVICE_BASE_URL: service.url });
    assert.equal(native.code, 0, _log(native));
    assert.match(native.stdout, /^::group::/m);
    // The job's env: as docs/github-actions.md shows it: no CI channels, verbose by variable.
    const run = await _runAction(scratch.dir, inputs, {
      SERVICE_BASE_URL: service.url,
      SERVICE_CI_NATIVE: "false",
      SERVICE_VERBOSE: "true",
      SERVICE_MAX_POLL_INTERVAL_SECONDS: "0.5",
    });
    assert.equal(run.code, 0, _log(run));
    assert.doesNotMatch(run.stdout, /^::group::/m);
    assert.match(run.stderr, /^service-ci: GET \S+ → 200 in \d+ ms, attempt 1$/m);
    assert.equal(run.outputs.get("passed"), "true");
  },
);

// --- release binaries, from a fake release server -----------------------------------------

// The "binary": a script that answers install.sh's --version check and otherwise records its
// arguments (one per line), whether it got the key, its umask, and exits with $FAKE_EXIT.
function _fakeBinary(version: string): string {
  return `#!/bin/sh
if [ "$1" = --version ]; then echo "service-ci ${version}"; exit 0; fi
printf '%s\\n' "$@" > "$FAKE_ARGS"
umask > "$FAKE_ARGS.umask"
printf '%s' "\${SERVICE_API_KEY:-}" > "$FAKE_ARGS.key"
printf '%s' "\${GH_TOKEN:-}\${SERVICE_CI_GITHUB_TOKEN:-}" > "$FAKE_ARGS.token"
exit "\${FAKE_EXIT:-0}"
`;
}

// A release of `version` as GitHub serves it: its archive for this machine and SHA256SUMS,
// under /releases/download/v<version>/ (and /releases/latest/download/). `checksum` replaces
// the archive's real SHA-256 in SHA256SUMS.
async function _serveRelease(
  dir: string,
  version: string,
  checksum?: string,
): Promise<ReleaseServer> {
  const archive = archiveName(version, HOST_TARGET);
  const stage = join(dir, "stage");
  await Deno.mkdir(stage, { recursive: true });
  await Deno.writeTextFile(join(stage, "service-ci"), _fakeBinary(version), { mode: 0o755 });
  const tar = await runCommand("tar", ["-czf", join(dir, archive), "-C", stage, "service-ci"]);
  assert.equal(tar.code, 0, tar.stderr);
  const bytes = await Deno.readFile(join(dir, archive));
  const sums = sha256sumsLine(checksum ?? await sha256Hex(bytes), archive);
  return serveRelease(
    { SHA256SUMS: new TextEncoder().encode(`${sums}\n`), [archive]: bytes },
    { version },
  );
}

toolTest(
  "a release version is downloaded, verified and run with the inputs as arguments",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const args = join(scratch.dir, "args");

    const run = await _runAction(scratch.dir, {
      agent: ` ${AGENTS.passing},\n  ${AGENTS.failing}  \n\n`,
      "api-key": KEYS.ci,
      "base-url": "https://service.example/eval",
      "timeout-minutes": "0.5",
      version: "v1.2.3",
      junit: "-reports dir/junit.xml",
      "warn-only": "true",
    }, { SERVICE_CI_DOWNLOAD_URL: release.url, FAKE_ARGS: args, FAKE_EXIT: "4" });

    // The program's exit code, unchanged.
    assert.equal(run.code, 4, _log(run));
    assert.deepEqual(release.requested, [
      "/releases/download/v1.2.3/SHA256SUMS",
      `/releases/download/v1.2.3/${archiveName("1.2.3", HOST_TARGET)}`,
    ]);
    assert.deepEqual((await Deno.readTextFile(args)).split("\n").slice(0, -1), [
      `--agent=${AGENTS.passing}`,
      `--agent=${AGENTS.failing}`,
      "--base-url=https://service.example/eval",
      "--timeout-minutes=0.5",
      "--junit=-reports dir/junit.xml",
      "--warn-only",
    ]);
    assert.equal(await Deno.readTextFile(`${args}.key`), KEYS.ci);
    assert.match(run.stderr, new RegExp(`installing service-ci 1\\.2\\.3 for ${HOST_TARGET}`));
    const installed = join(scratch.dir, "runner-temp", "service-ci", "1.2.3", "service-ci");
    assert.ok((await Deno.stat(installed)).isFile);
    // gh is on PATH, so the attestation was checked with the job's token, which service-ci
    // itself never sees.
    assert.equal(run.ghCalls.length, 1, _log(run));
    assert.match(
      run.ghCalls[0]!,
      new RegExp(
        `^gh attestation verify \\S+/${
          archiveName("1.2.3", HOST_TARGET).replaceAll(".", "\\.")
        } --repo service-ci/service-ci$`,
      ),
    );
    assert.deepEqual(run.ghTokens, [JOB_TOKEN]);
    assert.equal(await Deno.readTextFile(`${args}.token`), "");
    _assertKeyOnlyMasked(run, KEYS.ci);
  },
);

// The Windows runners GitHub has, by RUNNER_ARCH: the release target and the tool cache's folder.
const WINDOWS_RUNNERS = [
  { arch: "X64", target: "x86_64-pc-windows-msvc", cacheArch: "x64" },
  { arch: "ARM64", target: "aarch64-pc-windows-msvc", cacheArch: "arm64" },
] as const satisfies readonly { arch: string; target: Target; cacheArch: string }[];

toolTest(
  "on an x64 or Arm64 Windows runner its .zip is downloaded, verified, unpacked, cached and service-ci.exe run",
  { ...INSTALL_TOOLS, tools: [...INSTALL_TOOLS.tools, "unzip"] },
  async (t) => {
    for (const { arch, target, cacheArch } of WINDOWS_RUNNERS) {
      await t.step(target, async () => {
        await using scratch = await _scratch();
        const archive = archiveName("1.2.3", target);
        // The "service-ci.exe" is the same recording script: this machine runs it by its #! line.
        const bytes = zipArchive([{
          name: "service-ci.exe",
          data: new TextEncoder().encode(_fakeBinary("1.2.3")),
          modified: new Date(),
        }]) as Uint8Array<ArrayBuffer>;
        // SHA256SUMS lists both Windows archives; only the runner's is downloaded.
        const other = WINDOWS_RUNNERS.find((runner) => runner.target !== target)!.target;
        const sums = (hex: string) =>
          `${sha256sumsLine("ef".repeat(32), archiveName("1.2.3", other))}\n${
            sha256sumsLine(hex, archive)
          }\n`;
        const args = join(scratch.dir, "args");
        const toolCache = join(scratch.dir, "tool-cache");
        const windows = {
          RUNNER_OS: "Windows",
          RUNNER_ARCH: arch,
          RUNNER_TOOL_CACHE: toolCache,
          FAKE_ARGS: args,
        };
        const inputs = { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" };
        {
          await using release = serveRelease(
            {
              SHA256SUMS: new TextEncoder().encode(sums(await sha256Hex(bytes))),
              [archive]: bytes,
            },
            { version: "1.2.3" },
          );
          const run = await _runAction(scratch.dir, inputs, {
            ...windows,
            SERVICE_CI_DOWNLOAD_URL: release.url,
          });
          assert.equal(run.code, 0, _log(run));
          assert.match(run.stderr, new RegExp(`installing service-ci 1\\.2\\.3 for ${target} `));
          assert.deepEqual(release.requested, [
            "/releases/download/v1.2.3/SHA256SUMS",
            `/releases/download/v1.2.3/${archive}`,
          ]);
          assert.equal(run.ghCalls.length, 1, _log(run));
          assert.match(run.ghCalls[0]!, new RegExp(`/${archive.replaceAll(".", "\\.")} --repo `));
          assert.deepEqual((await Deno.readTextFile(args)).split("\n").slice(0, -1), [
            `--agent=${AGENTS.passing}`,
            "--timeout-minutes=30",
          ]);
          const exe = join(scratch.dir, "runner-temp", "service-ci", "1.2.3", "service-ci.exe");
          assert.ok((await Deno.stat(exe)).isFile);
          // The tool cache's folder is the runner's CPU, as the setup actions name it.
          const cache = join(toolCache, "service-ci", "1.2.3", cacheArch);
          const sha = await sha256Hex(await Deno.readFile(join(cache, "service-ci.exe")));
          assert.equal(await Deno.readTextFile(join(cache, "service-ci.exe.sha256")), `${sha}\n`);
          assert.ok((await Deno.stat(`${cache}.complete`)).isFile);
          assert.deepEqual(
            [...Deno.readDirSync(join(toolCache, "service-ci", "1.2.3"))].map((entry) => entry.name)
              .toSorted(),
            [cacheArch, `${cacheArch}.complete`],
          );
          await Deno.remove(join(scratch.dir, "runner-temp"), { recursive: true });
          await Deno.remove(toolCache, { recursive: true });
          await Deno.remove(args);
        }
        {
          await using release = serveRelease(
            { SHA256SUMS: new TextEncoder().encode(sums("cd".repeat(32))), [archive]: bytes },
            { version: "1.2.3" },
          );
          const run = await _runAction(scratch.dir, inputs, {
            ...windows,
            SERVICE_CI_DOWNLOAD_URL: release.url,
          });
          assert.equal(run.code, 3, _log(run));
          assert.match(run.stderr, /checksum mismatch/);
          await assert.rejects(Deno.stat(args), Deno.errors.NotFound);
        }
      });
    }
  },
);

toolTest(
  "without a version input, the release in the action's deno.json is installed",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, OWN_VERSION);
    const args = join(scratch.dir, "args");

    const run = await _runAction(
      scratch.dir,
      { agent: AGENTS.passing, "api-key": KEYS.ci },
      { SERVICE_CI_DOWNLOAD_URL: release.url, FAKE_ARGS: args },
    );

    assert.equal(run.code, 0, _log(run));
    assert.equal(release.requested[0], `/releases/download/v${OWN_VERSION}/SHA256SUMS`);
    assert.deepEqual((await Deno.readTextFile(args)).split("\n").slice(0, -1), [
      `--agent=${AGENTS.passing}`,
      "--timeout-minutes=30",
    ]);
  },
);

toolTest(
  "an archive whose SHA-256 does not match SHA256SUMS is refused and never run",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3", "ab".repeat(32));
    const args = join(scratch.dir, "args");

    const run = await _runAction(
      scratch.dir,
      { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3", "warn-only": "true" },
      { SERVICE_CI_DOWNLOAD_URL: release.url, FAKE_ARGS: args },
    );

    assert.equal(run.code, 3, _log(run));
    assert.match(run.stderr, /checksum mismatch/);
    assert.match(run.stdout, /^::error title=service-ci action::service-ci 1\.2\.3 could not be/m);
    assert.equal(run.outputs.get("passed"), "false");
    assert.equal(run.outputs.get("exit-code"), "3");
    await assert.rejects(Deno.stat(args), Deno.errors.NotFound);
    await assert.rejects(Deno.stat(join(scratch.dir, "runner-temp", "service-ci", "1.2.3")));
  },
);

toolTest(
  "an archive whose attestation gh cannot verify is refused and never run",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const args = join(scratch.dir, "args");

    const run = await _runAction(
      scratch.dir,
      { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" },
      { SERVICE_CI_DOWNLOAD_URL: release.url, FAKE_ARGS: args },
      { ghExit: 1 },
    );

    assert.equal(run.code, 3, _log(run));
    assert.match(run.stderr, /attestation check failed for service-ci-1\.2\.3-/);
    assert.match(run.stdout, /^::error title=service-ci action::service-ci 1\.2\.3 could not be/m);
    assert.equal(run.outputs.get("exit-code"), "3");
    await assert.rejects(Deno.stat(args), Deno.errors.NotFound);
  },
);

toolTest(
  "verify-attestation: false installs after the SHA256SUMS check alone, without running gh",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const args = join(scratch.dir, "args");

    const run = await _runAction(
      scratch.dir,
      {
        agent: AGENTS.passing,
        "api-key": KEYS.ci,
        version: "1.2.3",
        "verify-attestation": "false",
      },
      { SERVICE_CI_DOWNLOAD_URL: release.url, FAKE_ARGS: args },
      { ghExit: 1 },
    );

    assert.equal(run.code, 0, _log(run));
    assert.deepEqual(run.ghCalls, []);
  },
);

// The tool cache's directory for a release on this machine, as the setup actions lay it out.
function _toolCache(root: string, version: string): string {
  return join(root, "service-ci", version, HOST_TARGET.startsWith("x86_64") ? "x64" : "arm64");
}

// Release 1.2.3 served from `url`, run with a tool cache under `dir`: the action's inputs and
// environment, where its fake binary writes its arguments (`args`), and the cached copy's folder.
function _cachedRelease(dir: string, url: string) {
  const toolCache = join(dir, "tool-cache");
  const args = join(dir, "args");
  return {
    toolCache,
    cache: _toolCache(toolCache, "1.2.3"),
    args,
    inputs: { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" },
    env: { SERVICE_CI_DOWNLOAD_URL: url, FAKE_ARGS: args, RUNNER_TOOL_CACHE: toolCache },
  };
}

toolTest(
  "a release is kept in RUNNER_TOOL_CACHE and the next job runs it without a download, checked",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const { cache, args, inputs, env } = _cachedRelease(scratch.dir, release.url);
    const downloads = [
      "/releases/download/v1.2.3/SHA256SUMS",
      `/releases/download/v1.2.3/${archiveName("1.2.3", HOST_TARGET)}`,
    ];

    const first = await _runAction(scratch.dir, inputs, env);
    assert.equal(first.code, 0, _log(first));
    assert.deepEqual(release.requested, downloads);
    const sha = await sha256Hex(await Deno.readFile(join(cache, "service-ci")));
    assert.equal(await Deno.readTextFile(join(cache, "service-ci.sha256")), `${sha}\n`);
    assert.ok((await Deno.stat(`${cache}.complete`)).isFile);
    assert.ok((await Deno.stat(join(cache, "attested"))).isFile, "gh checked the attestation");

    // The next job on this runner: no download, the cached binary's SHA-256 checked, then run.
    await Deno.remove(args);
    const second = await _runAction(scratch.dir, inputs, env);
    assert.equal(second.code, 0, _log(second));
    assert.deepEqual(release.requested, downloads);
    assert.match(
      second.stderr,
      new RegExp(`using \\S+ \\(SHA-256 ${sha}, as at its installation\\)`),
    );
    assert.deepEqual(second.ghCalls, []);
    assert.match(await Deno.readTextFile(args), new RegExp(`^--agent=${AGENTS.passing}\n`));

    // A cached binary that changed is never run: a warning, and a new download.
    await Deno.writeTextFile(join(cache, "service-ci"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
    const changed = await _runAction(scratch.dir, inputs, env);
    assert.equal(changed.code, 0, _log(changed));
    assert.match(
      changed.stdout,
      /^::warning title=service-ci action::the cached \S+ has SHA-256 [0-9a-f]{64}, not the [0-9a-f]{64} recorded/m,
    );
    assert.deepEqual(release.requested, [...downloads, ...downloads]);
    assert.equal(await sha256Hex(await Deno.readFile(join(cache, "service-ci"))), sha);
  },
);

toolTest(
  "the tool cache keeps no latest, and a copy cached without the attestation check is not trusted with it",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const toolCache = join(scratch.dir, "tool-cache");
    const inputs = { agent: AGENTS.passing, "api-key": KEYS.ci };
    const env = {
      SERVICE_CI_DOWNLOAD_URL: release.url,
      FAKE_ARGS: join(scratch.dir, "args"),
      RUNNER_TOOL_CACHE: toolCache,
    };

    const latest = await _runAction(scratch.dir, { ...inputs, version: "latest" }, env);
    assert.equal(latest.code, 0, _log(latest));
    assert.equal(
      await Array.fromAsync(Deno.readDir(scratch.dir)).then((entries) =>
        entries.some((entry) => entry.name === "tool-cache")
      ),
      false,
    );

    const unchecked = await _runAction(
      scratch.dir,
      { ...inputs, version: "1.2.3", "verify-attestation": "false" },
      env,
    );
    assert.equal(unchecked.code, 0, _log(unchecked));
    const cache = _toolCache(toolCache, "1.2.3");
    await assert.rejects(() => Deno.stat(join(cache, "attested")), Deno.errors.NotFound);
    const requested = release.requested.length;

    const checked = await _runAction(
      scratch.dir,
      { ...inputs, version: "1.2.3", "verify-attestation": "true" },
      env,
    );
    assert.equal(checked.code, 0, _log(checked));
    assert.match(checked.stderr, /was cached without the attestation check; installing it again/);
    assert.equal(release.requested.length, requested + 2);
    assert.equal(checked.ghCalls.length, 1);
    assert.ok((await Deno.stat(join(cache, "attested"))).isFile);
  },
);

// What the action writes into the tool cache, and the modes it must have whatever the umask.
function _cacheModes(toolCache: string, version: string): Record<string, string> {
  const cache = _toolCache(toolCache, version);
  return {
    [join(toolCache, "service-ci")]: "0755",
    [join(toolCache, "service-ci", version)]: "0755",
    [cache]: "0755",
    [`${cache}.complete`]: "0644",
    [join(cache, "service-ci")]: "0755",
    [join(cache, "service-ci.sha256")]: "0644",
    [join(cache, "attested")]: "0644",
  };
}

// The permission bits of each path (not following a symbolic link), as _cacheModes writes them.
async function _modesOf(paths: Iterable<string>): Promise<Record<string, string>> {
  const modes: Record<string, string> = {};
  for (const path of paths) {
    modes[path] = ((await Deno.lstat(path)).mode! & 0o7777).toString(8).padStart(4, "0");
  }
  return modes;
}

const CACHE_TOOLS: ToolOptions = {
  ...INSTALL_TOOLS,
  tools: [...INSTALL_TOOLS.tools, "find", "id"],
};

toolTest(
  "under umask 000 the action creates its folders 0755, the binary 0755 and its files 0644",
  CACHE_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const { toolCache, args, inputs, env } = _cachedRelease(scratch.dir, release.url);

    const first = await _runAction(scratch.dir, inputs, env, { umask: "000" });
    assert.equal(first.code, 0, _log(first));
    assert.match(first.stderr, /cached in \S+ \(SHA-256 [0-9a-f]{64}\)/);
    const expected = _cacheModes(toolCache, "1.2.3");
    assert.deepEqual(await _modesOf(Object.keys(expected)), expected);
    // The installation the step runs, with the key, is no more writable than the cache.
    const installed = join(scratch.dir, "runner-temp", "service-ci", "1.2.3");
    assert.deepEqual(await _modesOf([installed, join(installed, "service-ci")]), {
      [installed]: "0755",
      [join(installed, "service-ci")]: "0755",
    });
    // service-ci itself runs with the job's umask, for the reports it writes.
    assert.equal((await Deno.readTextFile(`${args}.umask`)).trim(), "0000");

    // What it wrote under umask 000 it trusts: the next job runs it without a download.
    const requested = release.requested.length;
    const second = await _runAction(scratch.dir, inputs, env, { umask: "000" });
    assert.equal(second.code, 0, _log(second));
    assert.match(second.stderr, /using \S+ \(SHA-256 [0-9a-f]{64}, as at its installation\)/);
    assert.equal(release.requested.length, requested);
  },
);

toolTest(
  "a cached copy another user owns or may write is never run: it is discarded and installed again",
  CACHE_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const { toolCache, cache, args, inputs, env } = _cachedRelease(scratch.dir, release.url);
    const installed = await _runAction(scratch.dir, inputs, env);
    assert.equal(installed.code, 0, _log(installed));
    const sha = await sha256Hex(await Deno.readFile(join(cache, "service-ci")));
    const expected = _cacheModes(toolCache, "1.2.3");

    // Another program in the cache, with the SHA-256 record that matches it: what someone who
    // can write there would leave for the next job to run with the key.
    const planted = '#!/bin/sh\nprintf \'%s\' "$SERVICE_API_KEY" > "$FAKE_ARGS.planted"\n';
    const plantedSha = await sha256Hex(new TextEncoder().encode(planted));
    // The test's own user (Deno.uid() would need --allow-sys), and nobody's when that is root.
    const uid = Number((await runCommand("id", ["-u"])).stdout.trim());
    const nobody = uid === 0
      ? Number((await runCommand("id", ["-u", "nobody"])).stdout.trim())
      : undefined;
    const cases: [string, () => Promise<void>][] = [
      ["its folder writable by others", () => Deno.chmod(cache, 0o777)],
      ["its version's folder writable by the group", () => Deno.chmod(dirname(cache), 0o775)],
      ["service-ci's folder writable by others", () => Deno.chmod(dirname(dirname(cache)), 0o757)],
      ["its record writable by others", () => Deno.chmod(join(cache, "service-ci.sha256"), 0o666)],
      ["its binary writable by the group", () => Deno.chmod(join(cache, "service-ci"), 0o775)],
      ["its marker writable by others", () => Deno.chmod(`${cache}.complete`, 0o666)],
    ];
    // Only root can give a file to another user: run as anyone else, this case is left out.
    if (nobody !== undefined) {
      cases.push(["owned by nobody", async () => {
        for (const path of [cache, join(cache, "service-ci"), join(cache, "service-ci.sha256")]) {
          await Deno.chown(path, nobody, null);
        }
      }]);
    }
    for (const [what, tamper] of cases) {
      await Deno.writeTextFile(join(cache, "service-ci"), planted);
      await Deno.writeTextFile(join(cache, "service-ci.sha256"), `${plantedSha}\n`);
      await tamper();
      await Deno.remove(args);
      const requested = release.requested.length;

      const run = await _runAction(scratch.dir, inputs, env);

      assert.equal(run.code, 0, `${what}: ${_log(run)}`);
      await assert.rejects(Deno.stat(`${args}.planted`), Deno.errors.NotFound, what);
      assert.match(
        run.stdout,
        /^::warning title=service-ci action::the cached \S+ is not used: another user owns or may write \S+/m,
        what,
      );
      assert.equal(release.requested.length, requested + 2, what);
      assert.match(await Deno.readTextFile(args), new RegExp(`^--agent=${AGENTS.passing}\n`), what);
      // In the cache again: the release's binary, as the action writes it, and its own.
      assert.equal(await sha256Hex(await Deno.readFile(join(cache, "service-ci"))), sha, what);
      assert.deepEqual(await _modesOf(Object.keys(expected)), expected, what);
      for (const path of Object.keys(expected)) {
        assert.equal((await Deno.lstat(path)).uid, uid, `${what}: ${path}`);
      }
    }
  },
);

// What the step and install.sh run, for a PATH that holds these and no gh.
const WITHOUT_GH = [
  "bash",
  "sh",
  "sed",
  "tr",
  "head",
  "uname",
  "mktemp",
  "rm",
  "awk",
  "cut",
  "tar",
  "gzip",
  "mkdir",
  "cp",
  "chmod",
  "mv",
  "curl",
  "sha256sum",
];

toolTest(
  "without gh on the runner, verify-attestation: auto installs with a notice and true refuses",
  { tools: WITHOUT_GH, onlyOn: ["linux"] },
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const bin = join(scratch.dir, "path");
    await Deno.mkdir(bin);
    for (const tool of WITHOUT_GH) await Deno.symlink(which(tool)!, join(bin, tool));
    const inputs = { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" };
    const env = {
      SERVICE_CI_DOWNLOAD_URL: release.url,
      FAKE_ARGS: join(scratch.dir, "args"),
      PATH: bin,
    };

    const auto = await _runAction(scratch.dir, inputs, env);
    assert.equal(auto.code, 0, _log(auto));
    assert.match(auto.stderr, /gh is not on PATH, so the build-provenance\s+attestation is not/);

    const required = await _runAction(
      scratch.dir,
      { ...inputs, "verify-attestation": "true" },
      env,
    );
    assert.equal(required.code, 3, _log(required));
    assert.match(required.stderr, /--verify-attestation needs the GitHub CLI \(gh\) on PATH/);
  },
);

toolTest(
  "the runner's OS and architecture map onto exactly the release targets of scripts/build.ts",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    // No release: the step names the target it installs, then fails to download it.
    await using release = serveRelease({});
    const reached = new Set<Target>();
    for (const os of ["Linux", "macOS", "Windows"]) {
      for (const arch of ["X64", "ARM64"]) {
        const run = await _runAction(
          scratch.dir,
          { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" },
          { SERVICE_CI_DOWNLOAD_URL: release.url, RUNNER_OS: os, RUNNER_ARCH: arch },
        );
        const target = /installing service-ci 1\.2\.3 for (\S+) into/.exec(run.stderr)?.[1];
        assert.equal(run.code, 3, _log(run));
        assert.ok(target !== undefined, _log(run));
        reached.add(target as Target);
      }
    }
    assert.deepEqual([...reached].toSorted(), [...TARGETS].toSorted());
  },
);

toolTest(
  "input errors stop the step with exit code 2 before anything is downloaded or run",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using release = await _serveRelease(scratch.dir, "1.2.3");
    const valid = { agent: AGENTS.passing, "api-key": KEYS.ci, version: "1.2.3" };
    const cases: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{ ...valid, agent: " , \n" }, {}, /the agent input is empty/],
      [{ ...valid, "api-key": "" }, {}, /the api-key input is empty/],
      [{ ...valid, "warn-only": "yes" }, {}, /warn-only input must be true or false \(got "yes"\)/],
      [{ ...valid, version: "../1\n::x" }, {}, /version input must be .* \(got "\.\.\/1 ::x"\)/],
      [{ ...valid, version: "v" }, {}, /version input must be .* \(got "v"\)/],
      [
        { ...valid, "verify-attestation": "yes" },
        {},
        /verify-attestation input must be auto, true or false \(got "yes"\)/,
      ],
      [
        { ...valid, "pr-comment": "yes" },
        {},
        /pr-comment input must be auto, true or false \(got "yes"\)/,
      ],
      [valid, { RUNNER_ARCH: "ARM" }, /unsupported runner architecture ARM/],
    ];
    for (const [inputs, env, message] of cases) {
      const run = await _runAction(scratch.dir, inputs, {
        SERVICE_CI_DOWNLOAD_URL: release.url,
        ...env,
      });
      assert.equal(run.code, 2, _log(run));
      assert.match(run.stdout, message);
      assert.equal(run.outputs.get("exit-code"), "2");
      assert.equal(run.outputs.get("passed"), "false");
      // One line per message: an input cannot start a workflow command of its own.
      assert.ok(!/^::x/m.test(run.stdout), run.stdout);
    }
    assert.deepEqual(release.requested, []);
  },
);

toolTest(
  "the key is masked line by line, with % escaped, before any input is checked",
  STEP_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const run = await _runAction(scratch.dir, { agent: "", "api-key": "sk_1%0A\r\nline two\n" });
    assert.equal(run.code, 2, _log(run));
    assert.deepEqual(run.stdout.split("\n").filter((line) => line.startsWith("::add-mask::")), [
      "::add-mask::sk_1%250A",
      "::add-mask::line two",
    ]);
    assert.ok(run.stdout.indexOf("::add-mask::") < run.stdout.indexOf("::error"), run.stdout);
  },
);
