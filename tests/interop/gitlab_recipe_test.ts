/**
 * Runs the GitLab recipe's `.gitlab-ci.yml` (docs/recipes/gitlab.md, section 2) as written with
 * the real gitlab-ci-local and its shell executor: a passing gate passes the job and a later job
 * reads the verdict, a failing gate fails the pipeline, and a merge request pipeline sends the
 * merge request's branch, head commit and iid.
 *
 * gitlab-ci-local is pinned to 4.60.1, the last release that starts on Node 20, with every
 * dependency, by tests/interop/gitlab-ci-local/package-lock.json. The test runs `$GITLAB_CI_LOCAL`
 * when set, else the copy .ci/run installs from that lock with `npm ci` into
 * `${XDG_CACHE_HOME:-$HOME/.cache}/service-ci/gitlab-ci-local`, else `gitlab-ci-local` on PATH.
 * gitlab-ci-local copies the checkout with rsync before any job, so rsync is needed too.
 */

import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "../support/command.ts";
import {
  defaultAgents,
  type FakeService,
  KEYS,
  startFakeService,
} from "../support/fake_service.ts";
import { MAIN, PERMISSIONS } from "../support/program.ts";
import { needsPart, needsTools, which } from "../support/tools.ts";
import { parseYaml } from "../support/yaml.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const GITLAB_CI_LOCAL_VERSION = "4.60.1";
const IMAGE = "ghcr.io/service-ci/ci:v1";
// gitlab-ci-local takes the project's path and CI_SERVER_URL from the remote, as GitLab has them.
const REMOTE = "https://gitlab.example.com/acme/platform/widgets.git";
const PROJECT = "acme/platform/widgets";
// GITLAB_USER_LOGIN is the local part of the committer's e-mail address.
const USER = { name: "Ada Lovelace", email: "ada@example.com", login: "ada" };

interface GitlabJob {
  readonly image?: string;
  readonly variables?: Readonly<Record<string, string>>;
}

/** The recipe's first YAML block: the `.gitlab-ci.yml` of section 2. */
function _recipeYaml(): string {
  const markdown = Deno.readTextFileSync(join(ROOT, "docs", "recipes", "gitlab.md"));
  const block = /^```yaml\n([\s\S]*?)^```$/m.exec(markdown)?.[1];
  assert.ok(block, "gitlab.md has a YAML block");
  assert.ok(
    block.startsWith("# .gitlab-ci.yml\n"),
    "gitlab.md's first YAML block is .gitlab-ci.yml",
  );
  return block;
}

const RECIPE = _recipeYaml();
const JOB = parseYaml<Record<string, GitlabJob>>(RECIPE, "gitlab.md's .gitlab-ci.yml")[
  "quality-gate"
];
// The recipe's own agent id: the fake service holds an agent of that id.
const AGENT = JOB?.variables?.SERVICE_AGENT_ID ?? "";
// Appended after the recipe: the later job its dotenv report promises variables to.
const LATER_JOB = `
later:
  stage: deploy
  script:
    - echo "later sees SERVICE_CI_PASSED=$SERVICE_CI_PASSED"
`;

/** Where gitlab-ci-local is: see the module's comment. */
function _gitlabCiLocal(): string | undefined {
  const fromEnv = Deno.env.get("GITLAB_CI_LOCAL");
  if (fromEnv !== undefined) return _isFile(fromEnv) ? fromEnv : undefined;
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? join(Deno.env.get("HOME") ?? "", ".cache");
  const installed = join(
    cache,
    "service-ci",
    "gitlab-ci-local",
    "node_modules",
    ".bin",
    "gitlab-ci-local",
  );
  return _isFile(installed) ? installed : which("gitlab-ci-local");
}

function _isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

function _quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A clean machine for one pipeline at a time: a HOME, a PATH whose service-ci is our program. */
interface Lab extends AsyncDisposable {
  readonly dir: string;
  readonly gitlabCiLocal: string;
  readonly env: Readonly<Record<string, string>>;
}

