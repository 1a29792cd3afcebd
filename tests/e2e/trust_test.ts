/**
 * End to end: what a mistyped or hostile command line, a planted link or a pipe in the checkout
 * can do, through the real entry point with its real permissions. Each must end in exit 2 with
 * one line, nothing sent, no secret printed and nothing written outside the path given.
 */

import assert from "node:assert/strict";
import { AGENTS, KEYS, startFakeService } from "../support/fake_service.ts";
import { runProgram } from "../support/program.ts";

const GITHUB_TOKEN = "ghs_0123456789abcdefghijABCDEFGHIJklmnop";
const GITLAB_TOKEN = "glpat-ZyXwVuTsRqPoNmLkJiHg";

function env(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: url, ...extra };
}

Deno.test("an option that takes a value never takes --help or --version: exit 2, nothing printed on stdout, nothing sent", async () => {
  await using service = await startFakeService();
  for (
    const args of [
      ["--agent", AGENTS.passing, "--pr-comment-key", "--version"],
      ["--agent", AGENTS.passing, "--junit", "--help"],
      ["--agent", AGENTS.passing, "--junit", "-h"],
    ]
  ) {
    const result = await runProgram(args, { env: env(service.url) });
    assert.equal(result.code, 2, args.join(" "));
    assert.equal(result.stdout, "");
    assert.match(
      result.stderr,
      /^service-ci: --(pr-comment-key|junit) needs a value \([^)]+\), but the next argument "(--version|--help|-h)" looks like an option;/,
    );
  }
  assert.equal(service.requests.length, 0);
});

Deno.test("a forge token given by mistake as a value is masked in the usage error, from the environment or .env", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-trust-" });
  await Deno.writeTextFile(`${dir}/.env`, `SERVICE_GITLAB_TOKEN=${GITLAB_TOKEN}\n`);
  const cases: Array<[string[], Record<string, string>]> = [
    [["--agent", GITHUB_TOKEN], { GITHUB_TOKEN }],
    [["--agent", GITLAB_TOKEN], {}],
    [["--timeout-minutes", GITHUB_TOKEN, "--agent", AGENTS.passing], { GITHUB_TOKEN }],
    [[GITHUB_TOKEN], { GITHUB_TOKEN }],
    [["--agent", AGENTS.passing, "--base-url", `${"x".repeat(190)}${GITHUB_TOKEN}`], {
      GITHUB_TOKEN,
    }],
  ];
  for (const [args, extra] of cases) {
    const result = await runProgram(args, {
      env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: "https://service.example", ...extra },
      cwd: dir,
    });
    assert.equal(result.code, 2, result.stderr);
    const text = result.stdout + result.stderr;
    assert.ok(text.includes("***"), text);
    for (const secret of [GITHUB_TOKEN, GITLAB_TOKEN]) {
      assert.ok(!text.includes(secret.slice(0, 8)), `${args.join(" ")}: ${text}`);
    }
  }
});

