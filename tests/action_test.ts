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
import { parseDocument } from "npm:yaml@2.6.1";
import { archiveName, readBuildConfig, sha256sumsLine, type Target } from "../scripts/build.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "./support/fake_service.ts";
import { PERMISSIONS } from "./support/program.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url)).replace(/[\\/]$/, "");
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

function _load<T>(path: string): T {
  const document = parseDocument(Deno.readTextFileSync(path), { prettyErrors: true });
  assert.deepEqual(document.errors.map(String), [], path);
  assert.deepEqual(document.warnings.map(String), [], path);
  return document.toJS() as T;
}

const ACTION_TEXT = Deno.readTextFileSync(join(ROOT, "action.yml"));
const ACTION = _load<Action>(join(ROOT, "action.yml"));
const GATE_STEP = ACTION.runs.steps.find((step) => step.id === "gate");

function _gateStep(): Step & { readonly run: string; readonly env: Record<string, string> } {
  assert.ok(GATE_STEP?.run !== undefined && GATE_STEP.env !== undefined, "a run step id: gate");
  return GATE_STEP as Step & { readonly run: string; readonly env: Record<string, string> };
}

// A test that needs programs: skipped where one is missing, failed with a clear message in CI.
// The action's script is POSIX sh, so these tests do not run on Windows. Each entry of `tools`
// lists programs of which one is enough.
function _toolTest(
  name: string,
  tools: readonly (readonly string[])[],
  fn: () => Promise<void>,
): void {
  const missing = tools.filter((choices) => !choices.some(_onPath));
  Deno.test({
    name,
    ignore: Deno.build.os === "windows" || (missing.length > 0 && Deno.env.get("CI") !== "true"),
    fn: async () => {
      if (missing.length > 0) {
        throw new Error(
          `CI=true but this test needs ${
            missing.map((choices) => choices.join(" or ")).join(", ")
          } on PATH (install it; ci.yml does)`,
        );
      }
      await fn();
    },
  });
}

function _onPath(program: string): boolean {
  return (Deno.env.get("PATH") ?? "").split(delimiter).some((dir) => {
    try {
      return dir !== "" && Deno.statSync(join(dir, program)).isFile;
    } catch {
      return false;
    }
  });
}

// What the step runs: bash for `run:`, sh for the script, and what install.sh runs.
const STEP_TOOLS = [["bash"], ["sh"], ["sed"], ["tr"]];
const INSTALL_TOOLS = [
  ...STEP_TOOLS,
  ["tar"],
  ["awk"],
  ["curl", "wget"],
  ["sha256sum", "shasum"],
];

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
}

// Runs the gate step as the runner would: its `env:` with each `${{ inputs.x }}` replaced by
// the given input or the input's default, then its `run:` with bash, in the job's workspace.
// `env` holds the job's own environment.
async function _runAction(
  dir: string,
  inputs: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string>> = {},
): Promise<ActionRun> {
  const step = _gateStep();
  for (const name of Object.keys(inputs)) assert.ok(name in ACTION.inputs, `input ${name}`);
  const stepEnv: Record<string, string> = {};
  for (const [name, expression] of Object.entries(step.env)) {
    const input = /^\$\{\{ inputs\.([\w-]+) \}\}$/.exec(expression)?.[1];
    assert.ok(input !== undefined && input in ACTION.inputs, `${name}: ${expression}`);
    stepEnv[name] = inputs[input] ?? ACTION.inputs[input]?.default ?? "";
  }
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
  const output = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", "-c", step.run],
    cwd: workspace,
    clearEnv: true,
    env: {
      ...inherited,
      // The deno that runs these tests stands in for the one setup-deno installs.
      PATH: `${dirname(Deno.execPath())}${delimiter}${Deno.env.get("PATH") ?? ""}`,
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
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
    outputs: _readGithubOutput(await Deno.readTextFile(outputFile)),
    summary: await Deno.readTextFile(summaryFile),
    workspace,
  };
}

