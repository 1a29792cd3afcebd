/** Tests scripts/build.ts: the compile arguments, the release file names and the script itself. */

import assert from "node:assert/strict";
import { permissionFlags } from "../../scripts/permissions.ts";
import { cp, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  archiveName,
  compileArgs,
  isRuntimeDownloadFailure,
  readBuildConfig,
  RUNTIME_FLAGS,
  sha256sumsLine,
  TARGETS,
  zipArchive,
} from "../../scripts/build.ts";
import { sbomName, sbomOfEntry } from "../../scripts/sbom.ts";
import { runCommand } from "../support/command.ts";
import { REFUSED_URL } from "../support/refused_address.ts";
import { sha256Hex } from "../support/release.ts";
import { onPath, toolTest } from "../support/tools.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DENO_JSON = readBuildConfig(Deno.readTextFileSync(join(ROOT, "deno.json")));
const DOWNLOAD_FAILURE_LINE = (target: string) =>
  `build: cannot download the Deno base runtime for ${target} (no access to Deno's download host); set DENORT_BIN to a local denort binary or build on a machine with internet access`;

// Windows CI runners lack most of the tools these tests run; they run on Linux and macOS.
const LINUX_AND_MACOS = ["linux", "darwin"] as const;

// A copy of the parts of the repository build.ts reads, with a stub entry point, so the
// script's runs do not depend on (or write into) the working tree.
async function _scratchRepository(): Promise<AsyncDisposable & { dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), "service-ci-build-"));
  await Deno.mkdir(join(dir, "scripts"));
  await Deno.mkdir(join(dir, "src"));
  await Deno.copyFile(join(ROOT, "deno.json"), join(dir, "deno.json"));
  // build.ts checks a built-in service address with the runner's own rules (src/config/load.ts and
  // what it imports).
  await Deno.remove(join(dir, "src"));
  await cp(join(ROOT, "src"), join(dir, "src"), { recursive: true });
  for (const script of ["build.ts", "sbom.ts", "permissions.ts", "default_base_url.ts"]) {
    await Deno.copyFile(join(ROOT, "scripts", script), join(dir, "scripts", script));
  }
  await Deno.writeTextFile(join(dir, "src", "main.ts"), 'console.log("stub");\n');
  await Deno.writeTextFile(join(dir, "README.md"), "# service-ci\n");
  return { dir, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}

function _runBuild(dir: string, args: readonly string[], env?: Record<string, string>) {
  return runCommand(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-run",
    join(dir, "scripts", "build.ts"),
    ...args,
  ], { cwd: dir, ...(env === undefined ? {} : { env, clearEnv: true }) });
}

// The variables a child process needs to start on every OS, and nothing else.
function _baseEnv(): Record<string, string> {
  const names = ["PATH", "HOME", "USERPROFILE", "SystemRoot", "TEMP", "TMP", "TMPDIR"];
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = Deno.env.get(name);
      return value === undefined ? [] : [[name, value]];
    }),
  );
}

Deno.test("TARGETS lists the six release targets", () => {
  assert.deepEqual([...TARGETS], [
    "x86_64-unknown-linux-gnu",
    "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin",
    "aarch64-apple-darwin",
    "x86_64-pc-windows-msvc",
    "aarch64-pc-windows-msvc",
  ]);
});

// denoland/deno#36045: `deno compile --target aarch64-pc-windows-msvc` does not yet map that
// target to npm's win32/arm64, so it would pick the wrong build of an npm package with platform
// builds. service-ci compiles in none: its graph has only its own modules and node: built-ins.
Deno.test("the binary compiles in no npm or jsr package, so no target needs Deno's npm mapping", async () => {
  const sbom = await sbomOfEntry("src/main.ts", { root: ROOT, version: DENO_JSON.version });
  const foreign = sbom.components.filter((component) =>
    component.type === "platform"
      ? component.name !== "deno"
      : component.type !== "file" || /^(?:\w+:|\.\.)/.test(component.name)
  );
  assert.deepEqual(foreign.map((component) => component.purl ?? component.name), []);
  assert.ok(sbom.components.some((component) => component.name === "src/main.ts"));
});

Deno.test("readBuildConfig() reads the version and the default permission set of deno.json", () => {
  const text = Deno.readTextFileSync(join(ROOT, "deno.json"));
  assert.equal(DENO_JSON.version, JSON.parse(text).version);
  assert.deepEqual(DENO_JSON.permissions, permissionFlags(text));
});

