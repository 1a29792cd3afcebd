/**
 * Tests scripts/install.sh against a fake release server on 127.0.0.1: it installs only an
 * archive whose SHA-256 matches SHA256SUMS, and reads pinned and latest releases where
 * GitHub keeps them.
 */

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { archiveName, sha256sumsLine, type Target } from "../scripts/build.ts";

const SCRIPT = fileURLToPath(new URL("../scripts/install.sh", import.meta.url));
const VERSION = "1.2.3";
const FAKE_BINARY = `#!/bin/sh\necho "service-ci ${VERSION}"\n`;

// The target install.sh should pick on this machine (it reads uname; Deno knows the same).
const HOST_TARGET = `${Deno.build.arch}-${
  Deno.build.os === "darwin" ? "apple-darwin" : "unknown-linux-gnu"
}` as Target;
const ARCHIVE = archiveName(VERSION, HOST_TARGET);

// A test that needs programs: skipped where one is missing, failed with a clear message in CI.
// install.sh is for Linux and macOS, so these tests do not run on Windows. Each entry of
// `tools` lists programs of which one is enough.
function _toolTest(
  name: string,
  tools: readonly (readonly string[])[],
  fn: () => Promise<void>,
  os: readonly (typeof Deno.build.os)[] = ["linux", "darwin"],
): void {
  const missing = tools.filter((choices) => !choices.some(_onPath));
  Deno.test({
    name,
    ignore: !os.includes(Deno.build.os) || (missing.length > 0 && Deno.env.get("CI") !== "true"),
    fn: async () => {
      if (missing.length > 0) {
        throw new Error(
          `CI=true but this test needs ${
            missing.map((choices) => choices.join(" or ")).join(", ")
          } on PATH (install it; ci.yml does)`,
        );
      }
      await fn();
    },
  });
}

function _onPath(program: string): boolean {
  return _which(program) !== undefined;
}

