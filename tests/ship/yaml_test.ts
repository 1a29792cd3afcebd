/**
 * Tests the GitHub workflows: they parse and lint, pin every action to a commit, ask for the
 * least permissions, and their release scripts do what the release promises (run here with
 * stand-ins for gh and docker).
 */

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { archiveName, TARGETS } from "../../scripts/build.ts";
import { sbomName } from "../../scripts/sbom.ts";
import { runCommand } from "../support/command.ts";
import { type ToolOptions, toolTest } from "../support/tools.ts";
import { assertYamllintPasses, parseYaml } from "../support/yaml.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const WORKFLOWS = join(ROOT, ".github", "workflows");

interface Step {
  readonly name?: string;
  readonly id?: string;
  readonly uses?: string;
  readonly run?: string;
  readonly if?: string;
  readonly with?: Record<string, unknown>;
  readonly env?: Record<string, string>;
}

interface Job {
  readonly if?: string;
  readonly uses?: string;
  readonly needs?: string | readonly string[];
  readonly "runs-on"?: string;
  readonly permissions?: Record<string, string>;
  readonly strategy?: { readonly matrix?: Record<string, unknown> };
  readonly steps?: readonly Step[];
}

interface Workflow {
  readonly on: Record<string, unknown>;
  readonly permissions?: Record<string, string>;
  readonly jobs: Record<string, Job>;
}

function _yamlFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(..._yamlFiles(path));
    else if (/\.ya?ml$/.test(entry.name)) files.push(path);
  }
  return files.toSorted();
}

function _load(path: string): Workflow {
  return parseYaml<Workflow>(Deno.readTextFileSync(path), relative(ROOT, path));
}

const CI = _load(join(WORKFLOWS, "ci.yml"));
const RELEASE = _load(join(WORKFLOWS, "release.yml"));

function _step(workflow: Workflow, job: string, name: string): Step {
  const step = workflow.jobs[job]?.steps?.find((candidate) => candidate.name === name);
  assert.ok(step, `job ${job} has a step named "${name}"`);
  return step;
}

function _steps(workflow: Workflow): Step[] {
  return Object.values(workflow.jobs).flatMap((job) => [...(job.steps ?? [])]);
}

// What the tests that run programs need. Windows CI runners lack most of these tools, so those
// tests do not run on Windows.
const SH: ToolOptions = { tools: ["sh"], notOn: ["windows"] };
const SHELLCHECK: ToolOptions = { tools: ["shellcheck"], notOn: ["windows"] };
const YAMLLINT: ToolOptions = { tools: ["yamllint"], notOn: ["windows"] };

interface ScriptRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The command lines the stand-in programs received, one per call. */
  readonly calls: readonly string[];
  /** What the script wrote to $GITHUB_OUTPUT. */
  readonly outputs: Readonly<Record<string, string>>;
}

// The digest the stand-in docker reports for a pushed image.
const IMAGE_DIGEST = `sha256:${"0f".repeat(32)}`;

