/**
 * End to end: a `.env` in the checkout is someone else's input. In CI it is not read unless
 * `--env-file` names it, and no file ever gives more than service-ci's own `SERVICE_*` settings,
 * so a file cannot choose where the key or a forge token goes, nor make a gate pass.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENTS, KEYS, startFakeService } from "../support/fake_service.ts";
import { runProgram } from "../support/program.ts";

async function checkout(files: Record<string, string>): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-env-file-" });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
  return dir;
}

Deno.test("in CI the checkout's .env is not read: it can neither choose the address nor give a key", async () => {
  await using attacker = await startFakeService();
  const dir = await checkout({
    ".env": `SERVICE_BASE_URL=${attacker.url}\nSERVICE_API_KEY=${KEYS.ci}\n`,
  });
  for (const ci of [{ CI: "true" }, { GITHUB_ACTIONS: "true" }, { JENKINS_URL: "https://j" }]) {
    // The key from the job's secret, with the address left to the file: refused, nothing sent.
    const keyed = await runProgram(["--agent", AGENTS.passing], {
      env: { SERVICE_API_KEY: KEYS.ci, ...ci },
      cwd: dir,
    });
    assert.equal(keyed.code, 2, keyed.stderr);
    assert.match(
      keyed.stderr,
      /no service address: .*\(in CI \([A-Z_]+ is set\) the working directory's \.env is not read, as the checkout may be someone else's; pass --env-file \.env if it is yours\)\n$/,
    );
    // A fork's pull request with no secret: the file's own key and address never make a pass.
    const fork = await runProgram(["--agent", AGENTS.passing], { env: ci, cwd: dir });
    assert.equal(fork.code, 2, fork.stderr);
    assert.match(fork.stderr, /in CI \([A-Z_]+ is set\) the working directory.s \.env is not read/);
  }
  assert.equal(attacker.requests.length, 0);
});

Deno.test("outside CI the working directory's .env is still read, and the first line says the key and the address came from it", async () => {
  await using service = await startFakeService();
  const dir = await checkout({
    ".env": `SERVICE_BASE_URL=${service.url}\nSERVICE_API_KEY=${KEYS.ci}\n`,
  });
  const result = await runProgram(["--agent", AGENTS.passing], { cwd: dir });
  assert.equal(result.code, 0, result.stderr);
  const file = join(await Deno.realPath(dir), ".env");
  const first = result.stderr.split("\n")[0]!;
  assert.ok(first.includes(`address from ${file}, key from ${file})`), first);
  assert.ok(!result.stderr.includes(KEYS.ci));
  assert.equal(service.requestsOf("POST").length, 1);
});

Deno.test("--dry-run says where the key and the address each came from, never the key", async () => {
  const dir = await checkout({ "ci.env": `SERVICE_API_KEY=${KEYS.ci}\n` });
  const result = await runProgram(
    ["--agent", AGENTS.passing, "--base-url", "https://service.example", "--dry-run", "--json"],
    { env: { CI: "true" }, cwd: dir },
  );
  assert.equal(result.code, 2, "in CI, no file unless named");
  const named = await runProgram(
    [
      ...["--agent", AGENTS.passing, "--base-url", "https://service.example", "--dry-run"],
      ...["--json", "--env-file", "ci.env"],
    ],
    { env: { CI: "true" }, cwd: dir },
  );
  assert.equal(named.code, 0, named.stderr);
  assert.match(named.stderr, /; address from --base-url, key from ci\.env\n/);
  const document = JSON.parse(named.stdout);
  assert.equal(document.base_url_source, "--base-url");
  assert.equal(document.api_key_source, ".env");
  assert.equal(document.env_file, "ci.env");
  const fromEnv = await runProgram(
    ["--agent", AGENTS.passing, "--dry-run"],
    { env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: "https://service.example" } },
  );
  assert.match(fromEnv.stderr, /; address from SERVICE_BASE_URL, key from SERVICE_API_KEY\n/);
  for (const text of [named.stdout, named.stderr, fromEnv.stdout, fromEnv.stderr]) {
    assert.ok(!text.includes(KEYS.ci));
  }
});

Deno.test("a named file gives only SERVICE_* settings: a CI's variables, forge addresses and tokens, proxies and the CA are ignored, by name", async () => {
  await using service = await startFakeService();
  await using forge = await startFakeService();
  const dir = await checkout({});
  const outside = await Deno.makeTempDir({ prefix: "service-ci-outside-" });
  const token = "ghs_0123456789abcdefghijABCDEFGHIJklmnop";
  await Deno.writeTextFile(
    join(dir, "ci.env"),
    [
      "GITHUB_ACTIONS=true",
      `GITHUB_OUTPUT=${outside}/output`,
      `GITHUB_STEP_SUMMARY=${outside}/summary`,
      "TF_BUILD=True",
      `AGENT_TEMPDIRECTORY=${outside}`,
      `GITHUB_API_URL=${forge.url}`,
      `GITHUB_TOKEN=${token}`,
      `SERVICE_BITBUCKET_PROXY=${forge.url}`,
      `SERVICE_CA_CERT=${outside}/ca.pem`,
      "SERVICE_CI_ACTION=true",
      `SERVICE_API_KEY=${KEYS.ci}`,
      "",
    ].join("\n"),
  );
  const result = await runProgram(
    ["--agent", AGENTS.passing, "--env-file", "ci.env", "--pr-comment", "--commit-status"],
    { env: { SERVICE_BASE_URL: service.url, JENKINS_URL: "https://jenkins.example" }, cwd: dir },
  );
  assert.equal(result.code, 0, result.stderr);
  assert.match(
    result.stderr,
    /service-ci: warning: ci\.env sets [A-Z_, ]+, which a file never gives: only service-ci's own SERVICE_\* settings come from a file/,
  );
  const named = /ci\.env sets ([A-Z_, ]+), which/.exec(result.stderr)![1]!.split(", ");
  for (
    const name of [
      "GITHUB_ACTIONS",
      "GITHUB_OUTPUT",
      "GITHUB_STEP_SUMMARY",
      "TF_BUILD",
      "AGENT_TEMPDIRECTORY",
      "GITHUB_API_URL",
      "GITHUB_TOKEN",
      "SERVICE_BITBUCKET_PROXY",
      "SERVICE_CA_CERT",
      "SERVICE_CI_ACTION",
    ]
  ) assert.ok(named.includes(name), `${name} in ${named}`);
  assert.deepEqual([...Deno.readDirSync(outside)], [], "nothing written outside the workspace");
  assert.equal(forge.requests.length, 0, "the token never went to the file's forge address");
  assert.equal(service.requestsOf("POST").length, 1);
  assert.ok(!(result.stdout + result.stderr).includes(token.slice(0, 8)));
});

// A checkout whose .env, if it were read, would send the key elsewhere and shorten the wait.
async function plantedCheckout(attacker: string): Promise<string> {
  return await checkout({
    ".env": `SERVICE_BASE_URL=${attacker}\nSERVICE_TIMEOUT_MINUTES=5\n`,
  });
}

// Runs the program in `cwd` and returns its code, stdout and its stderr's lines.
async function runLines(args: string[], env: Record<string, string>, cwd: string) {
  const result = await runProgram(args, { env, cwd });
  return { ...result, lines: result.stderr.split("\n").filter((line) => line !== "") };
}

Deno.test("in CI by any variable the provider table knows (Jenkins without JENKINS_URL, GitHub's or GitLab's job variables without CI), the checkout's .env is not read and one line says so", async () => {
  await using attacker = await startFakeService();
  await using service = await startFakeService();
  const dir = await plantedCheckout(attacker.url);
  const builds: Array<[string, Record<string, string>]> = [
    ["BUILD_ID", { BUILD_ID: "17", JOB_NAME: "gate", JENKINS_HOME: "/var/jenkins_home" }],
    ["GITHUB_SHA", { GITHUB_SHA: "a".repeat(40), GITHUB_REPOSITORY: "acme/widgets" }],
    ["CI_COMMIT_SHA", { CI_COMMIT_SHA: "b".repeat(40), CI_PROJECT_PATH: "acme/widgets" }],
    ["GITLAB_CI", { GITLAB_CI: "false", CI_JOB_URL: "https://gitlab.example/acme/-/jobs/1" }],
  ];
  for (const [named, ci] of builds) {
    // The key from the job's secret, the address left to the file: refused, nothing sent.
    const keyed = await runLines(["--agent", AGENTS.passing], {
      SERVICE_API_KEY: KEYS.ci,
      ...ci,
    }, dir);
    assert.equal(keyed.code, 2, keyed.stderr);
    assert.equal(keyed.lines.length, 1, keyed.stderr);
    assert.match(
      keyed.lines[0]!,
      new RegExp(
        `^service-ci: no service address: .*\\(in CI \\(${named} is set\\) the working directory's \\.env is not read, as the checkout may be someone else's; pass --env-file \\.env if it is yours\\)$`,
      ),
    );
    // With the address given, the file's timeout is not taken either, and one line says why.
    const run = await runLines(["--agent", AGENTS.passing, "--base-url", service.url], {
      SERVICE_API_KEY: KEYS.ci,
      ...ci,
    }, dir);
    assert.equal(run.code, 0, run.stderr);
    const warnings = run.lines.filter((line) => line.includes(".env"));
    assert.deepEqual(warnings, [
      `service-ci: warning: in CI (${named} is set) the working directory's .env is not read, as the checkout may be someone else's; pass --env-file .env if it is yours`,
    ]);
    assert.ok(run.lines.some((line) => line.includes("timeout 30 min")), run.stderr);
  }
  assert.equal(attacker.requests.length, 0);
});

// A checkout whose .env is tracked by git: `git add` is enough, as a commit holds what the index
// holds.
async function committedCheckout(files: Record<string, string>): Promise<string> {
  const dir = await checkout(files);
  for (const args of [["init", "--quiet"], ["add", ".env"]]) {
    const git = await new Deno.Command("git", { args, cwd: dir, stdout: "null" }).output();
    assert.equal(git.code, 0, `git ${args.join(" ")}`);
  }
  return dir;
}

Deno.test("a .env committed to git decides nothing on its own, outside CI too: its address and key are used only when --env-file names it", async () => {
  await using attacker = await startFakeService();
  await using service = await startFakeService();
  const dir = await committedCheckout({
    ".env": `SERVICE_BASE_URL=${attacker.url}\nSERVICE_API_KEY=${KEYS.ci}\nOTHER=1\n`,
  });
  const file = join(await Deno.realPath(dir), ".env");
  const notUsed =
    `${file} is tracked by git, so whoever can push to the branch wrote it: its SERVICE_BASE_URL and SERVICE_API_KEY are not used; pass --env-file .env if you trust it`;
  // The key from the environment never goes to the file's address.
  const keyed = await runLines(["--agent", AGENTS.passing], { SERVICE_API_KEY: KEYS.ci }, dir);
  assert.equal(keyed.code, 2, keyed.stderr);
  assert.equal(keyed.lines.length, 1, keyed.stderr);
  assert.ok(keyed.lines[0]!.startsWith("service-ci: no service address: "), keyed.stderr);
  assert.ok(keyed.lines[0]!.endsWith(`(${notUsed})`), keyed.stderr);
  // The file's key never makes a pass on the service given.
  const unkeyed = await runLines(["--agent", AGENTS.passing, "--base-url", service.url], {}, dir);
  assert.equal(unkeyed.code, 2, unkeyed.stderr);
  assert.match(unkeyed.lines[0]!, /^service-ci: SERVICE_API_KEY is not set: /);
  assert.ok(unkeyed.lines[0]!.endsWith(`(${notUsed})`), unkeyed.stderr);
  // Everything given elsewhere: the run goes on, with one line naming what was not used.
  const run = await runLines(["--agent", AGENTS.passing, "--base-url", service.url], {
    SERVICE_API_KEY: KEYS.ci,
  }, dir);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(run.lines.filter((line) => line.includes(".env")), [
    `service-ci: warning: ${notUsed}`,
  ]);
  assert.equal(attacker.requests.length, 0);
  // Named, it is used like any file.
  const named = await runLines(["--agent", AGENTS.passing, "--env-file", ".env"], {}, dir);
  assert.equal(named.code, 0, named.stderr);
  assert.equal(attacker.requestsOf("POST").length, 1);
  assert.ok(!named.stderr.includes("tracked"), named.stderr);
});

Deno.test("an untracked .env in a git checkout stays the local convenience", async () => {
  await using service = await startFakeService();
  const dir = await committedCheckout({ ".env": "OTHER=1\n" });
  const args = ["rm", "--quiet", "--cached", ".env"];
  assert.equal((await new Deno.Command("git", { args, cwd: dir }).output()).code, 0);
  await Deno.writeTextFile(
    join(dir, ".env"),
    `SERVICE_BASE_URL=${service.url}\nSERVICE_API_KEY=${KEYS.ci}\n`,
  );
  const run = await runLines(["--agent", AGENTS.passing], {}, dir);
  assert.equal(run.code, 0, run.stderr);
  const file = join(await Deno.realPath(dir), ".env");
  assert.ok(run.lines[0]!.includes(`address from ${file}, key from ${file})`), run.stderr);
  assert.ok(!run.stderr.includes("warning"), run.stderr);
});