function _which(program: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(delimiter)) {
    try {
      const path = join(dir, program);
      if (dir !== "" && Deno.statSync(path).isFile) return path;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

// What install.sh itself runs.
const INSTALL_TOOLS = [["sh"], ["tar"], ["awk"], ["curl", "wget"], ["sha256sum", "shasum"]];

async function _sha256Hex(bytes: Uint8Array<ArrayBuffer>): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

interface Scratch extends AsyncDisposable {
  readonly dir: string;
  /** The release archive: a tar.gz holding a `service-ci` script that prints its version. */
  readonly archive: Uint8Array<ArrayBuffer>;
}

async function _scratch(): Promise<Scratch> {
  const dir = await mkdtemp(join(tmpdir(), "service-ci-install-"));
  const stage = join(dir, "stage");
  await Deno.mkdir(stage);
  await Deno.writeTextFile(join(stage, "service-ci"), FAKE_BINARY, { mode: 0o755 });
  await Deno.writeTextFile(join(stage, "README.md"), "# service-ci\n");
  const tar = await new Deno.Command("tar", {
    args: ["-czf", join(dir, ARCHIVE), "-C", stage, "service-ci", "README.md"],
    stdin: "null",
  }).output();
  assert.equal(tar.code, 0, new TextDecoder().decode(tar.stderr));
  const archive = await Deno.readFile(join(dir, ARCHIVE));
  return { dir, archive, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}

interface ReleaseServer extends AsyncDisposable {
  /** The base URL to give as SERVICE_CI_DOWNLOAD_URL. */
  readonly url: string;
  /** The paths requested, in order. */
  readonly requested: readonly string[];
  /** The User-Agent of each request, in order. */
  readonly userAgents: readonly string[];
}

// Serves the same files under /releases/download/v<VERSION>/ and /releases/latest/download/,
// as GitHub does for the latest release; anything else is a 404.
function _serveRelease(files: Readonly<Record<string, Uint8Array<ArrayBuffer>>>): ReleaseServer {
  const requested: string[] = [];
  const userAgents: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (request) => {
      const path = new URL(request.url).pathname;
      requested.push(path);
      userAgents.push(request.headers.get("user-agent") ?? "");
      const match = /^\/releases\/(?:download\/v[^/]+|latest\/download)\/([^/]+)$/.exec(path);
      const body = match?.[1] === undefined ? undefined : files[match[1]];
      return body === undefined
        ? new Response("not found", { status: 404 })
        : new Response(body, { headers: { "content-type": "application/octet-stream" } });
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/releases`,
    requested,
    userAgents,
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

async function _install(
  server: ReleaseServer,
  installDir: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const output = await new Deno.Command(_which("sh") ?? "sh", {
    args: [SCRIPT, ...args],
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: installDir,
      SERVICE_CI_DOWNLOAD_URL: server.url,
      SERVICE_CI_INSTALL_DIR: installDir,
      ...env,
    },
    stdin: "null",
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

function _sums(lines: readonly string[]): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`${lines.join("\n")}\n`);
}

async function _assertNothingInstalled(installDir: string): Promise<void> {
  await assert.rejects(Deno.stat(installDir), Deno.errors.NotFound);
}

_toolTest(
  "install.sh installs a pinned version whose SHA-256 matches, and the binary runs",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine(await _sha256Hex(scratch.archive), ARCHIVE),
      sha256sumsLine("0".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
    ]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION]);

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(server.requested, [
      `/releases/download/v${VERSION}/SHA256SUMS`,
      `/releases/download/v${VERSION}/${ARCHIVE}`,
    ]);
    assert.equal(result.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);
    const installed = join(installDir, "service-ci");
    assert.equal((await Deno.stat(installed)).mode! & 0o777, 0o755);
    const run = await new Deno.Command(installed, { args: ["--version"] }).output();
    assert.equal(new TextDecoder().decode(run.stdout), `service-ci ${VERSION}\n`);
    assert.deepEqual([...Deno.readDirSync(installDir)].map((entry) => entry.name), ["service-ci"]);
  },
);

_toolTest(
  "install.sh takes the version from SERVICE_CI_VERSION, with or without a leading v",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([sha256sumsLine(await _sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });

    const result = await _install(server, join(scratch.dir, "bin"), [], {
      SERVICE_CI_VERSION: `v${VERSION}`,
    });

    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requested[0], `/releases/download/v${VERSION}/SHA256SUMS`);
  },
);

_toolTest(
  "install.sh installs the latest release, reading the archive's name from SHA256SUMS",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine("1".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
      sha256sumsLine(await _sha256Hex(scratch.archive), ARCHIVE),
    ]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--dir", installDir]);

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(server.requested, [
      "/releases/latest/download/SHA256SUMS",
      `/releases/latest/download/${ARCHIVE}`,
    ]);
    assert.match(result.stdout, new RegExp(`service-ci ${VERSION.replaceAll(".", "\\.")}\\n$`));
  },
);

_toolTest(
  "install.sh refuses an archive whose SHA-256 does not match SHA256SUMS and installs nothing",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const wrong = "ab".repeat(32);
    const sums = _sums([sha256sumsLine(wrong, ARCHIVE)]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION]);

    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`checksum mismatch for ${ARCHIVE.replaceAll(".", "\\.")}`),
    );
    assert.ok(result.stderr.includes(wrong), result.stderr);
    assert.ok(result.stderr.includes(await _sha256Hex(scratch.archive)), result.stderr);
    assert.equal(result.stdout, "");
    await _assertNothingInstalled(installDir);
  },
);

_toolTest(
  "install.sh refuses when SHA256SUMS has no line for the archive and downloads nothing else",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine("2".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
    ]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const pinned = await _install(server, installDir, ["--version", VERSION]);
    assert.equal(pinned.code, 1);
    assert.match(
      pinned.stderr,
      new RegExp(`SHA256SUMS has no line for ${ARCHIVE.replaceAll(".", "\\.")}`),
    );

    const latest = await _install(server, installDir, []);
    assert.equal(latest.code, 1);
    assert.match(latest.stderr, new RegExp(`lists no archive for ${HOST_TARGET}`));

    assert.ok(!server.requested.some((path) => path.endsWith(ARCHIVE)), String(server.requested));
    await _assertNothingInstalled(installDir);
  },
);

_toolTest(
  "install.sh refuses a version that is not a release version, with exit code 2",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using server = _serveRelease({});
    const result = await _install(server, join(scratch.dir, "bin"), ["--version", "../../x"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--version must be a release version such as 1\.2\.3, or latest/);
    assert.deepEqual(server.requested, []);
  },
);

_toolTest(
  "install.sh refuses a plain http:// download address to a remote host",
  INSTALL_TOOLS,
  async () => {
    await using scratch = await _scratch();
    await using server = _serveRelease({});
    const result = await _install(server, join(scratch.dir, "bin"), [], {
      SERVICE_CI_DOWNLOAD_URL: "http://127.0.0.1.example.com/releases",
    });
    assert.equal(result.code, 2);
    assert.match(result.stderr, /SERVICE_CI_DOWNLOAD_URL must be an https:\/\/ address/);
  },
);

// Everything install.sh runs, and what tar -z runs, except the programs it prefers.
const FALLBACK_TOOLS = [
  "sh",
  "uname",
  "mktemp",
  "rm",
  "awk",
  "cut",
  "tar",
  "gzip",
  "mkdir",
  "cp",
  "chmod",
  "mv",
  "wget",
  "shasum",
];

_toolTest(
  "install.sh falls back to wget and shasum -a 256 where curl and sha256sum are missing",
  FALLBACK_TOOLS.map((tool) => [tool]),
  async () => {
    await using scratch = await _scratch();
    const bin = join(scratch.dir, "path");
    await Deno.mkdir(bin);
    for (const tool of FALLBACK_TOOLS) await Deno.symlink(_which(tool)!, join(bin, tool));
    const sums = _sums([sha256sumsLine(await _sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = _serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION], { PATH: bin });

    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requested.length, 2);
    for (const agent of server.userAgents) assert.match(agent, /^Wget\//);
    assert.equal(result.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);
  },
  ["linux"], // where both fallbacks are sure to be installed
);

_toolTest("install.sh passes shellcheck -s sh", [["shellcheck"]], async () => {
  const output = await new Deno.Command("shellcheck", {
    args: ["--shell=sh", "--severity=style", SCRIPT],
    stdin: "null",
  }).output();
  assert.equal(output.code, 0, new TextDecoder().decode(output.stdout));
});
