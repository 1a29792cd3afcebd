import assert from "node:assert/strict";
import {
  loadConfig,
  mergeEnv,
  parseEnvFile,
  refusedReadError,
  resolveConfig,
  secretValues,
} from "../../src/config/load.ts";
import { parseCommandLine } from "../../src/config/command_line.ts";
import { UsageError } from "../../src/config/errors.ts";
import { CI_ENV_VARIABLES } from "../../src/ci/detect.ts";
import type { Flags } from "../../src/config/options.ts";
import { OPTIONS } from "../../src/config/options.ts";
import { run } from "../../src/run.ts";
import { AGENT, harness } from "../support/run_harness.ts";
import { FETCH_BLOCKED_PORTS } from "../../src/config/values.ts";

const all = () => true;

Deno.test("refusedReadError() names each required variable that is unset because it was refused", () => {
  const error = refusedReadError({}, {}, all, undefined);
  assert.ok(error instanceof UsageError);
  assert.match(
    error.message,
    /^SERVICE_API_KEY, SERVICE_AGENT_ID and SERVICE_BASE_URL cannot be read: Deno's permissions do not grant them \(--allow-env\)/,
  );
  assert.ok(!error.message.includes("not set"));
});

Deno.test("refusedReadError() leaves out what a flag, .env or the built-in default gives", () => {
  const flags = { agents: [AGENT], baseUrl: "https://x.example" };
  assert.match(refusedReadError(flags, {}, all, undefined)!.message, /^SERVICE_API_KEY cannot/);
  assert.equal(refusedReadError(flags, { SERVICE_API_KEY: "sk_from_dotenv" }, all), undefined);
  assert.match(
    refusedReadError({ agents: [AGENT] }, {}, all, "https://default.example")!.message,
    /^SERVICE_API_KEY cannot be read: Deno's permissions do not grant it/,
  );
  assert.equal(refusedReadError({}, {}, () => false, undefined), undefined);
  assert.equal(refusedReadError({}, {}, undefined, undefined), undefined);
});

Deno.test("loadConfig() says a refused key was refused, never that it is not set", async () => {
  const deps = {
    env: () => undefined,
    readTextFile: () => Promise.reject(new Deno.errors.NotFound("no .env")),
    git: () => Promise.resolve(undefined),
    ciVariables: CI_ENV_VARIABLES,
  };
  const flags = { agents: [AGENT], baseUrl: "https://x.example" };
  await assert.rejects(
    loadConfig(flags, ["SERVICE_API_KEY"], {
      ...deps,
      envRefused: (name) => name === "SERVICE_API_KEY",
    }),
    /^UsageError: SERVICE_API_KEY cannot be read: .*--allow-env/,
  );
  await assert.rejects(loadConfig(flags, ["SERVICE_API_KEY"], deps), /SERVICE_API_KEY is not set/);
});

// loadConfig()'s effects over a working directory holding `files`, with `env` and a git that
// tracks `tracked`; what it read and asked is recorded.
function _workingDirectory(
  files: Record<string, string>,
  options: { env?: Record<string, string>; tracked?: string[] } = {},
) {
  const read: string[] = [];
  const asked: string[][] = [];
  const secrets: string[] = [];
  const deps = {
    env: (name: string) => options.env?.[name],
    readTextFile: (path: string) => {
      read.push(path);
      const text = files[path];
      return text === undefined
        ? Promise.reject(new Deno.errors.NotFound(path))
        : Promise.resolve(text);
    },
    git: (args: readonly string[]) => {
      asked.push([...args]);
      const path = args.at(-1)!;
      return Promise.resolve(options.tracked?.includes(path) ? path : undefined);
    },
    addSecret: (secret: string) => void secrets.push(secret),
    cwd: "/repo",
    ciVariables: CI_ENV_VARIABLES,
  };
  return { deps, read, asked, secrets };
}

