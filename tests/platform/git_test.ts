import assert from "node:assert/strict";
import { join } from "node:path";
import { detectCiBuild } from "../../src/ci/detect.ts";

const detectCiMetadata = async (...args: Parameters<typeof detectCiBuild>) =>
  (await detectCiBuild(...args)).metadata;
import { runGit, type RunGitOptions } from "../../src/platform/git.ts";
import { systemClock } from "../../src/platform/clock.ts";
import { FakeTime } from "../support/fake_time.ts";

const TOKEN = "ghp_s3cr3tT0ken";

/** Runs a git command that changes the test repository (runGit refuses those). */
async function git(cwd: string, ...args: string[]): Promise<string> {
  const { success, stdout, stderr } = await new Deno.Command("git", {
    args: ["-c", "user.name=Test", "-c", "user.email=test@example.test", ...args],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (!success) throw new Error(`git ${args.join(" ")}: ${decoder.decode(stderr)}`);
  return decoder.decode(stdout).trim();
}

/** A repository on `main` with two commits and an origin whose URL carries a token. */
async function makeRepository(): Promise<{ path: string } & AsyncDisposable> {
  const path = await Deno.makeTempDir({ prefix: "service_ci_git_" });
  await git(path, "init", "--quiet", "--initial-branch=main");
  await git(path, "commit", "--quiet", "--allow-empty", "--no-gpg-sign", "-m", "first");
  await git(path, "commit", "--quiet", "--allow-empty", "--no-gpg-sign", "-m", "second");
  await git(
    path,
    "remote",
    "add",
    "origin",
    `https://octocat:${TOKEN}@github.com/acme/widgets.git`,
  );
  return { path, [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }) };
}

// The bound of a real run, on real time: these tests' git answers at once.
const BOUND: RunGitOptions = {
  timeoutMs: 10_000,
  signal: new AbortController().signal,
  clock: systemClock,
};

function localGit(cwd: string) {
  return (args: readonly string[]) => runGit(args, { ...BOUND, cwd });
}

Deno.test("runGit() answers the read-only commands with trimmed stdout", async () => {
  await using repository = await makeRepository();
  const cwd = repository.path;
  const head = await runGit(["rev-parse", "HEAD"], { ...BOUND, cwd });
  assert.match(head ?? "", /^[0-9a-f]{40}$/);
  assert.equal(head, await git(cwd, "rev-parse", "HEAD"));
  assert.equal(await runGit(["symbolic-ref", "--short", "HEAD"], { ...BOUND, cwd }), "main");
  assert.equal(
    await runGit(["remote", "get-url", "origin"], { ...BOUND, cwd }),
    `https://octocat:${TOKEN}@github.com/acme/widgets.git`,
  );
});

Deno.test("runGit() resolves undefined when git exits non-zero", async () => {
  await using repository = await makeRepository();
  // The second commit has one parent: there is no HEAD^2.
  assert.equal(
    await runGit(["rev-parse", "HEAD^2"], { ...BOUND, cwd: repository.path }),
    undefined,
  );
});

Deno.test("runGit() resolves undefined when it cannot start git at all", async () => {
  const missing = `${await Deno.makeTempDir()}/gone`;
  assert.equal(await runGit(["rev-parse", "HEAD"], { ...BOUND, cwd: missing }), undefined);
});

Deno.test("runGit() refuses a command that could change the repository", async () => {
  await using repository = await makeRepository();
  const cwd = repository.path;
  for (const args of [["remote", "add", "x", "y"], ["symbolic-ref", "HEAD", "refs/heads/x"], []]) {
    await assert.rejects(runGit(args, { ...BOUND, cwd }), TypeError);
  }
  assert.equal(await git(cwd, "remote"), "origin");
  assert.equal(await git(cwd, "symbolic-ref", "--short", "HEAD"), "main");
});

Deno.test("detectCiMetadata() reads commit, branch and slug from a local checkout", async () => {
  await using repository = await makeRepository();
  const metadata = await detectCiMetadata({}, { git: localGit(repository.path) });
  assert.deepStrictEqual(metadata, {
    commit_sha: await git(repository.path, "rev-parse", "HEAD"),
    branch: "main",
    pull_request_number: null,
    repository: "acme/widgets",
    actor: null,
    provider: "local",
    build_url: null,
  });
  assert.ok(!JSON.stringify(metadata).includes(TOKEN));
});

Deno.test("detectCiMetadata() gives a detached local checkout no branch", async () => {
  await using repository = await makeRepository();
  await git(repository.path, "checkout", "--quiet", "--detach", "HEAD~1");
  const metadata = await detectCiMetadata({}, { git: localGit(repository.path) });
  assert.deepStrictEqual(metadata, {
    commit_sha: await git(repository.path, "rev-parse", "HEAD~0"),
    branch: null,
    pull_request_number: null,
    repository: "acme/widgets",
    actor: null,
    provider: "local",
    build_url: null,
  });
});

Deno.test("detectCiMetadata() applies the Jenkins HEAD^2 rule to a real merge", async () => {
  await using repository = await makeRepository();
  const cwd = repository.path;
  await git(cwd, "checkout", "--quiet", "-b", "feature/login");
  await git(cwd, "commit", "--quiet", "--allow-empty", "--no-gpg-sign", "-m", "change");
  const head = await git(cwd, "rev-parse", "HEAD");
  await git(cwd, "checkout", "--quiet", "main");
  await git(cwd, "merge", "--quiet", "--no-ff", "--no-gpg-sign", "-m", "merge", "feature/login");
  const merge = await git(cwd, "rev-parse", "HEAD");
  const metadata = await detectCiMetadata(
    {
      JENKINS_URL: "https://ci.acme.test/",
      GIT_COMMIT: merge,
      CHANGE_ID: "24",
      CHANGE_BRANCH: "feature/login",
    },
    { git: localGit(cwd) },
  );
  assert.equal(metadata.commit_sha, head);
  assert.notEqual(head, merge);
});

Deno.test("detectCiMetadata() gives nulls outside any git repository", async () => {
  const directory = await Deno.makeTempDir({ prefix: "service_ci_nogit_" });
  try {
    const metadata = await detectCiMetadata({}, { git: localGit(directory) });
    assert.deepStrictEqual(metadata, {
      commit_sha: null,
      branch: null,
      pull_request_number: null,
      repository: null,
      actor: null,
      provider: "local",
      build_url: null,
    });
  } finally {
    await Deno.remove(directory, { recursive: true });
  }
});

// A `git` first on PATH that records its pid, then never answers; PATH is put back after.
async function withHangingGit(test: (pids: () => Promise<number[]>) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "service_ci_hanging_git_" });
  const path = Deno.env.get("PATH") ?? "";
  await Deno.writeTextFile(
    join(dir, "git"),
    `#!/bin/sh\necho $$ >> "${join(dir, "pids")}"\nexec sleep 600\n`,
    { mode: 0o755 },
  );
  const pids = async () =>
    (await Deno.readTextFile(join(dir, "pids")).catch(() => "")).split("\n").filter(Boolean)
      .map(Number);
  try {
    Deno.env.set("PATH", `${dir}:${path}`);
    await test(pids);
  } finally {
    Deno.env.set("PATH", path);
    for (const pid of await pids()) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch {
        // Stopped already.
      }
    }
    await Deno.remove(dir, { recursive: true });
  }
}