Deno.test({
  name:
    "--junit onto a link planted in the checkout replaces the link, never the file it points to",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using service = await startFakeService();
    const dir = await Deno.makeTempDir({ prefix: "service-ci-trust-" });
    const outside = `${dir}/outside.txt`;
    await Deno.writeTextFile(outside, "not yours\n");
    await Deno.mkdir(`${dir}/checkout`);
    await Deno.symlink(outside, `${dir}/checkout/gate.xml`);
    const result = await runProgram(["--agent", AGENTS.passing, "--junit", "gate.xml"], {
      env: env(service.url),
      cwd: `${dir}/checkout`,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(await Deno.readTextFile(outside), "not yours\n");
    const info = await Deno.lstat(`${dir}/checkout/gate.xml`);
    assert.ok(info.isFile && !info.isSymlink, "the link itself was replaced by the report");
    assert.match(await Deno.readTextFile(`${dir}/checkout/gate.xml`), /<testsuites /);
    // Nothing else is left beside it.
    const names = [];
    for await (const entry of Deno.readDir(`${dir}/checkout`)) names.push(entry.name);
    assert.deepEqual(names, ["gate.xml"]);
  },
});

Deno.test({
  name: "a FIFO as --junit or GITHUB_EVENT_PATH never hangs: exit 2 before anything is sent",
  ignore: Deno.build.os === "windows",
  fn: async () => {
    await using service = await startFakeService();
    const dir = await Deno.makeTempDir({ prefix: "service-ci-trust-" });
    const mkfifo = await new Deno.Command("mkfifo", { args: [`${dir}/pipe`] }).output();
    assert.equal(mkfifo.code, 0);
    const junit = await runProgram(["--agent", AGENTS.passing, "--junit", "pipe"], {
      env: env(service.url),
      cwd: dir,
    });
    assert.equal(junit.code, 2, junit.stderr);
    assert.equal(
      junit.stderr,
      'service-ci: --junit "pipe" is a named pipe (FIFO), not a regular file: give it a writable file path (nothing was sent)\n',
    );
    const event = await runProgram(["--agent", AGENTS.passing], {
      env: env(service.url, {
        GITHUB_ACTIONS: "true",
        GITHUB_EVENT_NAME: "pull_request",
        GITHUB_EVENT_PATH: `${dir}/pipe`,
      }),
      cwd: dir,
    });
    assert.equal(event.code, 2, event.stderr);
    assert.match(
      event.stderr,
      /^service-ci: GITHUB_EVENT_PATH .* is a named pipe \(FIFO\), not a regular file/m,
    );
    assert.equal(service.requests.length, 0);
  },
});

Deno.test("a missing setting names a near-miss variable that is set (never its value) and which .env was read", async () => {
  const root = await Deno.makeTempDir({ prefix: "service-ci-trust-" });
  await Deno.mkdir(`${root}/sub`);
  await Deno.writeTextFile(
    `${root}/.env`,
    "SERVICE_AGENT_ID=0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10\n",
  );
  const fromSub = await runProgram(["--agent", AGENTS.passing, "--base-url", "https://x.example"], {
    env: { SERVICE_APIKEY: "sk_near_miss_value" },
    cwd: `${root}/sub`,
  });
  assert.equal(fromSub.code, 2);
  assert.match(
    fromSub.stderr,
    /^service-ci: SERVICE_API_KEY is not set: .* \(SERVICE_APIKEY is set: did you mean SERVICE_API_KEY\?; no \.env in .*\/sub; only the working directory's \.env is read, so run from the directory that holds it or pass --env-file\)\n$/,
  );
  assert.ok(!fromSub.stderr.includes("sk_near_miss_value"));
  const noAgent = await runProgram(["--base-url", "https://x.example"], {
    env: { SERVICE_API_KEY: KEYS.ci },
    cwd: `${root}/sub`,
  });
  assert.equal(noAgent.code, 2);
  assert.match(noAgent.stderr, /^service-ci: no agent given: .*\(no \.env in .*\/sub;/);
});

Deno.test("a base URL with the API path, or longer than any server takes, is exit 2 with nothing sent", async () => {
  await using service = await startFakeService();
  const withApi = await runProgram([
    "--agent",
    AGENTS.passing,
    "--base-url",
    `${service.url}/api/v1`,
  ], {
    env: { SERVICE_API_KEY: KEYS.ci },
  });
  assert.equal(withApi.code, 2);
  assert.match(
    withApi.stderr,
    /service-ci adds \/api\/v1 itself; give http:\/\/127\.0\.0\.1:\d+ \(got/,
  );
  const huge = await runProgram([
    "--agent",
    AGENTS.passing,
    "--base-url",
    `${service.url}/${"a".repeat(100_000)}`,
  ], {
    env: { SERVICE_API_KEY: KEYS.ci },
  });
  assert.equal(huge.code, 2);
  assert.ok(huge.stderr.length < 500, `${huge.stderr.length} characters`);
  assert.equal(service.requests.length, 0);
});

const PROXY_PASSWORD = "s3cret-PW";

Deno.test("no password from any address is printed: the Bitbucket proxy's, in a run and in --dry-run, and a schemeless --base-url's with its hint", async () => {
  await using service = await startFakeService();
  const bitbucket = {
    BITBUCKET_BUILD_NUMBER: "7",
    BITBUCKET_COMMIT: "c".repeat(40),
    BITBUCKET_REPO_FULL_NAME: "acme/widgets",
    SERVICE_BITBUCKET_PROXY: `http://builder:${PROXY_PASSWORD}@127.0.0.1:9`,
  };
  for (const dryRun of [[], ["--dry-run"]]) {
    const result = await runProgram(
      ["--agent", AGENTS.passing, "--commit-status", ...dryRun],
      { env: env(service.url, bitbucket) },
    );
    const text = result.stdout + result.stderr;
    assert.ok(!text.includes(PROXY_PASSWORD), text);
    assert.equal(result.code, 2, text);
    assert.equal(
      result.stderr.split("\n")[0],
      'service-ci: SERVICE_BITBUCKET_PROXY must not contain credentials: Bitbucket\'s pipeline proxy signs each request itself (got "http://***@127.0.0.1:9")',
    );
  }
  const schemeless = await runProgram(
    ["--agent", AGENTS.passing, "--base-url", `//user:${PROXY_PASSWORD}@eval.example`],
    { env: { SERVICE_API_KEY: KEYS.ci } },
  );
  assert.equal(schemeless.code, 2);
  assert.equal(
    schemeless.stderr,
    'service-ci: --base-url must be an https:// URL (http:// for loopback hosts) (got "//***@eval.example"; did you mean https://eval.example?)\n',
  );
  assert.equal(service.requests.length, 0);
});

Deno.test("a key that is a CI's unexpanded macro is refused before anything is sent, naming the secret to define", async () => {
  await using service = await startFakeService();
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ TF_BUILD: "True" }, "$(SERVICE_API_KEY)", /Azure Pipelines .*secret variable/],
    [{ GITHUB_ACTIONS: "true" }, "${{ secrets.SERVICE_API_KEY }}", /GitHub Actions .*secret/],
    [{ TEAMCITY_VERSION: "2024.1" }, "%env.SERVICE_API_KEY%", /TeamCity .*password parameter/],
    [{ GITLAB_CI: "true" }, "$SERVICE_API_KEY", /secret variable/],
    [{ JENKINS_URL: "https://jenkins.example" }, "${SERVICE_API_KEY}", /secret variable/],
  ];
  for (const [ci, key, fix] of cases) {
    const result = await runProgram(["--agent", AGENTS.passing, "--base-url", service.url], {
      env: { ...ci, SERVICE_API_KEY: key },
    });
    assert.equal(result.code, 2, `${key}: ${result.stderr}`);
    const [line, ...more] = result.stderr.split("\n").filter((l) => l.startsWith("service-ci:"));
    assert.deepEqual(more, [], result.stderr);
    assert.match(
      line!,
      /^service-ci: SERVICE_API_KEY is an? .* that was never (expanded|evaluated), not a key: .* \(nothing was sent\)$/,
    );
    assert.match(line!, fix);
    assert.match(line!, /SERVICE_API_KEY/);
  }
  assert.equal(service.requests.length, 0);
});