// Reads a GITHUB_OUTPUT file as the Actions runner does: `name=value` lines and
// `name<<DELIMITER` heredocs; a later value of a name replaces an earlier one.
function _readGithubOutput(text: string): Map<string, string> {
  const lines = text.split("\n");
  if (lines.at(-1) === "") lines.pop();
  const outputs = new Map<string, string>();
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc === null) {
      const plain = /^([^=]+)=(.*)$/.exec(line);
      assert.ok(plain, `invalid GITHUB_OUTPUT line: ${JSON.stringify(line)}`);
      outputs.set(plain[1]!, plain[2]!);
      continue;
    }
    const value: string[] = [];
    for (index++; lines[index] !== heredoc[2]; index++) {
      assert.ok(index < lines.length, `delimiter ${heredoc[2]} not found`);
      value.push(lines[index]!);
    }
    outputs.set(heredoc[1]!, value.join("\n"));
  }
  return outputs;
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
  ]);
  for (const [name, input] of Object.entries(ACTION.inputs)) {
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
  });
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
  const ci = _load<{ jobs: Record<string, { steps?: Step[] }> }>(
    join(ROOT, ".github", "workflows", "ci.yml"),
  );
  const ciSetup = Object.values(ci.jobs).flatMap((job) => job.steps ?? [])
    .find((step) => step.uses?.startsWith("denoland/setup-deno@"));
  assert.equal(setups[0]!.uses, ciSetup?.uses);
  assert.deepEqual(setups[0]!.with, { "deno-version": ciSetup?.with?.["deno-version"] });
  assert.equal(setups[0]!.if, "inputs.version == 'source'");
  assert.ok(ACTION.runs.steps.indexOf(setups[0]!) < ACTION.runs.steps.indexOf(_gateStep()));
});

_toolTest("action.yml passes yamllint --strict", [["yamllint"]], async () => {
  const output = await new Deno.Command("yamllint", {
    args: ["--strict", "--config-file", ".yamllint.yml", "action.yml"],
    cwd: ROOT,
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  assert.equal(output.code, 0, decoder.decode(output.stdout) + decoder.decode(output.stderr));
});

_toolTest("scripts/action.sh passes shellcheck -s sh", [["shellcheck"]], async () => {
  const output = await new Deno.Command("shellcheck", {
    args: ["--shell=sh", "--severity=style", SCRIPT],
    stdin: "null",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stdout));
});

// --- version: source, against the fake service -------------------------------------------

_toolTest(
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

_toolTest(
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

_toolTest(
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

_toolTest(
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

_toolTest(
  "version: source runs src/main.ts with exactly deno.json's runtimePermissions",
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
      ...PERMISSIONS,
      join(ROOT, "src", "main.ts"),
      `--agent=${AGENTS.passing}`,
      "--timeout-minutes=30",
    ]);
  },
);

// --- release binaries, from a fake release server -----------------------------------------

// The target install.sh picks on this machine (it reads uname; Deno knows the same).
const HOST_TARGET = `${Deno.build.arch}-${
  Deno.build.os === "darwin" ? "apple-darwin" : "unknown-linux-gnu"
}` as Target;

// The "binary": a script that answers install.sh's --version check and otherwise records its
// arguments (one per line), whether it got the key, and exits with $FAKE_EXIT.
function _fakeBinary(version: string): string {
  return `#!/bin/sh
if [ "$1" = --version ]; then echo "service-ci ${version}"; exit 0; fi
printf '%s\\n' "$@" > "$FAKE_ARGS"
printf '%s' "\${SERVICE_API_KEY:-}" > "$FAKE_ARGS.key"
exit "\${FAKE_EXIT:-0}"
`;
}

interface ReleaseServer extends AsyncDisposable {
  /** The base URL to give as SERVICE_CI_DOWNLOAD_URL. */
  readonly url: string;
  /** The paths requested, in order. */
  readonly requested: readonly string[];
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
  const tar = await new Deno.Command("tar", {
    args: ["-czf", join(dir, archive), "-C", stage, "service-ci"],
    stdin: "null",
  }).output();
  assert.equal(tar.code, 0, new TextDecoder().decode(tar.stderr));
  const bytes = await Deno.readFile(join(dir, archive));
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  const hex = Array.from(digest, (byte) => byte.toString(16).padStart(2, "0")).join("");
  const files: Record<string, Uint8Array<ArrayBuffer>> = {
    SHA256SUMS: new TextEncoder().encode(`${sha256sumsLine(checksum ?? hex, archive)}\n`),
    [archive]: bytes,
  };
  const requested: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const path = new URL(request.url).pathname;
    requested.push(path);
    const match = new RegExp(
      `^/releases/(?:download/v${version.replaceAll(".", "\\.")}|latest/download)/([^/]+)$`,
    ).exec(path);
    const body = match?.[1] === undefined ? undefined : files[match[1]];
    return body === undefined
      ? new Response("not found", { status: 404 })
      : new Response(body, { headers: { "content-type": "application/octet-stream" } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/releases`,
    requested,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

_toolTest(
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
    _assertKeyOnlyMasked(run, KEYS.ci);
  },
);

_toolTest(
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

_toolTest(
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

_toolTest(
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
      [valid, { RUNNER_OS: "Windows" }, /on Windows set version: source/],
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

_toolTest(
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