function assertEnded(pid: number): void {
  assert.throws(() => Deno.kill(pid, "SIGKILL"), `git ${pid} is still running`);
}

Deno.test({
  name: "runGit() stops a git that never answers once its bound passes on the run's clock",
  ignore: Deno.build.os === "windows",
  fn: () =>
    withHangingGit(async (pids) => {
      const started = performance.now();
      const time = new FakeTime();
      const commit = await runGit(["rev-parse", "HEAD"], { ...BOUND, clock: time });
      assert.equal(commit, undefined);
      assert.equal(time.monotonic() >= BOUND.timeoutMs, true);
      assert.ok(performance.now() - started < 5_000, `${performance.now() - started} ms`);
      for (const pid of await pids()) assertEnded(pid);
    }),
});

Deno.test({
  name: "runGit() stops a git that never answers at once when the interrupt comes",
  ignore: Deno.build.os === "windows",
  fn: () =>
    withHangingGit(async (pids) => {
      const interrupt = new AbortController();
      const started = performance.now();
      const commit = runGit(["rev-parse", "HEAD"], {
        timeoutMs: 600_000,
        signal: interrupt.signal,
        clock: systemClock,
      });
      while ((await pids()).length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
      interrupt.abort(new Error("interrupted by SIGTERM"));
      assert.equal(await commit, undefined);
      assert.ok(performance.now() - started < 5_000, `${performance.now() - started} ms`);
      for (const pid of await pids()) assertEnded(pid);
    }),
});