Deno.test("readBuildConfig() names the key at fault", () => {
  assert.throws(
    () => readBuildConfig('{"permissions": {"default": {"net": true}}}'),
    /deno\.json "version"/,
  );
  assert.throws(() => readBuildConfig('{"version": "1.0.0"}'), /"permissions"/);
  assert.throws(
    () => readBuildConfig('{"version": "1.0.0", "permissions": {"default": {"all": true}}}'),
    /may grant only/,
  );
  assert.throws(
    () => readBuildConfig('{"version": "1.0.0", "permissions": {"default": {"env": [42]}}}'),
    /"env" must be/,
  );
});

for (const target of TARGETS) {
  Deno.test(`compileArgs() compiles ${target} with deno.json's permission set and nothing else`, () => {
    const args = compileArgs(target, { entry: "src/main.ts", outDir: "dist" });
    const binary = target.endsWith("-pc-windows-msvc") ? "service-ci.exe" : "service-ci";
    assert.deepEqual(args, [
      "compile",
      "-P",
      "--no-prompt",
      "--quiet",
      "--target",
      target,
      "--output",
      `dist/${target}/${binary}`,
      "src/main.ts",
    ]);
    for (
      const baked of [
        "-A",
        "--allow-",
        "--cert",
        "--unsafely-ignore-certificate-errors",
        "--env-file",
      ]
    ) {
      assert.ok(!args.some((arg) => arg.startsWith(baked)), `${baked} must not be baked in`);
    }
  });
}

