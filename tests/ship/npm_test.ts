/**
 * Tests the npm packages: the manifests scripts/npm_packages.ts writes, the launcher on its own
 * (with a node_modules laid out by hand), and the whole way a user gets it: the packages built
 * from stand-in binaries (a shell script per platform that runs src/main.ts under Deno with
 * deno.json's permissions), packed with `npm pack`, installed offline into a project and run with
 * `npx service-ci` against the fake service. A registry on loopback proves npm never asks one.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { binaryPath, readBuildConfig, type Target, TARGETS } from "../../scripts/build.ts";
import {
  main,
  mainManifest,
  NPM_PLATFORMS,
  packageDirectory,
  platformManifest,
  platformPackageName,
  writeNpmPackages,
} from "../../scripts/npm_packages.ts";
import { sleep } from "../../src/platform/clock.ts";
import { runCommand } from "../support/command.ts";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  KEYS,
  startFakeService,
} from "../support/fake_service.ts";
import { MAIN, PERMISSIONS } from "../support/program.ts";
import { type ToolOptions, toolTest } from "../support/tools.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { version: VERSION } = readBuildConfig(Deno.readTextFileSync(join(ROOT, "deno.json")));
// The target of this machine, if it is one a release is built for.
const HOST = TARGETS.find((target) =>
  NPM_PLATFORMS[target].os === process.platform && NPM_PLATFORMS[target].cpu === process.arch
);
// A target that is not this machine's, for a package set this machine cannot use.
const OTHER = TARGETS.find((target) => target !== HOST)!;
// The stand-ins are shell scripts: these tests run where a release binary would be a script's
// peer, on Linux and macOS.
const NODE_ONLY: ToolOptions = { tools: ["node", "sh"], notOn: ["windows"] };
const NPM: ToolOptions = { tools: ["node", "npm", "npx", "sh"], notOn: ["windows"] };
const SLOW_AGENT = "5f607182-93a4-4bcd-8e3f-405162738495";

function _quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

// What stands in for the release binary: src/main.ts under this Deno with deno.json's
// permissions, replacing the shell so signals reach Deno itself.
const STAND_IN = `#!/bin/sh\nexec ${
  [Deno.execPath(), "run", "--no-prompt", "--quiet", ...PERMISSIONS, MAIN].map(_quote).join(" ")
} "$@"\n`;

// A dist/ as `deno task compile` leaves it, with `script` as the binary of every target.
async function _dist(dir: string, targets: readonly Target[], script: string): Promise<string> {
  const dist = join(dir, "dist");
  for (const target of targets) {
    const binary = binaryPath(target, dist);
    await Deno.mkdir(binary.slice(0, binary.lastIndexOf("/")), { recursive: true });
    await Deno.writeTextFile(binary, script, { mode: 0o755 });
  }
  return dist;
}

// The environment every program of these tests gets: nothing of the machine's npm
// configuration, and a registry that only records what asks it.
function _env(dir: string, registry: string, extra: Record<string, string> = {}) {
  const env: Record<string, string> = {
    NO_COLOR: "1",
    npm_config_registry: registry,
    npm_config_offline: "true",
    npm_config_cache: join(dir, "npm-cache"),
    npm_config_userconfig: join(dir, "user-npmrc"),
    npm_config_globalconfig: join(dir, "global-npmrc"),
    npm_config_update_notifier: "false",
    npm_config_audit: "false",
    npm_config_fund: "false",
    ...extra,
  };
  for (const name of ["PATH", "HOME", "DENO_DIR"]) {
    const value = Deno.env.get(name);
    if (value !== undefined && !(name in env)) env[name] = value;
  }
  return env;
}

// A registry on loopback that answers nothing useful and counts what asked it.
function _registry(): AsyncDisposable & { url: string; requests: string[] } {
  const requests: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (request) => {
    requests.push(`${request.method} ${new URL(request.url).pathname}`);
    return new Response("not here", { status: 404 });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/`,
    requests,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

// Runs a program to its end, waiting for the signal-carrying status too.
async function _run(command: string, args: readonly string[], options: Deno.CommandOptions) {
  const child = new Deno.Command(command, {
    ...options,
    args: [...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const [status, stdout, stderr] = await Promise.all([
    child.status,
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
  ]);
  return { code: status.code, signal: status.signal, stdout, stderr };
}

// ---- the manifests ----------------------------------------------------------------------------

Deno.test("every target has its own platform package, named after npm's os and cpu", () => {
  const names = TARGETS.map(platformPackageName);
  assert.deepEqual(names, [
    "@service-ci/cli-linux-x64",
    "@service-ci/cli-linux-arm64",
    "@service-ci/cli-darwin-x64",
    "@service-ci/cli-darwin-arm64",
    "@service-ci/cli-win32-x64",
    "@service-ci/cli-win32-arm64",
  ]);
  for (const target of TARGETS) {
    const manifest = platformManifest(target, VERSION);
    const { os, cpu } = NPM_PLATFORMS[target];
    assert.equal(manifest.name, `@service-ci/cli-${os}-${cpu}`);
    assert.deepEqual(manifest.os, [os]);
    assert.deepEqual(manifest.cpu, [cpu]);
    assert.deepEqual(manifest.libc, os === "linux" ? ["glibc"] : undefined);
    assert.equal(manifest.license, "Apache-2.0");
    assert.equal(manifest.bin, undefined, "only the main package installs a command");
    assert.deepEqual(manifest.files, [
      target.includes("windows") ? "bin/service-ci.exe" : "bin/service-ci",
    ]);
    assert.equal(packageDirectory(target), `cli-${os}-${cpu}`);
  }
});

Deno.test("the main package runs the launcher and depends on exactly this version of each platform package", () => {
  const manifest = mainManifest(VERSION, TARGETS);
  assert.equal(manifest.name, "service-ci");
  assert.equal(manifest.version, VERSION);
  assert.deepEqual(manifest.bin, { "service-ci": "launcher.cjs" });
  assert.deepEqual(manifest.files, ["launcher.cjs"]);
  assert.deepEqual(manifest.repository, {
    type: "git",
    url: "git+https://github.com/service-ci/service-ci.git",
  });
  assert.deepEqual(
    manifest.optionalDependencies,
    Object.fromEntries(TARGETS.map((target) => [platformPackageName(target), VERSION])),
  );
  assert.equal(manifest.dependencies, undefined);
});

Deno.test("a version npm would refuse is refused with the version named", () => {
  assert.throws(() => platformManifest(TARGETS[0], "v1.0"), /semantic version.*"v1\.0"/);
  assert.throws(() => mainManifest("", TARGETS), /semantic version.*""/);
  assert.throws(() => mainManifest(VERSION, []), RangeError);
});

Deno.test("a missing binary names the file and the way to build it, and writes nothing", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
  try {
    const dist = await _dist(dir, [TARGETS[0]], "#!/bin/sh\n");
    await assert.rejects(
      writeNpmPackages({ dist, out: join(dir, "npm"), version: VERSION, targets: TARGETS }),
      new RegExp(`no binary for ${TARGETS[1]} at .*deno task compile.*--target`),
    );
    await assert.rejects(Deno.stat(join(dir, "npm")), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the script exits 2 on an unknown target and 1 on a missing dist", async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
  try {
    assert.equal(await main(["--target", "riscv64-linux"]), 2);
    assert.equal(await main(["--dist", join(dir, "nothing")]), 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// ---- the launcher, in a node_modules laid out by hand -----------------------------------------

// node_modules/service-ci and (unless `withPlatform` is false) this machine's platform package,
// where npm would put them, the binary being `script`.
async function _handInstall(dir: string, script: string, withPlatform = true): Promise<string> {
  return await _layOut(dir, script, [HOST!], withPlatform ? HOST! : undefined);
}

// node_modules/service-ci listing the packages of `targets`, and that of `installed` if given.
async function _layOut(
  dir: string,
  script: string,
  targets: readonly Target[],
  installed: Target | undefined,
): Promise<string> {
  const out = join(dir, "npm");
  await writeNpmPackages({
    dist: await _dist(dir, targets, script),
    out,
    version: VERSION,
    targets,
  });
  const modules = join(dir, "node_modules");
  await Deno.mkdir(join(modules, "@service-ci"), { recursive: true });
  await Deno.rename(join(out, "service-ci"), join(modules, "service-ci"));
  if (installed !== undefined) {
    await Deno.rename(
      join(out, packageDirectory(installed)),
      join(modules, platformPackageName(installed)),
    );
  }
  return join(modules, "service-ci", "launcher.cjs");
}

// A `node --require` file that makes the launcher see another `process.platform` and `arch`.
async function _seenAs(dir: string, platform: string, arch: string): Promise<string> {
  const preload = join(dir, `as-${platform}-${arch}.cjs`);
  await Deno.writeTextFile(
    preload,
    `Object.defineProperty(process, "platform", { value: ${JSON.stringify(platform)} });\n` +
      `Object.defineProperty(process, "arch", { value: ${JSON.stringify(arch)} });\n`,
  );
  return preload;
}

// The refusal on a machine without a package: the platform seen, the supported ones and the
// other ways to run service-ci, as docs/npm.md lists them.
function _refusal(seen: string, targets: readonly Target[]): string {
  const supported = targets.map((target) => {
    const { os, cpu } = NPM_PLATFORMS[target];
    return `${os}-${cpu}${os === "linux" ? " (glibc)" : ""}`;
  });
  return `service-ci: no service-ci build on npm for ${seen}; supported: ${
    supported.join(", ")
  }; instead use the release binary (install.sh of the GitHub release), the container image ghcr.io/service-ci/ci, or Deno (deno run jsr:@service-ci/service-ci): https://github.com/service-ci/service-ci#readme\n`;
}

// Starts the launcher with `args` under `node` (with `nodeFlags` first) and the binary `script`;
// resolves once the binary printed `ready <pid>`, with its pid, the launcher and its output.
async function _startLauncher(launcher: string, nodeFlags: readonly string[] = []) {
  const child = new Deno.Command("node", {
    args: [...nodeFlags, launcher],
    env: { PATH: Deno.env.get("PATH") ?? "" },
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let stdout = "";
  while (!/ready \d+\n/.test(stdout)) {
    const { value, done } = await reader.read();
    if (done) break;
    stdout += value;
  }
  const pid = Number(/ready (\d+)/.exec(stdout)?.[1]);
  const rest = (async () => {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      stdout += chunk.value;
    }
    return stdout;
  })();
  const stderr = new Response(child.stderr).text();
  return {
    child,
    pid,
    /** What the binary printed so far. */
    printed: () => stdout,
    finished: async () => ({
      status: await child.status,
      stdout: await rest,
      stderr: await stderr,
    }),
  };
}

