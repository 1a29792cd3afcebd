/**
 * End to end: the release's built-in service address, baked by the same function the release
 * build uses: then `--agent` and the key alone reach the service; a flag or variable still wins;
 * an invalid address fails the build.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  bakeDefaultBaseUrl,
  checkDefaultBaseUrl,
  DEFAULT_BASE_URL_MODULE,
} from "../../scripts/default_base_url.ts";
import { AGENTS, KEYS, startFakeService } from "../support/fake_service.ts";
import { runProgram } from "../support/program.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// A copy of the runner's source (src/ and deno.json) with the address baked in by the release
// build's own function.
async function _bakedCopy(url: string): Promise<{ main: string } & AsyncDisposable> {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-baked-" });
  await _copyTree(join(ROOT, "src"), join(dir, "src"));
  await Deno.copyFile(join(ROOT, "deno.json"), join(dir, "deno.json"));
  await bakeDefaultBaseUrl(dir, url);
  return {
    main: join(dir, "src", "main.ts"),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
}

async function _copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await _copyTree(join(from, entry.name), join(to, entry.name));
    else await Deno.copyFile(join(from, entry.name), join(to, entry.name));
  }
}

Deno.test("a build with a default: --agent and the key alone reach the service", async () => {
  await using service = await startFakeService();
  await using baked = await _bakedCopy(service.url);
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: { SERVICE_API_KEY: KEYS.ci },
    entry: baked.main,
  });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(service.requestsOf("POST").length, 1);
  const version = await runProgram(["--version"], { entry: baked.main });
  assert.match(version.stdout, new RegExp(`built-in service address: ${service.url}/\n`));
  const help = await runProgram(["--help"], { entry: baked.main });
  assert.match(help.stdout, new RegExp(`built-in default: ${service.url}/\n`));
  const dry = await runProgram(["--agent", AGENTS.passing, "--dry-run", "--json"], {
    env: { SERVICE_API_KEY: KEYS.ci },
    entry: baked.main,
  });
  assert.equal(JSON.parse(dry.stdout).base_url_source, "built-in default");
  assert.match(dry.stderr, /service address .* from built-in default/);
});

Deno.test("with a built-in default, --base-url, SERVICE_BASE_URL and .env still win, in that order", async () => {
  await using builtIn = await startFakeService();
  await using other = await startFakeService();
  await using baked = await _bakedCopy(builtIn.url);
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, ".env"), `SERVICE_BASE_URL=${other.url}\n`);
    const source = async (args: string[], env: Record<string, string>) => {
      const dry = await runProgram(["--agent", AGENTS.passing, "--dry-run", "--json", ...args], {
        env: { SERVICE_API_KEY: KEYS.ci, ...env },
        entry: baked.main,
        cwd: dir,
      });
      assert.equal(dry.code, 0, dry.stderr);
      const document = JSON.parse(dry.stdout);
      return `${document.base_url_source} ${document.base_url}`;
    };
    assert.equal(
      await source(["--base-url", `${other.url}/flag`], {}),
      `--base-url ${other.url}/flag`,
    );
    assert.equal(
      await source([], { SERVICE_BASE_URL: `${other.url}/env` }),
      `SERVICE_BASE_URL ${other.url}/env`,
    );
    assert.equal(await source([], {}), `.env ${other.url}/`);
    const result = await runProgram(["--agent", AGENTS.passing], {
      env: { SERVICE_API_KEY: KEYS.ci, SERVICE_BASE_URL: other.url },
      entry: baked.main,
    });
    assert.equal(result.code, 0, result.stderr);
    assert.equal(other.requestsOf("POST").length, 1);
    assert.equal(builtIn.requests.length, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a build without a default: exit 2 with one line naming all three ways to give one", async () => {
  const result = await runProgram(["--agent", AGENTS.passing], {
    env: { SERVICE_API_KEY: KEYS.ci },
  });
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /^service-ci: no service address: pass --base-url https:\/\/…, set SERVICE_BASE_URL .*, or use a release build with a built-in default \(this build has none\) \(no \.env in [^;]+; only the working directory.s \.env is read, so run from the directory that holds it or pass --env-file\)\n$/,
  );
});

Deno.test("an invalid default fails the build with a clear message, before compiling", async (t) => {
  for (
    const url of [
      "http://evil.example",
      "https://user:pw@x.example",
      "service.example",
      "https://x.example/?q=1",
    ]
  ) {
    await t.step(url, async () => {
      assert.throws(() => checkDefaultBaseUrl(url), /^TypeError: SERVICE_DEFAULT_BASE_URL/);
      const output = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", join(ROOT, "scripts/build.ts"), "--dry-run"],
        env: { SERVICE_DEFAULT_BASE_URL: url },
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(output.code, 1);
      const stderr = new TextDecoder().decode(output.stderr);
      assert.match(
        stderr,
        /^build: SERVICE_DEFAULT_BASE_URL \(the release's built-in service address\) must/,
      );
      assert.equal(new TextDecoder().decode(output.stdout), "");
    });
  }
});

Deno.test("an invalid address is reported under the flag or variable that gave it", async (t) => {
  const run = async (script: string, args: string[], env: Record<string, string>) => {
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", join(ROOT, script), ...args],
      env,
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    return { code: output.code, stderr: new TextDecoder().decode(output.stderr) };
  };
  const cases: Array<[string, string[], Record<string, string>, string]> = [
    ["scripts/default_base_url.ts", ["--url", "http://evil.example"], {}, "bake-default: --url"],
    [
      "scripts/default_base_url.ts",
      ["--url=service.example"],
      { SERVICE_DEFAULT_BASE_URL: "https://fine.example" },
      "bake-default: --url",
    ],
    [
      "scripts/default_base_url.ts",
      [],
      { SERVICE_DEFAULT_BASE_URL: "http://evil.example" },
      "bake-default: SERVICE_DEFAULT_BASE_URL",
    ],
    [
      "scripts/build.ts",
      ["--dry-run", "--default-base-url", "http://evil.example"],
      { SERVICE_DEFAULT_BASE_URL: "https://fine.example" },
      "build: --default-base-url",
    ],
  ];
  for (const [script, args, env, named] of cases) {
    await t.step(`${script} ${args.join(" ")}`, async () => {
      const before = await Deno.readTextFile(join(ROOT, DEFAULT_BASE_URL_MODULE));
      const result = await run(script, args, env);
      assert.equal(result.code, 1, result.stderr);
      assert.ok(
        result.stderr.startsWith(`${named} (the release's built-in service address) must`),
        result.stderr,
      );
      assert.equal(await Deno.readTextFile(join(ROOT, DEFAULT_BASE_URL_MODULE)), before);
    });
  }
  await t.step("bake-default --url without a value is a usage error", async () => {
    const result = await run("scripts/default_base_url.ts", ["--url"], {});
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /usage: deno task bake-default \[--url <address>\]/);
  });
});

Deno.test("the compile step's dry run shows the default being baked in", async () => {
  const output = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      join(ROOT, "scripts/build.ts"),
      "--dry-run",
      "--target",
      "x86_64-unknown-linux-gnu",
      "--default-base-url",
      "https://service.example",
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  const lines = new TextDecoder().decode(output.stdout).split("\n");
  assert.equal(
    lines[0],
    `(built-in) set DEFAULT_BASE_URL = "https://service.example/" in ${DEFAULT_BASE_URL_MODULE}`,
  );
  assert.match(lines[1]!, /^deno compile /);
});