const PLANTED = "SERVICE_BASE_URL=https://attacker.example\nSERVICE_TIMEOUT_MINUTES=5\n";
const NAMES = ["SERVICE_API_KEY", "SERVICE_BASE_URL", "SERVICE_TIMEOUT_MINUTES", "CI"];
const KEYED = { agents: [AGENT], baseUrl: "https://service.example" };

Deno.test("loadConfig() uses no working directory's .env in CI by any variable the providers' table knows, and says so in one line", async () => {
  const builds: Array<[string, Record<string, string>]> = [
    ["CI", { CI: "false" }],
    ["BUILD_ID", { BUILD_ID: "17" }],
    ["GITHUB_SHA", { GITHUB_SHA: "a".repeat(40) }],
    ["CI_PROJECT_PATH", { CI_PROJECT_PATH: "acme/widgets" }],
    ["GITLAB_CI", { GITLAB_CI: "false" }],
  ];
  for (const [named, ci] of builds) {
    const { deps, asked } = _workingDirectory({ ".env": PLANTED }, {
      env: { SERVICE_API_KEY: "sk_env_key", ...ci },
    });
    const names = [...NAMES, ...Object.keys(ci)];
    const { config, warning } = await loadConfig(KEYED, names, deps);
    assert.equal(config.timeoutMinutes, 30, named);
    assert.equal(config.envFileRead, undefined);
    assert.equal(
      warning,
      `in CI (${named} is set) the working directory's .env is not read, as the checkout may be someone else's; pass --env-file .env if it is yours`,
    );
    assert.deepEqual(asked, [], "no git in CI");
    // A required setting the file would have given: the refusal says why, in its one line.
    await assert.rejects(
      loadConfig({ agents: [AGENT] }, names, deps),
      (error: Error) =>
        error instanceof UsageError && error.message.startsWith("no service address: ") &&
        error.message.endsWith(`(${warning})`),
    );
  }
  // Without a .env there is nothing to say; a missing setting still says where to name one.
  const { deps } = _workingDirectory({}, { env: { SERVICE_API_KEY: "k", BUILD_ID: "17" } });
  assert.equal((await loadConfig(KEYED, [...NAMES, "BUILD_ID"], deps)).warning, undefined);
  await assert.rejects(
    loadConfig({ agents: [AGENT] }, [...NAMES, "BUILD_ID"], deps),
    /\(in CI \(BUILD_ID is set\) the working directory's \.env is not read, .*; name a file with --env-file\)$/,
  );
});

Deno.test("loadConfig() uses a .env git tracks only when --env-file names it, naming what it did not use", async () => {
  const text = `${PLANTED}SERVICE_API_KEY=sk_committed_key\nOTHER=1\n`;
  const tracked = _workingDirectory({ ".env": text }, {
    env: { SERVICE_API_KEY: "sk_env_key" },
    tracked: [".env"],
  });
  const { config, warning } = await loadConfig(KEYED, NAMES, tracked.deps);
  assert.deepEqual(tracked.asked, [["ls-files", "--error-unmatch", "--", ".env"]]);
  assert.equal(config.timeoutMinutes, 30);
  assert.equal(config.apiKey, "sk_env_key");
  assert.equal(config.envFileRead, undefined);
  assert.equal(
    warning,
    "/repo/.env is tracked by git, so whoever can push to the branch wrote it: its SERVICE_BASE_URL, SERVICE_TIMEOUT_MINUTES and SERVICE_API_KEY are not used; pass --env-file .env if you trust it",
  );
  assert.ok(tracked.secrets.includes("sk_committed_key"), "masked all the same");
  // Named, it is used, tracked or not.
  const named = _workingDirectory({ ".env": text }, { tracked: [".env"] });
  const used = await loadConfig({ ...KEYED, envFile: ".env" }, NAMES, named.deps);
  assert.equal(used.config.timeoutMinutes, 5);
  assert.equal(used.config.apiKey, "sk_committed_key");
  assert.equal(used.warning, undefined);
  assert.deepEqual(named.asked, []);
  // Untracked: the local convenience.
  const untracked = _workingDirectory({ ".env": text });
  const local = await loadConfig(KEYED, NAMES, untracked.deps);
  assert.equal(local.config.timeoutMinutes, 5);
  assert.equal(local.config.envFileRead, "/repo/.env");
  assert.equal(local.warning, undefined);
  // A tracked file that sets none of service-ci's settings is not worth a line.
  const unrelated = _workingDirectory({ ".env": "OTHER=1\n" }, { tracked: [".env"] });
  assert.equal(
    (await loadConfig({ ...KEYED }, ["SERVICE_API_KEY"], {
      ...unrelated.deps,
      env: (name) => ({ SERVICE_API_KEY: "k" })[name],
    })).warning,
    undefined,
  );
});

const A = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const B = "1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21";
const ENV = { SERVICE_API_KEY: "sk_test_key", SERVICE_BASE_URL: "https://service.example" };

// The metadata overrides run() hands detection: the five options that are set.
function _overrides(config: Record<string, unknown>): Record<string, unknown> {
  const keys = ["commitSha", "branch", "pullRequest", "repository", "actor"];
  return Object.fromEntries(
    keys.flatMap((key) => config[key] === undefined ? [] : [[key, config[key]]]),
  );
}

function flags(args: string[]): Flags {
  const invocation = parseCommandLine(args);
  assert.equal(invocation.kind, "run");
  return invocation.kind === "run" ? invocation.flags : {};
}

function usageError(args: string[], env: Record<string, string>, message: RegExp): void {
  assert.throws(() => resolveConfig(flags(args), env), (error: unknown) => {
    assert.ok(error instanceof UsageError, String(error));
    assert.match(error.message, message);
    assert.ok(!error.message.includes("\n"), "one line");
    return true;
  });
}

Deno.test("--agent with a comma says to give --agent once per agent; SERVICE_AGENT_ID splits on commas", () => {
  usageError(
    ["--agent", `${A},${B}`],
    ENV,
    /^--agent takes one agent UUID; give --agent once per agent \(got "0b0c4a5e-.*,1c1d5b6f-.*"\)$/,
  );
  assert.deepEqual(resolveConfig(flags([]), { ...ENV, SERVICE_AGENT_ID: `${A},${B}` }).agents, [
    A,
    B,
  ]);
});

Deno.test("a huge bad value is quoted to 200 characters and its length", () => {
  const huge = "9".repeat(100_000);
  assert.throws(
    () => resolveConfig(flags(["--agent", A, "--timeout-minutes", huge]), ENV),
    (error: unknown) => {
      assert.ok(error instanceof UsageError);
      assert.ok(error.message.length < 400, `${error.message.length} characters`);
      assert.match(error.message, /\(got "9{199}…" \(100000 characters\)\)$/);
      return true;
    },
  );
});

Deno.test("resolveConfig() reads each switch from its flag, else its variable, else the default", () => {
  assert.equal(resolveConfig(flags(["--agent", A]), ENV).ciNative, true);
  assert.equal(resolveConfig(flags(["--agent", A]), ENV).prComment, false);
  const off = { ...ENV, SERVICE_CI_NATIVE: "off", SERVICE_PR_COMMENT: "Yes" };
  assert.equal(resolveConfig(flags(["--agent", A]), off).ciNative, false);
  assert.equal(resolveConfig(flags(["--agent", A]), off).prComment, true);
  // The flag wins, and the variable is then not read at all.
  const bad = { ...ENV, SERVICE_CI_NATIVE: "maybe", SERVICE_PR_COMMENT: "maybe" };
  const config = resolveConfig(flags(["--agent", A, "--no-ci-native", "--pr-comment"]), bad);
  assert.equal(config.ciNative, false);
  assert.equal(config.prComment, true);
  usageError(["--agent", A], bad, /^SERVICE_CI_NATIVE must be true or false \(also 1\/0/);
  const key = { ...ENV, SERVICE_PR_COMMENT_KEY: " leg-1 ", SERVICE_CA_CERT: "ca.pem" };
  assert.equal(resolveConfig(flags(["--agent", A]), key).prCommentKey, "leg-1");
  assert.equal(resolveConfig(flags(["--agent", A]), key).caCert, "ca.pem");
  assert.equal(resolveConfig(flags(["--agent", A, "--ca-cert", "x.pem"]), key).caCert, "x.pem");
});

Deno.test("resolveConfig() reads the documented defaults", () => {
  const config = resolveConfig(flags(["--agent", A]), ENV);
  assert.deepEqual(config.agents, [A]);
  assert.equal(config.baseUrl.href, "https://service.example/");
  assert.equal(config.timeoutMinutes, OPTIONS.timeoutMinutes.default);
  assert.equal(config.timeoutMinutes, 30);
  assert.equal(config.requestTimeoutSeconds, 30);
  assert.equal(config.maxPollIntervalSeconds, 10);
  assert.equal(config.json, false);
  assert.equal(config.junit, undefined);
  assert.deepEqual(_overrides(config), {});
  assert.ok(Object.isFrozen(config));
  assert.equal(config.sources.timeoutMinutes, "default");
  assert.equal(config.sources.agents, "--agent");
  assert.equal(config.sources.junit, "unset");
});

Deno.test("resolveConfig() takes the flag over the environment", () => {
  const env = {
    ...ENV,
    SERVICE_AGENT_ID: B,
    SERVICE_TIMEOUT_MINUTES: "5",
    SERVICE_BASE_URL: "https://env.example",
  };
  const config = resolveConfig(
    flags(["--agent", A, "--timeout-minutes", "0.5", "--base-url", "https://flag.example/eval/"]),
    env,
  );
  assert.deepEqual(config.agents, [A]);
  assert.equal(config.timeoutMinutes, 0.5);
  assert.equal(config.baseUrl.href, "https://flag.example/eval/");
  const fromEnv = resolveConfig(flags([]), env);
  assert.deepEqual(fromEnv.agents, [B]);
  assert.equal(fromEnv.timeoutMinutes, 5);
  assert.equal(fromEnv.sources.timeoutMinutes, "SERVICE_TIMEOUT_MINUTES");
  assert.equal(fromEnv.baseUrl.host, "env.example");
});

Deno.test("mergeEnv() lets a set variable win over .env, and .env fill an unset or empty one", async () => {
  const dotenv = await parseEnvFile(
    'SERVICE_API_KEY=from_file\nSERVICE_AGENT_ID="a,b"\nSERVICE_BASE_URL=https://file.example # comment\nOTHER=x\n',
  );
  const process: Record<string, string> = { SERVICE_API_KEY: "from_env", SERVICE_AGENT_ID: "" };
  const merged = mergeEnv(
    ["SERVICE_API_KEY", "SERVICE_AGENT_ID", "SERVICE_BASE_URL", "SERVICE_TIMEOUT_MINUTES"],
    (name) => process[name],
    dotenv,
  );
  assert.deepEqual(merged, {
    SERVICE_API_KEY: "from_env",
    SERVICE_AGENT_ID: "a,b",
    SERVICE_BASE_URL: "https://file.example",
    SERVICE_TIMEOUT_MINUTES: undefined,
  });
  assert.ok(!("OTHER" in merged), "only the listed names are taken");
});

Deno.test("resolveConfig() reads SERVICE_AGENT_ID as a comma list, spaces and empty items ignored", () => {
  const config = resolveConfig(flags([]), { ...ENV, SERVICE_AGENT_ID: ` ${A} ,${B}, ` });
  assert.deepEqual(config.agents, [A, B]);
});

Deno.test("resolveConfig() keeps a path prefix and accepts http:// only for loopback hosts", () => {
  for (
    const url of [
      "http://localhost:8080",
      "http://127.0.0.1:2",
      "http://127.9.9.9",
      "http://[::1]:3000/x",
    ]
  ) {
    assert.equal(
      resolveConfig(flags(["--agent", A, "--base-url", url]), ENV).baseUrl.protocol,
      "http:",
    );
  }
  usageError(
    ["--agent", A, "--base-url", "http://10.0.0.1"],
    ENV,
    /must use https:\/\/ for a remote host/,
  );
  usageError(["--agent", A, "--base-url", "http://localhost.evil.example"], ENV, /must use https/);
});

Deno.test("resolveConfig() refuses every bad input with one line naming it and what is valid", () => {
  const noKey = { SERVICE_BASE_URL: "https://service.example" };
  usageError(["--agent", A], noKey, /^SERVICE_API_KEY is not set/);
  usageError(
    ["--agent", A],
    { ...ENV, SERVICE_API_KEY: "sk_key\n" },
    /SERVICE_API_KEY contains whitespace/,
  );
  usageError(
    ["--agent", "0b0c4a5e"],
    ENV,
    /--agent must be an agent UUID like .* \(got "0b0c4a5e"\)/,
  );
  usageError([], { ...ENV, SERVICE_AGENT_ID: "nope" }, /SERVICE_AGENT_ID must be an agent UUID/);
  usageError(["--agent", A, "--agent", A.toUpperCase()], ENV, /names agent .* twice/);
  usageError([], ENV, /^no agent given/);
  usageError(["--agent", A], { SERVICE_API_KEY: "k" }, /^no service address/);
  usageError(
    ["--agent", A, "--base-url", "not a url"],
    ENV,
    /--base-url must be an https:\/\/ URL/,
  );
  usageError(
    ["--agent", A, "--base-url", "https://u:p@x.example"],
    ENV,
    /must not contain credentials/,
  );
  usageError(["--agent", A, "--base-url", "https://x.example/?a=1"], ENV, /must not have a query/);
  for (
    const url of ["https://x.example/api/v1", "https://x.example/api", "https://x.example/API/v1/"]
  ) {
    usageError(
      ["--agent", A, "--base-url", url],
      ENV,
      /^--base-url must be the service's address without its API path: service-ci adds \/api\/v1 itself; give https:\/\/x\.example \(got /,
    );
  }
  usageError(
    ["--agent", A],
    { ...ENV, SERVICE_BASE_URL: "https://x.example/eval/api/v1" },
    /^SERVICE_BASE_URL must be .*; give https:\/\/x\.example\/eval \(got/,
  );
  usageError(
    ["--agent", A, "--base-url", `https://x.example/${"a".repeat(100_000)}`],
    ENV,
    /^--base-url must be at most 2048 characters, .*\(got "https:\/\/x\.example\/a+…" \(100018 characters\)\)$/,
  );
  for (const bad of ["0", "soon", "", "1e3", "Infinity", "20000"]) {
    usageError(
      ["--agent", A, "--timeout-minutes", bad],
      ENV,
      /--timeout-minutes must be a positive number of minutes/,
    );
  }
  usageError(
    ["--agent", A],
    { ...ENV, SERVICE_TIMEOUT_MINUTES: "x" },
    /^SERVICE_TIMEOUT_MINUTES must be/,
  );
  usageError(
    ["--agent", A, "--pull-request", "PR-1"],
    ENV,
    /--pull-request must be a pull request number/,
  );
  usageError(["--agent", A, "--pull-request", "99999999999999999999"], ENV, /--pull-request/);
  usageError(["--agent", A, "--branch", ""], ENV, /--branch must be a non-empty value/);
  usageError(
    ["--agent", A, "--agent", B, "--run-id", "r1"],
    ENV,
    /--run-id needs exactly one --agent/,
  );
  usageError(["--agent", A, "--run-id", "r1", "--no-wait"], ENV, /cannot be used with --no-wait/);
  usageError(["--agent", A, "--run-id", ".."], ENV, /--run-id must be a run id/);
  usageError(["--agent", A, "--max-poll-interval-seconds", "0.1"], ENV, /from 0.5 to 300/);
});

Deno.test("resolveConfig() refuses a port fetch never connects to, naming it and what to do", () => {
  usageError(
    ["--agent", A, "--base-url", "http://127.0.0.1:6000"],
    ENV,
    /^--base-url must not use port 6000: fetch never connects to it \(one of the Fetch standard's "bad ports", .*\); serve the API on another port \(got "http:\/\/127\.0\.0\.1:6000"\)$/,
  );
  usageError(
    ["--agent", A],
    { ...ENV, SERVICE_BASE_URL: "https://service.example:10080/eval" },
    /^SERVICE_BASE_URL must not use port 10080: /,
  );
  usageError(["--agent", A, "--base-url", "http://localhost:0"], ENV, /must not use port 0:/);
  // Ports next to blocked ones, and the default ports, are fine.
  for (const url of ["http://127.0.0.1:6001", "https://x.example:443", "https://x.example:8443"]) {
    assert.equal(
      resolveConfig(flags(["--agent", A, "--base-url", url]), ENV).baseUrl.href,
      `${url}/`.replace(":443/", "/"),
    );
  }
});

Deno.test("FETCH_BLOCKED_PORTS are exactly the ports this Deno's fetch refuses below 11000", async () => {
  const blocked: number[] = [];
  const ports = Array.from({ length: 11_000 }, (_, port) => port);
  for (let i = 0; i < ports.length; i += 200) {
    await Promise.all(
      ports.slice(i, i + 200).map(async (port) => {
        try {
          // Nothing is expected to answer; one that does is not blocked either.
          const answer = await fetch(`http://127.0.0.1:${port}/`, {
            signal: AbortSignal.timeout(500),
          });
          await answer.body?.cancel();
        } catch (error) {
          if (/Requests to port \d+ are blocked/.test(String(error))) blocked.push(port);
        }
      }),
    );
  }
  assert.deepStrictEqual(blocked.sort((a, b) => a - b), [...FETCH_BLOCKED_PORTS]);
});

Deno.test("resolveConfig() passes metadata overrides through unchanged", () => {
  const config = resolveConfig(
    flags([
      "--agent",
      A,
      "--commit-sha",
      "abc123",
      "--branch",
      "feature/x",
      "--pull-request",
      "42",
      "--repository",
      "acme/widgets",
      "--actor",
      "octocat",
    ]),
    ENV,
  );
  assert.deepEqual(_overrides(config), {
    commitSha: "abc123",
    branch: "feature/x",
    pullRequest: 42,
    repository: "acme/widgets",
    actor: "octocat",
  });
});

// --- Credentials in an address are never echoed -------------------------------------------------

const PASSWORD = "Pa55w0rd-s3cret";

// Each address a user may give with credentials in it, and what its refusal must still say: what
// is wrong and what would be valid.
const WITH_CREDENTIALS: ReadonlyArray<readonly [string, RegExp]> = [
  [
    `user:${PASSWORD}@service.example`,
    /must be an https:\/\/ URL .*\(got "\*\*\*@service\.example"; did you mean https:\/\/service\.example\?\)$/,
  ],
  [
    `//user:${PASSWORD}@service.example`,
    /must be an https:\/\/ URL .*\(got "\/\/\*\*\*@service\.example"; did you mean https:\/\/service\.example\?\)$/,
  ],
  [
    `https:/user:${PASSWORD}@service.example`,
    /must be an https:\/\/ URL .*\(got "https:\/\*\*\*@service\.example"; did you mean https:\/\/service\.example\?\)$/,
  ],
  [
    `ftp://user:${PASSWORD}@service.example`,
    /must be an https:\/\/ URL \(got "ftp:\/\/\*\*\*@service\.example"\)$/,
  ],
  [`ws://user:${PASSWORD}@service.example`, /must be an https:\/\/ URL \(got "ws:\/\/\*\*\*@/],
  [
    `http://user:${PASSWORD}@service.example`,
    /must use https:\/\/ for a remote host; .* \(got "http:\/\/\*\*\*@service\.example"\)$/,
  ],
  [
    `https://user:${PASSWORD}@serv ice.example`,
    /must be an https:\/\/ URL \(got "https:\/\/\*\*\*@serv ice\.example"\)$/,
  ],
  [`user:${PASSWORD}@serv ice.example`, /must be an https:\/\/ URL .*\(got "\*\*\*@serv ice/],
  [`https://user:${PASSWORD}@service.example`, /must not contain credentials; the key goes in/],
  [`https://${PASSWORD}@service.example/api/v1`, /must not contain credentials/],
];

Deno.test("run(): an address with credentials, as --base-url or SERVICE_BASE_URL, is refused without echoing them", async () => {
  for (const [address, message] of WITH_CREDENTIALS) {
    for (
      const [name, args, env] of [
        ["--base-url", ["--agent", AGENT, "--base-url", address], {}],
        ["SERVICE_BASE_URL", ["--agent", AGENT], { SERVICE_BASE_URL: address }],
      ] as const
    ) {
      const h = harness({ args, env });
      const code = await run(h.effects);
      const stderr = h.stderr.join("");
      assert.equal(code, 2, stderr);
      assert.ok(!stderr.includes(PASSWORD) && !stderr.includes("user:"), stderr);
      assert.match(stderr, new RegExp(`^service-ci: ${name} `), stderr);
      assert.match(stderr.trimEnd(), message);
      assert.deepEqual(h.requests, []);
      assert.equal(h.stdout.join(""), "");
    }
  }
});

Deno.test("resolveConfig() never quotes the credentials of an address given as another value", () => {
  const address = `https://user:${PASSWORD}@service.example`;
  usageError(["--agent", address], ENV, /agent UUID.*\(got "https:\/\/\*\*\*@service\.example"\)$/);
});

Deno.test("resolveConfig() refuses a forge address or the Bitbucket proxy with credentials, never echoing them", () => {
  const cases: Array<[string, string, RegExp]> = [
    [
      "SERVICE_BITBUCKET_PROXY",
      `http://builder:${PASSWORD}@proxy.example:29418`,
      /^SERVICE_BITBUCKET_PROXY must not contain credentials: Bitbucket's pipeline proxy signs each request itself \(got "http:\/\/\*\*\*@proxy\.example:29418"\)$/,
    ],
    [
      "GITHUB_API_URL",
      `//x-access-token:${PASSWORD}@github.example/api/v3`,
      /^GITHUB_API_URL must not contain credentials: the token goes in GITHUB_TOKEN \(got "\/\/\*\*\*@github\.example\/api\/v3"\)$/,
    ],
    [
      "CI_API_V4_URL",
      ` https://oauth2:${PASSWORD}@gitlab.example/api/v4 `,
      /^CI_API_V4_URL must not contain credentials: the token goes in SERVICE_GITLAB_TOKEN \(got "https:\/\/\*\*\*@gitlab\.example/,
    ],
  ];
  for (const [variable, address, message] of cases) {
    usageError(["--agent", A], { ...ENV, [variable]: address }, message);
    assert.throws(() => resolveConfig(flags(["--agent", A]), { ...ENV, [variable]: address }), {
      message: new RegExp(`^(?!.*${PASSWORD})`),
    });
  }
  const config = resolveConfig(flags(["--agent", A]), {
    ...ENV,
    SERVICE_BITBUCKET_PROXY: " http://localhost:29418 ",
    GITHUB_API_URL: "https://github.example/api/v3",
    CI_API_V4_URL: "",
  });
  assert.equal(config.bitbucketProxy, "http://localhost:29418");
  assert.equal(config.githubApiUrl, "https://github.example/api/v3");
  assert.equal(config.gitlabApiUrl, undefined);
});

Deno.test("secretValues() lists every secret variable that is set, as given and trimmed", () => {
  assert.deepEqual(secretValues(() => undefined), []);
  const env: Record<string, string> = {
    SERVICE_API_KEY: "sk_key",
    GITHUB_TOKEN: " ghs_a ",
    SERVICE_GITLAB_TOKEN: "glpat-b",
    SERVICE_BASE_URL: "https://x.example",
  };
  assert.deepEqual(secretValues((name) => env[name]), ["sk_key", " ghs_a ", "ghs_a", "glpat-b"]);
  assert.deepEqual(secretValues((name) => ({ GITHUB_TOKEN: " " })[name]), []);
});