// The binary runs with the flags it was compiled with; under `deno run` the same flags show what
// a user's CI log gets from Deno itself. PATH is an empty directory, so neither git nor
// buildkite-agent resolves (as on most CI machines for buildkite-agent).
async function _runWithCompileFlags(
  flags: readonly string[],
  args: readonly string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const path = await Deno.makeTempDir({ prefix: "service-ci-empty-path-" });
  try {
    const env: Record<string, string> = { PATH: path };
    for (const name of ["HOME", "DENO_DIR", "SystemRoot", "TEMP", "TMP"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    const output = await new Deno.Command(Deno.execPath(), {
      args: ["run", ...flags, "src/main.ts", ...args],
      cwd: ROOT,
      env,
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return {
      code: output.code,
      stdout: text.decode(output.stdout),
      stderr: text.decode(output.stderr),
    };
  } finally {
    await Deno.remove(path, { recursive: true });
  }
}

Deno.test("the compile step's flags, under deno run, put nothing of Deno's own on stderr", async () => {
  const args = compileArgs("x86_64-unknown-linux-gnu", { entry: "src/main.ts", outDir: "dist" });
  const flags = args.slice(1, args.indexOf("--target"));
  assert.deepEqual(flags, [...RUNTIME_FLAGS]);

  const version = await _runWithCompileFlags(flags, ["--version"]);
  assert.equal(version.code, 0, version.stderr);
  assert.match(version.stdout, new RegExp(`^service-ci ${DENO_JSON.version}\n`));
  assert.equal(version.stderr, "");

  const usage = await _runWithCompileFlags(flags, ["--agent", "nope"]);
  assert.equal(usage.code, 2, usage.stderr);
  assert.match(usage.stderr, /^service-ci: [^\n]+\n$/);

  // The control: the same run without --quiet is not silent here, so the test above can fail.
  const loud = await _runWithCompileFlags(flags.filter((flag) => flag !== "--quiet"), [
    "--version",
  ]);
  assert.match(loud.stderr, /buildkite-agent/);
});

Deno.test("compileArgs() passes --no-check only when asked (the tests' builds), never by default", () => {
  const options = { entry: "src/main.ts", outDir: "dist" };
  assert.ok(!compileArgs("x86_64-unknown-linux-gnu", options).includes("--no-check"));
  const unchecked = compileArgs("x86_64-unknown-linux-gnu", { ...options, check: false });
  assert.deepEqual(
    unchecked.filter((arg) => arg !== "--no-check"),
    compileArgs("x86_64-unknown-linux-gnu", options),
  );
});

Deno.test("compileArgs() writes under the given --out directory", () => {
  const args = compileArgs("aarch64-apple-darwin", { entry: "src/main.ts", outDir: "/tmp/out/" });
  assert.equal(args[args.indexOf("--output") + 1], "/tmp/out/aarch64-apple-darwin/service-ci");
});

Deno.test("archiveName() names .tar.gz archives, and a .zip for each Windows target", () => {
  assert.deepEqual(TARGETS.map((target) => archiveName("1.2.3", target)), [
    "service-ci-1.2.3-x86_64-unknown-linux-gnu.tar.gz",
    "service-ci-1.2.3-aarch64-unknown-linux-gnu.tar.gz",
    "service-ci-1.2.3-x86_64-apple-darwin.tar.gz",
    "service-ci-1.2.3-aarch64-apple-darwin.tar.gz",
    "service-ci-1.2.3-x86_64-pc-windows-msvc.zip",
    "service-ci-1.2.3-aarch64-pc-windows-msvc.zip",
  ]);
});

Deno.test("archiveName() refuses an empty version or one with a space or a slash", () => {
  for (const version of ["", "1.0 beta", "../1.0.0", "1\\0"]) {
    assert.throws(() => archiveName(version, "x86_64-apple-darwin"), TypeError);
  }
});

Deno.test("sha256sumsLine() writes the hash, two spaces and the file name", () => {
  const hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  assert.equal(sha256sumsLine(hex, "a.tar.gz"), `${hex}  a.tar.gz`);
});

Deno.test("sha256sumsLine() refuses a hash that is not 64 lowercase hex digits, or a path", () => {
  const hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  assert.throws(() => sha256sumsLine(hex.toUpperCase(), "a.tar.gz"), TypeError);
  assert.throws(() => sha256sumsLine(hex.slice(1), "a.tar.gz"), TypeError);
  assert.throws(() => sha256sumsLine(hex, "dist/a.tar.gz"), TypeError);
  assert.throws(() => sha256sumsLine(hex, "a\n.tar.gz"), TypeError);
});

toolTest(
  "sha256sumsLine() writes lines that sha256sum -c accepts, and a changed file fails them",
  { tools: [["sha256sum", "shasum"]], onlyOn: LINUX_AND_MACOS },
  async () => {
    const checker = onPath("sha256sum") ? "sha256sum" : "shasum";
    const dir = await mkdtemp(join(tmpdir(), "service-ci-sums-"));
    try {
      const files: Record<string, string> = {
        "service-ci-1.0.0-x86_64-unknown-linux-gnu.tar.gz": "linux bytes",
        "service-ci-1.0.0-x86_64-pc-windows-msvc.zip": "windows bytes",
      };
      const lines: string[] = [];
      for (const [name, content] of Object.entries(files)) {
        const bytes = new TextEncoder().encode(content);
        await Deno.writeFile(join(dir, name), bytes);
        lines.push(sha256sumsLine(await sha256Hex(bytes), name));
      }
      await Deno.writeTextFile(join(dir, "SHA256SUMS"), `${lines.join("\n")}\n`);
      const check = checker === "sha256sum"
        ? ["-c", "SHA256SUMS"]
        : ["-a", "256", "-c", "SHA256SUMS"];
      const good = await runCommand(checker, check, { cwd: dir });
      assert.equal(good.code, 0, good.stdout + good.stderr);

      await Deno.writeTextFile(
        join(dir, "service-ci-1.0.0-x86_64-pc-windows-msvc.zip"),
        "tampered",
      );
      const bad = await runCommand(checker, check, { cwd: dir });
      assert.notEqual(bad.code, 0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

Deno.test("isRuntimeDownloadFailure() recognises a failed download of the base runtime", () => {
  const stderr = [
    "\x1b[0m\x1b[32mCompile\x1b[0m src/main.ts to dist/x86_64-unknown-linux-gnu/service-ci",
    "\x1b[0m\x1b[32mDownload\x1b[0m https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip",
    "\x1b[0m\x1b[1m\x1b[31merror\x1b[0m: Writing deno compile executable to temporary file",
    "Caused by:",
    "    0: Setting up base binary.",
    "    1: error sending request for url (https://dl.deno.land/release/v2.9.6/denort-x86_64-unknown-linux-gnu.zip)",
  ].join("\n");
  assert.equal(isRuntimeDownloadFailure(stderr), true);
  assert.equal(isRuntimeDownloadFailure("error: Failed downloading denort"), true);
});

Deno.test("isRuntimeDownloadFailure() ignores other errors after a download that worked", () => {
  const stderr = [
    "Download https://dl.deno.land/release/v2.9.6/denort-x86_64-pc-windows-msvc.zip",
    "error: Writing deno compile executable to temporary file 'dist/x.tmp'",
    "Caused by:",
    "    0: Writing binary bytes",
    "    1: Invalid object: Failed to parse PE",
  ].join("\n");
  assert.equal(isRuntimeDownloadFailure(stderr), false);
  assert.equal(isRuntimeDownloadFailure("error: Type checking failed."), false);
});

toolTest(
  "zipArchive() writes an archive that unzip tests and extracts byte for byte",
  { tools: ["unzip"], onlyOn: LINUX_AND_MACOS },
  async () => {
    const dir = await mkdtemp(join(tmpdir(), "service-ci-zip-"));
    try {
      const text = new TextEncoder().encode("service-ci\n".repeat(1000));
      const noise = crypto.getRandomValues(new Uint8Array(4096)); // does not deflate: stored
      const modified = new Date("2024-05-06T07:08:10Z");
      await Deno.writeFile(
        join(dir, "a.zip"),
        zipArchive([
          { name: "README.md", data: text, modified },
          { name: "service-ci.exe", data: noise, modified },
        ]),
      );
      const tested = await runCommand("unzip", ["-t", "a.zip"], { cwd: dir });
      assert.equal(tested.code, 0, tested.stdout + tested.stderr);
      const extracted = await runCommand("unzip", ["-q", "a.zip", "-d", "out"], { cwd: dir });
      assert.equal(extracted.code, 0, extracted.stderr);
      assert.deepEqual(await Deno.readFile(join(dir, "out", "README.md")), text);
      assert.deepEqual(await Deno.readFile(join(dir, "out", "service-ci.exe")), noise);
      const listing = await runCommand("unzip", ["-l", "a.zip"], { cwd: dir });
      assert.match(listing.stdout, /2024-05-06 07:08|05-06-2024 07:08/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
);

Deno.test("build.ts --dry-run prints the commands for one --target and runs nothing", async () => {
  await using repo = await _scratchRepository();
  const target = "x86_64-unknown-linux-gnu";
  const result = await _runBuild(repo.dir, ["--dry-run", "--target", target]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 6, result.stdout);
  const [address, compile, copy, tar, sbom, sums] = lines as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  assert.match(address, /^# no built-in service address/);
  assert.equal(
    compile,
    `deno compile -P --no-prompt --quiet --target ${target} --output dist/${target}/service-ci src/main.ts`,
  );
  assert.ok(!/ -A\b| --allow-all\b| --cert\b/.test(compile), compile);
  assert.equal(copy, `cp README.md dist/${target}/README.md`);
  const archive = archiveName(DENO_JSON.version, target);
  assert.equal(tar, `tar -czf dist/${archive} -C dist/${target} service-ci README.md`);
  const sbomFile = sbomName(DENO_JSON.version);
  assert.equal(sbom, `(built-in sbom) deno info --json src/main.ts > dist/${sbomFile}`);
  assert.equal(sums, `(built-in sha256) ${archive} ${sbomFile} > dist/SHA256SUMS`);
  for (const other of TARGETS.filter((name) => name !== target)) {
    assert.ok(!result.stdout.includes(other), `${other} was not asked for`);
  }
  await assert.rejects(Deno.stat(join(repo.dir, "dist")), Deno.errors.NotFound);
});

Deno.test("build.ts --dry-run covers every target by default, with a .zip for each Windows target", async () => {
  await using repo = await _scratchRepository();
  const result = await _runBuild(repo.dir, ["--dry-run", "--out", join(repo.dir, "out")]);
  assert.equal(result.code, 0, result.stderr);
  const lines = result.stdout.split("\n");
  const compiles = lines.filter((line) => line.startsWith("deno compile "));
  assert.deepEqual(
    compiles.map((line) => /--target (\S+)/.exec(line)?.[1]),
    [...TARGETS],
  );
  const zipLines = lines.filter((line) => line.startsWith("(built-in zip) "));
  const windows = ["x86_64-pc-windows-msvc", "aarch64-pc-windows-msvc"] as const;
  assert.equal(zipLines.length, windows.length, result.stdout);
  for (const [index, target] of windows.entries()) {
    const zip = archiveName(DENO_JSON.version, target);
    assert.ok(zipLines[index]?.includes(`out/${zip} `), result.stdout);
    assert.ok(zipLines[index]?.includes(`out/${target}/service-ci.exe`), result.stdout);
  }
  // SHA256SUMS lists every archive, both zips included, and the SBOM.
  const sums = lines.find((line) => line.startsWith("(built-in sha256) "));
  assert.equal(
    sums,
    `(built-in sha256) ${
      [
        ...TARGETS.map((target) => archiveName(DENO_JSON.version, target)),
        sbomName(DENO_JSON.version),
      ]
        .join(" ")
    } > ${join(repo.dir, "out")}/SHA256SUMS`,
  );
  await assert.rejects(Deno.stat(join(repo.dir, "out")), Deno.errors.NotFound);
});

Deno.test("build.ts refuses an unknown --target with exit code 2 and lists the valid ones", async () => {
  await using repo = await _scratchRepository();
  const result = await _runBuild(repo.dir, ["--dry-run", "--target", "x86_64-unknown-freebsd"]);
  assert.equal(result.code, 2);
  assert.match(
    result.stderr,
    /--target must be one of x86_64-unknown-linux-gnu, .*"x86_64-unknown-freebsd"/,
  );
  assert.equal(result.stdout, "");
});

Deno.test("build.ts prints one line when the Deno base runtime cannot be downloaded", async () => {
  await using repo = await _scratchRepository();
  // A proxy that refuses every connection makes the download fail on any machine; a fresh
  // DENO_DIR makes sure no runtime downloaded earlier is reused.
  const proxy = REFUSED_URL;
  const target = "x86_64-unknown-linux-gnu";
  // --no-check: deno compile would type-check the stub entry point again (the release keeps it).
  const result = await _runBuild(repo.dir, ["--target", target, "--no-check"], {
    ..._baseEnv(),
    DENO_DIR: join(repo.dir, "deno_dir"),
    HTTPS_PROXY: proxy,
    HTTP_PROXY: proxy,
    NO_COLOR: "1",
  });
  assert.equal(result.code, 1, result.stderr);
  assert.equal(result.stderr, `${DOWNLOAD_FAILURE_LINE(target)}\n`);
  await assert.rejects(Deno.stat(join(repo.dir, "dist", "SHA256SUMS")), Deno.errors.NotFound);
});

toolTest(
  "build.ts compiles, archives, writes the SBOM and SHA256SUMS (a stand-in base runtime, Linux only)",
  { tools: ["tar", "sha256sum"], onlyOn: ["linux"] },
  async () => {
    await using repo = await _scratchRepository();
    const target = "x86_64-unknown-linux-gnu";
    // The deno binary itself stands in for denort: the result is not a working service-ci,
    // but every step after the download runs for real.
    const result = await _runBuild(repo.dir, ["--target", target, "--no-check"], {
      ..._baseEnv(),
      DENORT_BIN: Deno.execPath(),
      NO_COLOR: "1",
    });
    assert.equal(result.code, 0, result.stderr);
    const archive = archiveName(DENO_JSON.version, target);
    const dist = join(repo.dir, "dist");
    const listing = await runCommand("tar", ["-tzf", join(dist, archive)]);
    assert.deepEqual(listing.stdout.trim().split("\n").toSorted(), ["README.md", "service-ci"]);
    assert.match(
      await Deno.readTextFile(join(dist, "SHA256SUMS")),
      /^[0-9a-f]{64} {2}\S+\n[0-9a-f]{64} {2}\S+\n$/,
    );
    const check = await runCommand("sha256sum", ["-c", "SHA256SUMS"], { cwd: dist });
    assert.equal(check.code, 0, check.stdout + check.stderr);
    const sbom = sbomName(DENO_JSON.version);
    assert.equal(check.stdout, `${archive}: OK\n${sbom}: OK\n`);
    // The stub entry point is the one module compiled in.
    const document = JSON.parse(await Deno.readTextFile(join(dist, sbom)));
    assert.deepEqual(
      document.components.map((component: { name: string }) => component.name),
      ["deno", "src/main.ts"],
    );
  },
);