async function _lab(gitlabCiLocal: string): Promise<Lab> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-gitlab-" });
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  // The image's `service-ci`, here `deno run` of the checkout with deno.json's permissions.
  const command = [Deno.execPath(), "run", "--quiet", "--no-prompt", ...PERMISSIONS, MAIN];
  await Deno.writeTextFile(
    join(bin, "service-ci"),
    `#!/bin/sh\nexec ${command.map(_quote).join(" ")} "$@"\n`,
    { mode: 0o755 },
  );
  // A HOME of its own keeps the user's gitlab-ci-local variables and git config out; Deno's
  // cache stays where it is, so the program is not downloaded and compiled again.
  const denoDir = Deno.env.get("DENO_DIR") ??
    JSON.parse((await runCommand(Deno.execPath(), ["info", "--json"])).stdout).denoDir;
  const env = {
    PATH: [bin, Deno.env.get("PATH") ?? ""].join(delimiter),
    HOME: join(dir, "home"),
    DENO_DIR: denoDir,
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    GIT_CONFIG_NOSYSTEM: "1",
  };
  await Deno.mkdir(env.HOME);
  return {
    dir,
    gitlabCiLocal,
    env,
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function _git(lab: Lab, repo: string, args: readonly string[]): Promise<string> {
  const { code, stdout, stderr } = await runCommand("git", args, {
    cwd: repo,
    env: lab.env,
    clearEnv: true,
  });
  assert.equal(code, 0, `git ${args.join(" ")}: ${stderr}`);
  return stdout.trim();
}

/** A repository on `main` holding the recipe's file (and the later job), pushed to GitLab. */
async function _repository(lab: Lab, name: string): Promise<string> {
  const repo = join(lab.dir, name);
  await Deno.mkdir(repo);
  await _git(lab, repo, ["init", "-q", "-b", "main"]);
  await _git(lab, repo, ["config", "user.name", USER.name]);
  await _git(lab, repo, ["config", "user.email", USER.email]);
  await _git(lab, repo, ["remote", "add", "origin", REMOTE]);
  await Deno.writeTextFile(join(repo, ".gitlab-ci.yml"), RECIPE + LATER_JOB);
  await _git(lab, repo, ["add", ".gitlab-ci.yml"]);
  await _git(lab, repo, ["commit", "-q", "-m", "Gate on the agent"]);
  // CI_DEFAULT_BRANCH is origin/HEAD's branch.
  await _git(lab, repo, ["update-ref", "refs/remotes/origin/main", "HEAD"]);
  await _git(lab, repo, ["symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main"]);
  return repo;
}

/**
 * Runs the repository's pipeline with the shell executor; `variables` stand for the project's
 * CI/CD variables, which override the job's `variables:` as GitLab's do.
 */
async function _pipeline(
  lab: Lab,
  repo: string,
  variables: Readonly<Record<string, string>>,
  extraArgs: readonly string[] = [],
): Promise<{ code: number; log: string }> {
  const { code, stdout, stderr } = await runCommand(lab.gitlabCiLocal, [
    "--no-color",
    "--force-shell-executor",
    ...Object.entries(variables).flatMap(([name, value]) => ["--variable", `${name}=${value}`]),
    ...extraArgs,
  ], { cwd: repo, env: lab.env, clearEnv: true });
  return { code, log: stdout + stderr };
}

function _project(service: FakeService): Record<string, string> {
  return {
    SERVICE_API_KEY: KEYS.ci,
    SERVICE_BASE_URL: service.url,
    // gitlab-ci-local sets GITLAB_CI=false; GitLab's runners set true.
    GITLAB_CI: "true",
  };
}

function _setGate(service: FakeService, passes: boolean): void {
  const [passing, failing] = defaultAgents(50);
  service.setAgent({ ...(passes ? passing! : failing!), id: AGENT });
}

/** The `ci_metadata` of the last trigger, its `build_url` apart (it holds a random job id). */
function _lastMetadata(service: FakeService): Record<string, unknown> {
  const trigger = service.requestsOf("POST").at(-1);
  assert.ok(trigger, "the service was triggered");
  assert.equal(trigger.path, `/api/v1/agents/${AGENT}/runs`);
  const { build_url: buildUrl, ...metadata } = JSON.parse(trigger.body).ci_metadata;
  assert.match(
    buildUrl,
    new RegExp(`^https://gitlab\\.example\\.com/${PROJECT}/-/jobs/\\d+$`),
  );
  return metadata;
}

const GITLAB_CI_LOCAL = _gitlabCiLocal();
const NEEDS = needsTools({ tools: ["git", "rsync", "bash", "node"], notOn: ["windows"] });
const INSTALL_HINT =
  `npm ci --prefix ~/.cache/service-ci/gitlab-ci-local, from tests/interop/gitlab-ci-local/ (as .ci/run does)`;
const LOCAL = needsPart(
  GITLAB_CI_LOCAL === undefined ? "gitlab-ci-local not found" : null,
  INSTALL_HINT,
  `this test needs gitlab-ci-local (or GITLAB_CI_LOCAL=<path>)`,
);

Deno.test({
  name: `the GitLab recipe runs as written in gitlab-ci-local ${GITLAB_CI_LOCAL_VERSION}${
    NEEDS.ignore ? NEEDS.nameSuffix : LOCAL.nameSuffix
  }`,
  ignore: NEEDS.ignore || LOCAL.ignore,
  fn: async (t) => {
    NEEDS.assertFound();
    LOCAL.assertFound();
    assert.ok(GITLAB_CI_LOCAL !== undefined);
    assert.equal(JOB?.image, IMAGE);
    assert.match(AGENT, /^[0-9a-f-]{36}$/, "the recipe names an agent in SERVICE_AGENT_ID");
    await using lab = await _lab(GITLAB_CI_LOCAL);
    const version = await runCommand(lab.gitlabCiLocal, ["--version"], {
      env: lab.env,
      clearEnv: true,
    });
    assert.equal(
      version.stdout.trim(),
      GITLAB_CI_LOCAL_VERSION,
      `${GITLAB_CI_LOCAL}: ${version.stderr}`,
    );
    await using service = await startFakeService({ agents: [] });

    await t.step(
      "a passing gate on the default branch passes the job, and a later job reads the verdict",
      async () => {
        _setGate(service, true);
        const repo = await _repository(lab, "passing");
        const { code, log } = await _pipeline(lab, repo, _project(service));
        assert.equal(code, 0, log);
        assert.match(log, /PASS\s+quality-gate/);
        assert.match(log, /exit 0: 1 gate, 1 passed/);
        assert.match(log, /later\s+> later sees SERVICE_CI_PASSED=true/);
        assert.ok(!log.includes(KEYS.ci), log);
        assert.deepEqual(_lastMetadata(service), {
          commit_sha: await _git(lab, repo, ["rev-parse", "HEAD"]),
          branch: "main",
          pull_request_number: null,
          repository: PROJECT,
          actor: USER.login,
          provider: "gitlab",
        });
        const junit = await Deno.readTextFile(join(repo, "test-results", "service-ci.xml"));
        assert.match(junit, /<testcase /);
        assert.doesNotMatch(junit, /<failure/);
      },
    );

    await t.step("a failing gate fails the job, and gitlab-ci-local exits non-zero", async () => {
      _setGate(service, false);
      const repo = await _repository(lab, "failing");
      const { code, log } = await _pipeline(lab, repo, _project(service));
      assert.notEqual(code, 0, log);
      assert.match(log, /FAIL\s+quality-gate/);
      assert.match(log, /exit 1: 1 gate, 1 failed/);
      assert.doesNotMatch(log, /later sees/);
      // artifacts: when: always has its files to upload.
      const junit = await Deno.readTextFile(join(repo, "test-results", "service-ci.xml"));
      assert.match(junit, /<failure/);
      assert.match(
        await Deno.readTextFile(join(repo, "service-ci.env")),
        /^SERVICE_CI_PASSED=false$/m,
      );
    });

    await t.step(
      "a push to another branch runs no gate; its merge request pipelines send the MR's branch, head commit and iid",
      async () => {
        _setGate(service, true);
        const repo = await _repository(lab, "merge-request");
        await _git(lab, repo, ["checkout", "-q", "-b", "feature/login"]);
        await Deno.writeTextFile(join(repo, "login.txt"), "login\n");
        await _git(lab, repo, ["add", "login.txt"]);
        await _git(lab, repo, ["commit", "-q", "-m", "Log in"]);
        const head = await _git(lab, repo, ["rev-parse", "HEAD"]);
        const triggers = service.requestsOf("POST").length;

        const push = await _pipeline(lab, repo, _project(service));
        assert.equal(push.code, 0, push.log);
        assert.doesNotMatch(push.log, /quality-gate/);
        assert.equal(service.requestsOf("POST").length, triggers);

        // What GitLab sets in a merge request pipeline: no CI_COMMIT_BRANCH, and an empty source
        // SHA outside merged-results pipelines. CI_MERGE_REQUEST_ID is instance-wide, not the !42.
        const mergeRequest = {
          ..._project(service),
          CI_PIPELINE_SOURCE: "merge_request_event",
          CI_MERGE_REQUEST_IID: "42",
          CI_MERGE_REQUEST_ID: "98765",
          CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "feature/login",
          CI_MERGE_REQUEST_TARGET_BRANCH_NAME: "main",
          CI_MERGE_REQUEST_EVENT_TYPE: "detached",
          CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: "",
        };
        const expected = {
          commit_sha: head,
          branch: "feature/login",
          pull_request_number: 42,
          repository: PROJECT,
          actor: USER.login,
          provider: "gitlab",
        };
        const unsetBranch = ["--unset-variable", "CI_COMMIT_BRANCH"];
        const detached = await _pipeline(lab, repo, mergeRequest, unsetBranch);
        assert.equal(detached.code, 0, detached.log);
        assert.match(detached.log, /PASS\s+quality-gate/);
        assert.deepEqual(_lastMetadata(service), expected);

        // A merged-results pipeline checks out the merge with the target: CI_COMMIT_SHA is that
        // merge, the change's head is in CI_MERGE_REQUEST_SOURCE_BRANCH_SHA.
        await _git(lab, repo, ["checkout", "-q", "--detach", "main"]);
        await _git(lab, repo, [
          "merge",
          "-q",
          "--no-ff",
          "-m",
          "Merge feature/login",
          "feature/login",
        ]);
        assert.notEqual(await _git(lab, repo, ["rev-parse", "HEAD"]), head);
        const merged = await _pipeline(lab, repo, {
          ...mergeRequest,
          CI_MERGE_REQUEST_EVENT_TYPE: "merged_result",
          CI_MERGE_REQUEST_SOURCE_BRANCH_SHA: head,
          CI_COMMIT_REF_NAME: "feature/login",
        }, unsetBranch);
        assert.equal(merged.code, 0, merged.log);
        assert.match(merged.log, /PASS\s+quality-gate/);
        assert.deepEqual(_lastMetadata(service), expected);
      },
    );
  },
});
