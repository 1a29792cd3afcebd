import assert from "node:assert/strict";
import { loadConfig, refusedReadError } from "../../src/config/load.ts";
import { UsageError } from "../../src/config/errors.ts";
import { CI_ENV_VARIABLES } from "../../src/ci/detect.ts";

const AGENT = "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10";
const all = () => true;

Deno.test("refusedReadError() names each required variable that is unset because it was refused", () => {
  const error = refusedReadError({}, {}, all, undefined);
  assert.ok(error instanceof UsageError);
  assert.match(
    error.message,
    /^SERVICE_API_KEY and SERVICE_AGENT_ID and SERVICE_BASE_URL cannot be read: Deno's permissions do not grant them \(--allow-env\)/,
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