// A binary that says when it is ready, records each SIGINT, SIGTERM and SIGHUP it gets, and exits
// as service-ci does on them (130, 143, 143); by itself it would end with 7.
const _SIGNALLED_BINARY = `#!/bin/sh
trap 'echo INT; exit 130' INT
trap 'echo TERM; exit 143' TERM
trap 'echo HUP; exit 143' HUP
echo "ready $$"
i=0
while [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
exit 7
`;

toolTest(
  "the launcher passes the arguments and the exit code through, and ends by the signal that ended the binary",
  NODE_ONLY,
  async (t) => {
    assert.ok(HOST, `${process.platform}-${process.arch} is no release target`);
    const cases: Array<[string, string, (r: Awaited<ReturnType<typeof _run>>) => void]> = [
      ["an exit code", 'printf "%s|" "$@"\nexit 3\n', (r) => {
        assert.equal(r.code, 3);
        assert.equal(r.signal, null);
        assert.equal(r.stdout, "--agent|a b|--json|");
      }],
      ["SIGTERM", "kill -TERM $$\n", (r) => assert.equal(r.signal, "SIGTERM")],
      // Node.js ignores SIGPIPE, so the launcher cannot die of it: it exits as a shell reports it.
      ["SIGPIPE", "kill -PIPE $$\n", (r) => {
        assert.equal(r.signal, null);
        assert.equal(r.code, 128 + 13);
      }],
    ];
    for (const [what, body, check] of cases) {
      await t.step(`a binary that ends by ${what}`, async () => {
        const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
        try {
          const launcher = await _handInstall(dir, `#!/bin/sh\n${body}`);
          const result = await _run("node", [launcher, "--agent", "a b", "--json"], {
            env: { PATH: Deno.env.get("PATH") ?? "" },
            clearEnv: true,
          });
          check(result);
          assert.equal(result.stderr, "");
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });
    }
  },
);

toolTest(
  "the launcher passes SIGINT, SIGTERM and SIGHUP on to the binary, once, and exits with the binary's code",
  NODE_ONLY,
  async (t) => {
    for (
      const [signal, code, word] of [
        ["SIGINT", 130, "INT"],
        ["SIGTERM", 143, "TERM"],
        ["SIGHUP", 143, "HUP"],
      ] as const
    ) {
      await t.step(signal, async () => {
        const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
        try {
          const launcher = await _handInstall(dir, _SIGNALLED_BINARY);
          const started = await _startLauncher(launcher);
          started.child.kill(signal);
          const { status, stdout, stderr } = await started.finished();
          assert.equal(status.signal, null, stderr);
          assert.equal(status.code, code, stderr);
          assert.equal(stdout, `ready ${started.pid}\n${word}\n`);
          assert.equal(stderr, "");
        } finally {
          await Deno.remove(dir, { recursive: true });
        }
      });
    }
  },
);

toolTest(
  "on Windows (seen so here) the launcher holds Ctrl-C rather than killing the binary, and exits with the code the binary stops with",
  NODE_ONLY,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    try {
      const windows: Target = "x86_64-pc-windows-msvc";
      const launcher = await _layOut(dir, _SIGNALLED_BINARY, [windows], windows);
      const started = await _startLauncher(launcher, [
        "--require",
        await _seenAs(dir, "win32", "x64"),
      ]);
      // Ctrl-C reaches every process of the console: the launcher first, here.
      started.child.kill("SIGINT");
      await sleep(300, new AbortController().signal);
      // The launcher passed nothing on (child.kill would terminate the binary there).
      assert.equal(started.printed(), `ready ${started.pid}\n`);
      Deno.kill(started.pid, "SIGINT");
      const { status, stdout, stderr } = await started.finished();
      assert.equal(status.signal, null, stderr);
      assert.equal(status.code, 130, stderr);
      assert.equal(stdout, `ready ${started.pid}\nINT\n`);
      assert.equal(stderr, "");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest(
  "on Windows (seen so here) the launcher runs the binary of the package of the machine's CPU, x64 or arm64",
  NODE_ONLY,
  async () => {
    const windows: readonly Target[] = ["x86_64-pc-windows-msvc", "aarch64-pc-windows-msvc"];
    for (const installed of windows) {
      const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
      try {
        // npm installs only the package whose cpu matches; the launcher lists both.
        const launcher = await _layOut(
          dir,
          '#!/bin/sh\necho "$0 $*"\nexit 3\n',
          windows,
          installed,
        );
        const { cpu } = NPM_PLATFORMS[installed];
        const result = await _run(
          "node",
          ["--require", await _seenAs(dir, "win32", cpu), launcher, "--version"],
          { env: { PATH: Deno.env.get("PATH") ?? "" }, clearEnv: true },
        );
        assert.equal(result.code, 3, result.stderr);
        const binary = join(
          dir,
          "node_modules",
          platformPackageName(installed),
          "bin",
          "service-ci.exe",
        );
        assert.equal(result.stdout, `${binary} --version\n`);
        assert.equal(result.stderr, "");
      } finally {
        await Deno.remove(dir, { recursive: true });
      }
    }
  },
);

toolTest(
  "on a platform without a package the launcher names it, every target scripts/build.ts builds, and the other ways to run service-ci",
  NODE_ONLY,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    try {
      const launcher = await _layOut(dir, "#!/bin/sh\nexit 0\n", TARGETS, undefined);
      const result = await _run(
        "node",
        ["--require", await _seenAs(dir, "aix", "ppc64"), launcher, "--version"],
        { env: { PATH: Deno.env.get("PATH") ?? "" }, clearEnv: true },
      );
      assert.equal(result.code, 2);
      assert.equal(result.stdout, "");
      assert.equal(result.stderr, _refusal("aix-ppc64", TARGETS));
      // The ways it names are those the documentation gives.
      const docs = await Deno.readTextFile(join(ROOT, "docs", "npm.md"));
      for (const name of ["install.sh", "ghcr.io/service-ci/ci", "jsr:@service-ci/service-ci"]) {
        assert.ok(docs.includes(name), `docs/npm.md names ${name}`);
      }
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest(
  "without its platform package the launcher says how to reinstall, in one line, and exits 2",
  NODE_ONLY,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    try {
      const launcher = await _handInstall(dir, "#!/bin/sh\nexit 0\n", false);
      const result = await _run("node", [launcher, "--version"], {
        env: { PATH: Deno.env.get("PATH") ?? "" },
        clearEnv: true,
      });
      assert.equal(result.code, 2);
      assert.equal(
        result.stderr,
        `service-ci: ${
          platformPackageName(HOST!)
        } is not installed (npm leaves optional dependencies out with --omit=optional or --no-optional); reinstall service-ci with them\n`,
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest(
  "a binary that cannot be started is named, with the reason, in one line, and the launcher exits 2",
  NODE_ONLY,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    try {
      const launcher = await _handInstall(dir, "#!/bin/sh\nexit 0\n");
      const binary = join(dir, "node_modules", platformPackageName(HOST!), "bin", "service-ci");
      await Deno.chmod(binary, 0o644);
      const result = await _run("node", [launcher, "--version"], {
        env: { PATH: Deno.env.get("PATH") ?? "" },
        clearEnv: true,
      });
      assert.equal(result.code, 2);
      assert.equal(result.stderr, `service-ci: cannot run ${binary}: spawn ${binary} EACCES\n`);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

// ---- packed, installed offline and run with npx ------------------------------------------------

// Writes the packages of `targets` from stand-ins, packs them, installs the main package and
// those of `install` offline into a new project; returns the project's directory.
async function _npmInstall(
  dir: string,
  registry: string,
  targets: readonly Target[],
  install: readonly Target[],
): Promise<string> {
  const out = join(dir, "npm");
  const packages = await writeNpmPackages({
    dist: await _dist(dir, targets, STAND_IN),
    out,
    version: VERSION,
    targets,
  });
  const env = _env(dir, registry);
  await Deno.writeTextFile(join(dir, "user-npmrc"), "");
  await Deno.writeTextFile(join(dir, "global-npmrc"), "");
  const tarballs = join(dir, "tarballs");
  await Deno.mkdir(tarballs);
  // Absolute paths: npm reads `npm/service-ci` as a GitHub repository.
  const packed = await runCommand("npm", [
    "pack",
    "--silent",
    "--pack-destination",
    tarballs,
    ...packages,
  ], {
    cwd: dir,
    env,
    clearEnv: true,
  });
  assert.equal(packed.code, 0, packed.stderr);
  const project = join(dir, "project");
  await Deno.mkdir(project);
  await Deno.writeTextFile(
    join(project, "package.json"),
    '{ "name": "project", "private": true }\n',
  );
  const names = [
    "service-ci",
    ...install.map(packageDirectory).map((name) => `service-ci-${name}`),
  ];
  const installed = await runCommand(
    "npm",
    [
      "install",
      "--offline",
      "--no-audit",
      "--no-fund",
      ...names.map((name) => join(tarballs, `${name}-${VERSION}.tgz`)),
    ],
    { cwd: project, env, clearEnv: true },
  );
  assert.equal(installed.code, 0, installed.stderr);
  return project;
}

async function _versions(dir: string): Promise<Array<[string, unknown]>> {
  const found: Array<[string, unknown]> = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) found.push(...await _versions(path));
    if (entry.isFile && entry.name === "package.json") {
      const manifest = JSON.parse(await Deno.readTextFile(path));
      found.push([`${path} version`, manifest.version]);
      for (const [name, range] of Object.entries(manifest.optionalDependencies ?? {})) {
        found.push([`${path} optionalDependencies ${name}`, range]);
      }
    }
  }
  return found;
}

toolTest(
  "installed offline from the packed tarballs, npx service-ci runs the binary and gives its exit codes and signals",
  NPM,
  async (t) => {
    assert.ok(HOST, `${process.platform}-${process.arch} is no release target`);
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    await using registry = _registry();
    const slow: FakeAgent = { ...defaultAgents()[0]!, id: SLOW_AGENT, runMs: 60_000 };
    await using service = await startFakeService({ agents: [...defaultAgents(100), slow] });
    try {
      const project = await _npmInstall(dir, registry.url, TARGETS, [HOST]);
      const env = (extra: Record<string, string> = {}) =>
        _env(dir, registry.url, {
          SERVICE_API_KEY: KEYS.ci,
          SERVICE_BASE_URL: service.url,
          ...extra,
        });
      const npx = (args: readonly string[], extra?: Record<string, string>) =>
        _run("npx", ["service-ci", ...args], { cwd: project, env: env(extra), clearEnv: true });

      await t.step("every version field, packed and installed, is deno.json's", async () => {
        const versions = [
          ...await _versions(join(dir, "npm")),
          ...await _versions(join(project, "node_modules", "service-ci")),
          ...await _versions(join(project, "node_modules", "@service-ci")),
        ];
        // Every platform package, the main package and its optionalDependencies twice, and the
        // one platform package installed.
        assert.equal(versions.length, TARGETS.length + 2 * (1 + TARGETS.length) + 1);
        for (const [where, version] of versions) assert.equal(version, VERSION, where);
      });

      await t.step("--version prints deno.json's version and exits 0", async () => {
        const result = await npx(["--version"]);
        assert.equal(result.code, 0, result.stderr);
        assert.ok(result.stdout.includes(VERSION), result.stdout);
      });

      const gates: Array<[string, readonly string[], Record<string, string>, number, RegExp]> = [
        ["a passing gate", ["--agent", AGENTS.passing], {}, 0, /PASSED/],
        ["a failing gate", ["--agent", AGENTS.failing], {}, 1, /FAILED/],
        [
          "a missing key",
          ["--agent", AGENTS.passing],
          { SERVICE_API_KEY: "" },
          2,
          /SERVICE_API_KEY/,
        ],
        ["an inactive agent", ["--agent", AGENTS.inactive], {}, 3, /inactive/],
        [
          "a run slower than the timeout",
          ["--agent", SLOW_AGENT, "--timeout-minutes", "0.01"],
          {},
          4,
          /TIMED OUT/,
        ],
      ];
      for (const [what, args, extra, code, message] of gates) {
        await t.step(`${what} exits ${code}`, async () => {
          const result = await npx(args, extra);
          assert.equal(result.code, code, result.stderr);
          assert.match(result.stderr, message);
          assert.ok(!result.stderr.includes(KEYS.ci));
        });
      }

      for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
        await t.step(
          `${signal} to the launcher reaches the binary, which exits ${code}`,
          async () => {
            const child = new Deno.Command(join(project, "node_modules", ".bin", "service-ci"), {
              args: ["--agent", SLOW_AGENT, "--timeout-minutes", "1"],
              cwd: project,
              env: env(),
              clearEnv: true,
              stdin: "null",
              stdout: "null",
              stderr: "piped",
            }).spawn();
            let stderr = "";
            const decoder = new TextDecoder();
            const reader = child.stderr.getReader();
            while (!stderr.includes("triggered run")) {
              const { value, done } = await reader.read();
              if (done) break;
              stderr += decoder.decode(value, { stream: true });
            }
            child.kill(signal);
            for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
              stderr += decoder.decode(chunk.value, { stream: true });
            }
            const status = await child.status;
            assert.equal(status.signal, null, stderr);
            assert.equal(status.code, code, stderr);
            assert.match(
              stderr,
              new RegExp(`INTERRUPTED \\(run run_\\d+\\): interrupted by ${signal}`),
            );
          },
        );
      }
      assert.deepEqual(registry.requests, [], "npm asked the registry");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest(
  "on a platform without a package, npx service-ci names the supported ones in one line and exits 2",
  NPM,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-npm-" });
    await using registry = _registry();
    try {
      const project = await _npmInstall(dir, registry.url, [OTHER], []);
      const result = await _run("npx", ["service-ci", "--version"], {
        cwd: project,
        env: _env(dir, registry.url),
        clearEnv: true,
      });
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, _refusal(`${process.platform}-${process.arch}`, [OTHER]));
      assert.equal(result.stdout, "");
      assert.deepEqual(registry.requests, [], "npm asked the registry");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);