// Runs a step's script with sh, as the runner would with bash, with stand-ins for gh, docker
// and npm that record their arguments, in a scratch directory `setup` may fill first.
// FAKE_GH_EXIT sets the stand-in gh's exit code for `gh api` reads of a ref; the stand-in
// docker writes IMAGE_DIGEST to a --metadata-file as buildx does.
async function _runStep(
  step: Step,
  env: Record<string, string>,
  setup: (dir: string) => Promise<void> = async () => {},
): Promise<ScriptRun> {
  assert.ok(step.run, `step "${step.name}" has a run: script`);
  const dir = await mkdtemp(join(tmpdir(), "service-ci-workflow-"));
  try {
    const bin = join(dir, "bin");
    await Deno.mkdir(bin);
    for (const tool of ["gh", "docker", "npm"]) {
      await Deno.writeTextFile(
        join(bin, tool),
        `#!/bin/sh
printf '%s\\n' "${tool} $*" >> "$CALLS"
case "$*" in "api repos/"*"/git/ref/"*) exit "\${FAKE_GH_EXIT:-0}" ;; esac
while [ "$#" -gt 0 ]; do
  if [ "$1" = --metadata-file ]; then
    printf '{\\n  "containerimage.digest": "%s"\\n}\\n' '${IMAGE_DIGEST}' > "$2"
  fi
  shift
done
exit 0
`,
        { mode: 0o755 },
      );
    }
    await setup(dir);
    await Deno.writeTextFile(join(dir, "step.sh"), step.run);
    const calls = join(dir, "calls");
    const outputs = join(dir, "outputs");
    await Deno.writeTextFile(calls, "");
    await Deno.writeTextFile(outputs, "");
    const output = await runCommand("sh", ["-e", join(dir, "step.sh")], {
      cwd: dir,
      clearEnv: true,
      env: {
        PATH: `${bin}${delimiter}${Deno.env.get("PATH") ?? ""}`,
        CALLS: calls,
        GITHUB_OUTPUT: outputs,
        RUNNER_TEMP: dir,
        ...env,
      },
    });
    return {
      ...output,
      calls: (await Deno.readTextFile(calls)).split("\n").filter((line) => line !== ""),
      outputs: Object.fromEntries(
        (await Deno.readTextFile(outputs)).split("\n").filter((line) => line.includes("="))
          .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
      ),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function _derive(tag: string): Promise<ScriptRun> {
  return await _runStep(_step(RELEASE, "build", "Derive the version from the tag"), {
    GITHUB_REF_NAME: tag,
  });
}

Deno.test("every YAML file under .github parses without errors or warnings", () => {
  const files = _yamlFiles(join(ROOT, ".github"));
  assert.ok(files.length >= 2, "ci.yml and release.yml at least");
  for (const file of files) {
    const workflow = _load(file);
    assert.equal(typeof workflow, "object", relative(ROOT, file));
  }
});

toolTest("every YAML file under .github passes yamllint --strict", YAMLLINT, async () => {
  await assertYamllintPasses([".github"]);
});

toolTest("every run: script of the workflows passes shellcheck", SHELLCHECK, async () => {
  const dir = await mkdtemp(join(tmpdir(), "service-ci-shellcheck-"));
  try {
    for (const file of _yamlFiles(WORKFLOWS)) {
      for (const [index, step] of _steps(_load(file)).entries()) {
        if (step.run === undefined) continue;
        const script = join(dir, `${index}.sh`);
        await Deno.writeTextFile(script, step.run);
        const output = await runCommand("shellcheck", ["--shell=bash", script]);
        assert.equal(
          output.code,
          0,
          `${relative(ROOT, file)}, step "${step.name ?? step.run}":\n${output.stdout}`,
        );
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Deno.test("every action the workflows use is pinned to a full commit SHA with its version", () => {
  for (const file of _yamlFiles(WORKFLOWS)) {
    const workflow = _load(file);
    const text = Deno.readTextFileSync(file);
    const uses = [
      ...Object.values(workflow.jobs).flatMap((job) => job.uses ?? []),
      ..._steps(workflow).flatMap((step) => step.uses ?? []),
    ];
    for (const action of uses) {
      if (action.startsWith("./")) continue; // this repository's own workflow
      assert.match(action, /^[\w.-]+\/[\w./-]+@[0-9a-f]{40}$/, `${relative(ROOT, file)}`);
      assert.match(
        text,
        new RegExp(`uses: ${action.replaceAll(".", "\\.")} # v\\d`),
        `${action} carries a # vX.Y.Z comment`,
      );
    }
  }
});

Deno.test("ci.yml runs deno task test on Linux, macOS and Windows, on push and pull_request", () => {
  assert.ok("push" in CI.on && "pull_request" in CI.on);
  assert.deepEqual(CI.permissions, { contents: "read" });
  const job = CI.jobs.test;
  assert.ok(job);
  assert.deepEqual(job.strategy?.matrix?.os, ["ubuntu-latest", "macos-latest", "windows-latest"]);
  assert.equal(job["runs-on"], "${{ matrix.os }}");
  assert.ok(job.steps?.some((step) => step.run === "deno task test"));
});

Deno.test("both workflows install the same Deno version", () => {
  const versions = [CI, RELEASE].flatMap((workflow) =>
    _steps(workflow).flatMap((step) =>
      step.uses?.startsWith("denoland/setup-deno@") ? [step.with?.["deno-version"]] : []
    )
  );
  assert.ok(versions.length >= 2);
  assert.deepEqual(new Set(versions), new Set(["v2.9.6"]));
});

Deno.test("release.yml runs on version tags, tests first, and builds with deno task compile", () => {
  const tags = (RELEASE.on.push as { tags?: string[] }).tags ?? [];
  assert.ok(tags.length > 0 && tags.every((tag) => tag.startsWith("v")), String(tags));
  assert.equal(RELEASE.jobs.test?.uses, "./.github/workflows/ci.yml");
  assert.deepEqual(RELEASE.jobs.build?.needs, ["address", "test"]);
  assert.ok(RELEASE.jobs.build?.steps?.some((step) => step.run === "deno task compile"));
});

Deno.test("release.yml gives each job only the permissions it needs", () => {
  const attest = { "id-token": "write", attestations: "write", "artifact-metadata": "write" };
  assert.deepEqual(RELEASE.permissions, {});
  assert.deepEqual(RELEASE.jobs.address?.permissions, {});
  assert.deepEqual(RELEASE.jobs.test?.permissions, { contents: "read" });
  assert.deepEqual(RELEASE.jobs.build?.permissions, { contents: "read" });
  assert.deepEqual(RELEASE.jobs.verify?.permissions, { contents: "read" });
  assert.deepEqual(RELEASE.jobs["verify-image"]?.permissions, { contents: "read" });
  assert.deepEqual(RELEASE.jobs.attest?.permissions, { contents: "read", ...attest });
  assert.deepEqual(RELEASE.jobs.release?.permissions, { contents: "write" });
  assert.deepEqual(RELEASE.jobs.image?.permissions, { contents: "read", packages: "write" });
  assert.deepEqual(RELEASE.jobs["verify-pushed-image"]?.permissions, { contents: "read" });
  assert.deepEqual(RELEASE.jobs["attest-image"]?.permissions, {
    contents: "read",
    packages: "write",
    ...attest,
  });
  assert.deepEqual(RELEASE.jobs["major-tag"]?.permissions, {
    contents: "write",
    packages: "write",
  });
  assert.deepEqual(RELEASE.jobs.jsr?.permissions, { contents: "read", "id-token": "write" });
  assert.deepEqual(RELEASE.jobs.npm?.permissions, { contents: "read", "id-token": "write" });
});

function _uses(job: string, action: string): Step[] {
  return (RELEASE.jobs[job]?.steps ?? []).filter((step) => step.uses?.startsWith(`${action}@`));
}

function _lines(value: unknown): string[] {
  return String(value).split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

// Which jobs attest, and after what: tests/ship/workflows_test.ts.
Deno.test("release.yml attests every archive, SHA256SUMS and the SBOM it downloaded and checked", () => {
  const steps = RELEASE.jobs.attest?.steps ?? [];
  const [provenance, sbom] = _uses("attest", "actions/attest");
  assert.ok(provenance, "the attest job attests with actions/attest");
  assert.deepEqual(_lines(provenance.with?.["subject-path"]), [
    "dist/*.tar.gz",
    "dist/*.zip",
    "dist/SHA256SUMS",
    "dist/*.cdx.json",
  ]);
  const checked = steps.findIndex((step) => /--check --strict SHA256SUMS/.test(step.run ?? ""));
  assert.ok(checked >= 0 && steps.indexOf(provenance) > checked, "attested after the check");
  // The patterns cover every target's archive, SHA256SUMS and the SBOM.
  const patterns = _lines(provenance.with?.["subject-path"]).map((glob) =>
    new RegExp(`^${glob.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replaceAll("*", "[^/]*")}$`)
  );
  const files = [...TARGETS.map((target) => archiveName("1.2.3", target)), sbomName("1.2.3")];
  for (const file of [...files, "SHA256SUMS"]) {
    assert.ok(patterns.some((pattern) => pattern.test(`dist/${file}`)), file);
  }

  assert.ok(sbom, "the attest job attests the SBOM with actions/attest");
  assert.deepEqual(_lines(sbom.with?.["subject-path"]), ["dist/*.tar.gz", "dist/*.zip"]);
  assert.equal(
    sbom.with?.["sbom-path"],
    `dist/${sbomName("${{ needs.build.outputs.version }}")}`,
  );
});

Deno.test("release.yml bakes the address job's SERVICE_DEFAULT_BASE_URL into the binaries, the image and JSR", () => {
  const variable = "${{ needs.address.outputs.address }}";
  const compile = RELEASE.jobs.build?.steps?.find((step) => step.run === "deno task compile");
  assert.equal(compile?.env?.SERVICE_DEFAULT_BASE_URL, variable);
  const push = _step(RELEASE, "image", "Build and push ci:<tag>");
  assert.equal(push.env?.SERVICE_DEFAULT_BASE_URL, variable);
  assert.match(push.run ?? "", /--build-arg "SERVICE_DEFAULT_BASE_URL=\$SERVICE_DEFAULT_BASE_URL"/);
  const bake = _step(RELEASE, "jsr", "Bake in the default service address");
  assert.equal(bake.env?.SERVICE_DEFAULT_BASE_URL, variable);
});

Deno.test("release.yml publishes to JSR with deno publish after baking in the default address", () => {
  const job = RELEASE.jobs.jsr;
  assert.deepEqual(job?.needs, ["address", "build", "verify", "verify-image", "release"]);
  const runs = (job?.steps ?? []).flatMap((step) => step.run ?? []);
  assert.deepEqual(runs, ["deno task bake-default", "deno publish --allow-dirty"]);
  // Provenance comes with OIDC (id-token: write) unless it is turned off.
  assert.ok(!runs.some((run) => run.includes("--no-provenance")));
});

// A job's needs, as a list.
function _needs(job: Job | undefined): string[] {
  const needs = job?.needs ?? [];
  return typeof needs === "string" ? [needs] : [...needs];
}

// Every job a job waits for, directly or through others.
function _ancestors(workflow: Workflow, name: string): Set<string> {
  const found = new Set<string>();
  const visit = (job: string) => {
    for (const need of _needs(workflow.jobs[job])) {
      if (!found.has(need)) {
        found.add(need);
        visit(need);
      }
    }
  };
  visit(name);
  return found;
}

const ADDRESS_CHECK = "Check the built-in service address";

Deno.test("release.yml checks the built-in service address first: every other job waits for it", () => {
  const job = RELEASE.jobs.address;
  assert.ok(job, "release.yml has an address job");
  assert.deepEqual(_needs(job), []);
  assert.equal(job.steps?.[0]?.name, ADDRESS_CHECK);
  const check = _step(RELEASE, "address", ADDRESS_CHECK);
  assert.equal(check.env?.SERVICE_DEFAULT_BASE_URL, "${{ vars.SERVICE_DEFAULT_BASE_URL }}");
  assert.equal(
    check.env?.ALLOW_NO_DEFAULT_ADDRESS,
    "${{ inputs.allow-no-default-address || false }}",
  );
  const input = (RELEASE.on.workflow_dispatch as {
    inputs?: Record<string, { type?: string; default?: unknown }>;
  }).inputs?.["allow-no-default-address"];
  assert.deepEqual([input?.type, input?.default], ["boolean", false]);
  for (const name of Object.keys(RELEASE.jobs).filter((name) => name !== "address")) {
    assert.ok(_ancestors(RELEASE, name).has("address"), `job ${name} waits for the address job`);
  }
  // The variable is read once, there; every job that bakes or states the address uses that.
  const text = Deno.readTextFileSync(join(WORKFLOWS, "release.yml"));
  assert.equal(text.match(/vars\.SERVICE_DEFAULT_BASE_URL/g)?.length, 1);
  for (const [name, job] of Object.entries(RELEASE.jobs)) {
    const uses = JSON.stringify(job.steps ?? []).includes("needs.address.outputs.address");
    if (uses) assert.ok(_needs(job).includes("address"), `job ${name} needs address directly`);
  }
});

toolTest(
  "release.yml's address check fails on an empty address unless allow-no-default-address says so",
  SH,
  async () => {
    const step = _step(RELEASE, "address", ADDRESS_CHECK);
    const run = (env: Record<string, string>) =>
      _runStep(step, { REF_TYPE: "tag", ALLOW_NO_DEFAULT_ADDRESS: "false", ...env });

    const empty = await run({ SERVICE_DEFAULT_BASE_URL: "" });
    assert.notEqual(empty.code, 0);
    assert.match(
      empty.stdout,
      /^::error::the repository variable SERVICE_DEFAULT_BASE_URL is empty.*allow-no-default-address/m,
    );
    assert.deepEqual(empty.outputs, {});

    const allowed = await run({ SERVICE_DEFAULT_BASE_URL: "", ALLOW_NO_DEFAULT_ADDRESS: "true" });
    assert.equal(allowed.code, 0, allowed.stdout + allowed.stderr);
    assert.match(allowed.stdout, /^::warning::this release has no built-in service address/m);
    assert.deepEqual(allowed.outputs, { address: "" });

    const set = await run({ SERVICE_DEFAULT_BASE_URL: "https://eval.example" });
    assert.equal(set.code, 0, set.stdout + set.stderr);
    assert.deepEqual(set.outputs, { address: "https://eval.example" });

    const injected = await run({ SERVICE_DEFAULT_BASE_URL: "https://eval.example\nx=y" });
    assert.notEqual(injected.code, 0);
    assert.deepEqual(injected.outputs, {});

    const branch = await run({
      SERVICE_DEFAULT_BASE_URL: "https://eval.example",
      REF_TYPE: "branch",
    });
    assert.notEqual(branch.code, 0);
    assert.match(branch.stdout, /on a version tag/);
  },
);

toolTest(
  "release.yml's release notes state the built-in service address, or that there is none",
  SH,
  async () => {
    const step = _step(RELEASE, "release", "Create the GitHub release");
    assert.equal(step.env?.DEFAULT_BASE_URL, "${{ needs.address.outputs.address }}");
    const env = {
      GITHUB_REF_NAME: "v1.2.3",
      GITHUB_REPOSITORY: "acme/service-ci",
      VERSION: "1.2.3",
      PRERELEASE: "false",
    };
    const withAddress = await _runStep(step, { ...env, DEFAULT_BASE_URL: "https://eval.example" });
    assert.equal(withAddress.code, 0, withAddress.stderr);
    assert.match(
      withAddress.calls[0] ?? "",
      / --notes Built-in service address: <https:\/\/eval\.example>\. .* --generate-notes /,
    );
    const without = await _runStep(step, { ...env, DEFAULT_BASE_URL: "" });
    assert.equal(without.code, 0, without.stderr);
    assert.match(without.calls[0] ?? "", / --notes This release has no built-in service address: /);
  },
);

Deno.test("release.yml attests the pushed image by the digest buildx reports", () => {
  const [attest] = _uses("attest-image", "actions/attest");
  assert.ok(attest, "the attest-image job attests the image");
  assert.equal(attest.with?.["subject-name"], "${{ needs.image.outputs.image }}");
  assert.equal(attest.with?.["subject-digest"], "${{ needs.image.outputs.digest }}");
  assert.equal(attest.with?.["push-to-registry"], true);
  // The image's storage record (artifact-metadata: write), as actions/attest makes by default.
  assert.equal(attest.with?.["create-storage-record"], undefined);
  assert.equal(_step(RELEASE, "image", "Build and push ci:<tag>").id, "push");
});

toolTest("release.yml derives the major tag v1 from v1.2.3", SH, async () => {
  const stable = await _derive("v1.2.3");
  assert.equal(stable.code, 0, stable.stdout + stable.stderr);
  assert.deepEqual(stable.outputs, { version: "1.2.3", major: "v1", prerelease: "false" });

  const candidate = await _derive("v1.3.0-rc.1");
  assert.deepEqual(candidate.outputs, { version: "1.3.0-rc.1", major: "v1", prerelease: "true" });

  const moved = await _derive("v1");
  assert.notEqual(moved.code, 0);
  assert.match(moved.stdout, /v1 is not a release tag/);
});

toolTest(
  "release.yml publishes every target's archive, SHA256SUMS and install.sh",
  SH,
  async () => {
    const step = _step(RELEASE, "release", "Create the GitHub release");
    assert.equal(step.env?.GH_TOKEN, "${{ secrets.GITHUB_TOKEN }}");
    const env = { GITHUB_REF_NAME: "v1.2.3", GITHUB_REPOSITORY: "acme/service-ci" };
    const run = await _runStep(step, { ...env, VERSION: "1.2.3", PRERELEASE: "false" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.calls.length, 1);
    const call = run.calls[0]!.split(" ");
    assert.deepEqual(call.slice(0, 4), ["gh", "release", "create", "v1.2.3"]);
    assert.ok(!call.includes("--prerelease"));
    // Exactly build.ts's targets: a target added there and not here fails this test.
    const archives = call.filter((arg) => /^dist\/service-ci-.*\.(?:tar\.gz|zip)$/.test(arg));
    assert.deepEqual(archives, TARGETS.map((target) => `dist/${archiveName("1.2.3", target)}`));
    assert.ok(call.includes(`dist/${sbomName("1.2.3")}`));
    assert.ok(call.includes("dist/SHA256SUMS"));
    assert.ok(call.includes("scripts/install.sh"));

    const candidate = await _runStep(step, {
      ...env,
      GITHUB_REF_NAME: "v1.3.0-rc.1",
      VERSION: "1.3.0-rc.1",
      PRERELEASE: "true",
    });
    assert.ok(candidate.calls[0]?.split(" ").includes("--prerelease"), candidate.calls[0]);
  },
);

toolTest("release.yml moves the major tag v1 to the released commit", SH, async () => {
  const step = _step(RELEASE, "major-tag", "Move the major tag");
  assert.equal(RELEASE.jobs["major-tag"]?.if, "needs.build.outputs.prerelease == 'false'");
  assert.equal(step.env?.MAJOR, "${{ needs.build.outputs.major }}");
  const major = (await _derive("v1.2.3")).outputs.major!;
  const sha = "0123456789abcdef0123456789abcdef01234567";
  const env = { GITHUB_REPOSITORY: "acme/service-ci", GITHUB_SHA: sha, MAJOR: major };

  const existing = await _runStep(step, { ...env, FAKE_GH_EXIT: "0" });
  assert.equal(existing.code, 0, existing.stderr);
  assert.deepEqual(existing.calls, [
    "gh api repos/acme/service-ci/git/ref/tags/v1",
    `gh api --method PATCH repos/acme/service-ci/git/refs/tags/v1 -f sha=${sha} -F force=true`,
  ]);

  const first = await _runStep(step, { ...env, FAKE_GH_EXIT: "1" });
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual(first.calls, [
    "gh api repos/acme/service-ci/git/ref/tags/v1",
    `gh api --method POST repos/acme/service-ci/git/refs -f ref=refs/tags/v1 -f sha=${sha}`,
  ]);
});

toolTest(
  "release.yml pushes the multi-arch image as ci:v1.2.3 (major-tag moves ci:v1)",
  SH,
  async () => {
    const step = _step(RELEASE, "image", "Build and push ci:<tag>");
    assert.equal(step.env?.REGISTRY, "${{ vars.IMAGE_REGISTRY }}");
    const env = {
      GITHUB_REF_NAME: "v1.2.3",
      GITHUB_ACTOR: "octocat",
      GITHUB_TOKEN: "not-a-real-token",
      REGISTRY: "ghcr.io/acme",
      VERSION: "1.2.3",
      SERVICE_DEFAULT_BASE_URL: "https://eval.example",
    };
    const stable = await _runStep(step, { ...env, PRERELEASE: "false" });
    assert.equal(stable.code, 0, stable.stderr);
    assert.equal(stable.calls[0], "docker login ghcr.io --username octocat --password-stdin");
    assert.match(
      stable.calls.at(-1) ?? "",
      new RegExp(
        "^docker buildx build --platform linux/amd64,linux/arm64 --build-arg VERSION=1\\.2\\.3 " +
          "--build-arg SERVICE_DEFAULT_BASE_URL=https://eval\\.example " +
          "--tag ghcr\\.io/acme/ci:v1\\.2\\.3 --metadata-file \\S+ --push \\.$",
      ),
    );
    // What the attestation step is given.
    assert.deepEqual(stable.outputs, { image: "ghcr.io/acme/ci", digest: IMAGE_DIGEST });

    const candidate = await _runStep(step, {
      ...env,
      GITHUB_REF_NAME: "v1.3.0-rc.1",
      VERSION: "1.3.0-rc.1",
      PRERELEASE: "true",
    });
    assert.ok(!candidate.calls.at(-1)?.includes("ci:v1 "), candidate.calls.at(-1));
    assert.ok(candidate.calls.at(-1)?.includes("--tag ghcr.io/acme/ci:v1.3.0-rc.1 "));

    const unset = await _runStep(step, { ...env, REGISTRY: "", PRERELEASE: "false" });
    assert.notEqual(unset.code, 0);
    assert.match(unset.stdout, /IMAGE_REGISTRY/);
  },
);

// A dist/npm/ as scripts/npm_packages.ts writes it: one directory per package.
async function _npmPackages(dir: string, names: readonly string[]): Promise<void> {
  for (const name of names) {
    const packageDir = join(dir, "dist", "npm", name.replace("@", "").replace("/", "-"));
    await Deno.mkdir(packageDir, { recursive: true });
    await Deno.writeTextFile(
      join(packageDir, "package.json"),
      JSON.stringify({ name, version: "1.2.3" }),
    );
  }
}

toolTest(
  "release.yml publishes the platform npm packages first, then service-ci, with provenance",
  { tools: ["sh", "node"], notOn: ["windows"] },
  async () => {
    const step = _step(RELEASE, "npm", "Publish the platform packages, then service-ci");
    // Trusted publishing (OIDC): no token, and no registry-url (its placeholder token).
    assert.equal(step.env?.NODE_AUTH_TOKEN, undefined);
    assert.doesNotMatch(JSON.stringify(RELEASE.jobs.npm), /NPM_TOKEN|registry-url/);
    const build = _step(RELEASE, "npm", "Build the npm packages from the release archives");
    assert.equal(build.run, "deno run -A scripts/npm_packages.ts --dist dist --out dist/npm");
    const names = ["@service-ci/linux-x64", "service-ci", "@service-ci/darwin-arm64"];

    const stable = await _runStep(
      step,
      { PRERELEASE: "false" },
      (dir) => _npmPackages(dir, names),
    );
    assert.equal(stable.code, 0, stable.stdout + stable.stderr);
    const published = stable.calls.map((call) => /^npm publish dist\/npm\/(\S+) /.exec(call)?.[1]);
    assert.deepEqual(published.toSorted(), [
      "service-ci",
      "service-ci-darwin-arm64",
      "service-ci-linux-x64",
    ]);
    assert.equal(published.at(-1), "service-ci");
    for (const call of stable.calls) {
      assert.match(call, / --provenance --access public --tag latest$/);
    }

    const candidate = await _runStep(
      step,
      { PRERELEASE: "true" },
      (dir) => _npmPackages(dir, names),
    );
    assert.equal(candidate.calls.length, 3);
    for (const call of candidate.calls) assert.match(call, / --tag next$/);

    const noMain = await _runStep(
      step,
      { PRERELEASE: "false" },
      (dir) => _npmPackages(dir, ["@service-ci/linux-x64"]),
    );
    assert.notEqual(noMain.code, 0);
    assert.match(noMain.stdout, /wrote no service-ci package/);
  },
);
