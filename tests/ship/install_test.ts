/**
 * Tests scripts/install.sh against a fake release server on 127.0.0.1: it installs only an
 * archive whose SHA-256 matches SHA256SUMS, and reads pinned and latest releases where
 * GitHub keeps them. Over HTTPS with a self-signed certificate (made here with openssl), a
 * download that fails verification is said to be a certificate problem, with how to trust a
 * private CA, and CURL_CA_BUNDLE trusts it for curl and wget alike.
 */

import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { archiveName, sha256sumsLine, TARGETS, zipArchive } from "../../scripts/build.ts";
import { type CommandResult, runCommand } from "../support/command.ts";
import { fakeGh } from "../support/fake_gh.ts";
import { HOST_TARGET, type ReleaseServer, serveRelease, sha256Hex } from "../support/release.ts";
import { startProxy } from "../support/proxy.ts";
import { pki } from "../support/pki.ts";
import { assertShellcheckPasses } from "../support/shellcheck.ts";
import { type ToolOptions, toolTest, which } from "../support/tools.ts";

const SCRIPT = fileURLToPath(new URL("../../scripts/install.sh", import.meta.url));
const VERSION = "1.2.3";
const FAKE_BINARY = `#!/bin/sh\necho "service-ci ${VERSION}"\n`;
const ARCHIVE = archiveName(VERSION, HOST_TARGET);

// install.sh is for Linux and macOS, so its tests do not run on Windows.
const LINUX_AND_MACOS = ["linux", "darwin"] as const;

// What install.sh itself runs.
const INSTALL: ToolOptions = {
  tools: ["sh", "tar", "awk", ["curl", "wget"], ["sha256sum", "shasum"]],
  onlyOn: LINUX_AND_MACOS,
};
const SHELLCHECK: ToolOptions = { tools: ["shellcheck"], onlyOn: LINUX_AND_MACOS };
// A server with a self-signed certificate: one that no system store trusts, as a private CA's.
const TLS: ToolOptions = { ...INSTALL, tools: [...INSTALL.tools, "openssl"] };

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
  const tar = await runCommand("tar", [
    "-czf",
    join(dir, ARCHIVE),
    "-C",
    stage,
    "service-ci",
    "README.md",
  ]);
  assert.equal(tar.code, 0, tar.stderr);
  const archive = await Deno.readFile(join(dir, ARCHIVE));
  return { dir, archive, [Symbol.asyncDispose]: () => rm(dir, { recursive: true, force: true }) };
}

async function _install(
  server: ReleaseServer,
  installDir: string,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<CommandResult> {
  return await runCommand(which("sh") ?? "sh", [SCRIPT, ...args], {
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: installDir,
      SERVICE_CI_DOWNLOAD_URL: server.url,
      SERVICE_CI_INSTALL_DIR: installDir,
      ...env,
    },
  });
}

function _sums(lines: readonly string[]): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(`${lines.join("\n")}\n`);
}

async function _assertNothingInstalled(installDir: string): Promise<void> {
  await assert.rejects(Deno.stat(installDir), Deno.errors.NotFound);
}

toolTest(
  "install.sh installs a pinned version whose SHA-256 matches, and the binary runs",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE),
      sha256sumsLine("0".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
    ]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
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

toolTest(
  "install.sh takes the version from SERVICE_CI_VERSION, with or without a leading v",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });

    const result = await _install(server, join(scratch.dir, "bin"), [], {
      SERVICE_CI_VERSION: `v${VERSION}`,
    });

    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requested[0], `/releases/download/v${VERSION}/SHA256SUMS`);
  },
);

toolTest(
  "install.sh installs the latest release, reading the archive's name from SHA256SUMS",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine("1".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
      sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE),
    ]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
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

toolTest(
  "install.sh --target installs another machine's build (the latest Windows .zip) without running it",
  { ...INSTALL, tools: [...INSTALL.tools, "unzip"] },
  async () => {
    await using scratch = await _scratch();
    const target = "x86_64-pc-windows-msvc";
    const zip = archiveName(VERSION, target);
    // Not a Windows program: if install.sh tried to run it, this machine would fail to.
    const bytes = zipArchive([{
      name: "service-ci.exe",
      data: new Uint8Array([0x4d, 0x5a, 0x90, 0x00]),
      modified: new Date(),
    }]) as Uint8Array<ArrayBuffer>;
    const sums = _sums([
      sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE),
      sha256sumsLine(await sha256Hex(bytes), zip),
    ]);
    await using server = serveRelease({ SHA256SUMS: sums, [zip]: bytes });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--target", target]);

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(server.requested, [
      "/releases/latest/download/SHA256SUMS",
      `/releases/latest/download/${zip}`,
    ]);
    assert.equal(
      result.stdout,
      `installed ${installDir}/service-ci.exe (built for ${target}; not run on this machine)\n`,
    );
    assert.deepEqual(
      await Deno.readFile(join(installDir, "service-ci.exe")),
      new Uint8Array([0x4d, 0x5a, 0x90, 0x00]),
    );

    const wrong = await _install(server, installDir, ["--target", "riscv64-linux"]);
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--target must be one of .* \(got "riscv64-linux"\)/);
  },
);

toolTest(
  "install.sh refuses an archive whose SHA-256 does not match SHA256SUMS and installs nothing",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const wrong = "ab".repeat(32);
    const sums = _sums([sha256sumsLine(wrong, ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION]);

    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(`checksum mismatch for ${ARCHIVE.replaceAll(".", "\\.")}`),
    );
    assert.ok(result.stderr.includes(wrong), result.stderr);
    assert.ok(result.stderr.includes(await sha256Hex(scratch.archive)), result.stderr);
    assert.equal(result.stdout, "");
    await _assertNothingInstalled(installDir);
  },
);

toolTest(
  "install.sh refuses when SHA256SUMS has no line for the archive and downloads nothing else",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const sums = _sums([
      sha256sumsLine("2".repeat(64), archiveName(VERSION, "x86_64-pc-windows-msvc")),
    ]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
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

toolTest(
  "install.sh refuses a version that is not a release version, with exit code 2",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    await using server = serveRelease({});
    const result = await _install(server, join(scratch.dir, "bin"), ["--version", "../../x"]);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /--version must be a release version such as 1\.2\.3, or latest/);
    assert.deepEqual(server.requested, []);
  },
);

toolTest(
  "install.sh refuses a plain http:// download address to a remote host",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    await using server = serveRelease({});
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

toolTest(
  "install.sh falls back to wget and shasum -a 256 where curl and sha256sum are missing",
  { tools: FALLBACK_TOOLS, onlyOn: ["linux"] }, // where both fallbacks are sure to be installed
  async () => {
    await using scratch = await _scratch();
    const bin = join(scratch.dir, "path");
    await Deno.mkdir(bin);
    for (const tool of FALLBACK_TOOLS) await Deno.symlink(which(tool)!, join(bin, tool));
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION], { PATH: bin });

    assert.equal(result.code, 0, result.stderr);
    assert.equal(server.requested.length, 2);
    for (const agent of server.userAgents) assert.match(agent, /^Wget\//);
    assert.equal(result.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);
  },
);

toolTest(
  "install.sh --verify-attestation checks the verified archive with gh attestation verify --repo",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const gh = await fakeGh(scratch.dir);
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");
    const path = `${gh.bin}:${Deno.env.get("PATH") ?? ""}`;

    const flag = await _install(
      server,
      installDir,
      ["--version", VERSION, "--verify-attestation"],
      {
        PATH: path,
      },
    );
    assert.equal(flag.code, 0, flag.stderr);
    const calls = await gh.calls();
    assert.equal(calls.length, 1);
    assert.match(
      calls[0]!,
      new RegExp(
        `^gh attestation verify \\S+/${
          ARCHIVE.replaceAll(".", "\\.")
        } --repo service-ci/service-ci$`,
      ),
    );
    // gh saw the very bytes SHA256SUMS vouched for.
    assert.deepEqual(await gh.verified(), [await sha256Hex(scratch.archive)]);
    assert.equal(flag.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);

    const env = await _install(server, installDir, ["--version", VERSION], {
      PATH: path,
      SERVICE_CI_VERIFY_ATTESTATION: "1",
      SERVICE_CI_ATTESTATION_REPO: "acme/service-ci-fork",
    });
    assert.equal(env.code, 0, env.stderr);
    assert.match((await gh.calls())[1]!, / --repo acme\/service-ci-fork$/);
  },
);

toolTest(
  "install.sh does not run gh unless asked to verify the attestation",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const gh = await fakeGh(scratch.dir, { exitCode: 1 });
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });

    const result = await _install(server, join(scratch.dir, "bin"), ["--version", VERSION], {
      PATH: `${gh.bin}:${Deno.env.get("PATH") ?? ""}`,
      SERVICE_CI_VERIFY_ATTESTATION: "0",
    });

    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(await gh.calls(), []);
  },
);

toolTest(
  "install.sh refuses an archive whose attestation gh cannot verify, and installs nothing",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    const gh = await fakeGh(scratch.dir, { exitCode: 1 });
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = serveRelease({ SHA256SUMS: sums, [ARCHIVE]: scratch.archive });
    const installDir = join(scratch.dir, "bin");

    const result = await _install(server, installDir, ["--version", VERSION], {
      PATH: `${gh.bin}:${Deno.env.get("PATH") ?? ""}`,
      SERVICE_CI_VERIFY_ATTESTATION: "1",
    });

    assert.equal(result.code, 1);
    assert.match(result.stderr, /gh: no attestations found/);
    assert.match(
      result.stderr,
      new RegExp(
        `attestation check failed for ${
          ARCHIVE.replaceAll(".", "\\.")
        }: .* service-ci/service-ci .*; not installing`,
      ),
    );
    assert.equal(result.stdout, "");
    await _assertNothingInstalled(installDir);
  },
);

toolTest(
  "install.sh --verify-attestation without gh on PATH stops before downloading anything",
  { tools: ["sh"], onlyOn: LINUX_AND_MACOS },
  async () => {
    await using scratch = await _scratch();
    const bin = join(scratch.dir, "path");
    await Deno.mkdir(bin);
    await Deno.symlink(which("sh")!, join(bin, "sh"));
    await using server = serveRelease({});

    const result = await _install(server, join(scratch.dir, "bin"), ["--verify-attestation"], {
      PATH: bin,
    });

    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /--verify-attestation needs the GitHub CLI \(gh\) on PATH/);
    assert.deepEqual(server.requested, []);
  },
);

toolTest(
  "install.sh refuses an attestation repository or a SERVICE_CI_VERIFY_ATTESTATION it cannot use",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    await using server = serveRelease({});
    const cases: [Record<string, string>, RegExp][] = [
      [
        { SERVICE_CI_ATTESTATION_REPO: "acme" },
        /must be an owner\/name repository .*\(got "acme"\)/,
      ],
      [{ SERVICE_CI_ATTESTATION_REPO: "a/b/c" }, /\(got "a\/b\/c"\)/],
      [{ SERVICE_CI_ATTESTATION_REPO: "a/b c" }, /\(got "a\/b c"\)/],
      [{ SERVICE_CI_VERIFY_ATTESTATION: "yes" }, /SERVICE_CI_VERIFY_ATTESTATION must be 1 or 0/],
    ];
    for (const [env, message] of cases) {
      const result = await _install(server, join(scratch.dir, "bin"), [], env);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, message);
    }
    assert.deepEqual(server.requested, []);
  },
);

toolTest(
  "install.sh accepts exactly the release targets of scripts/build.ts",
  INSTALL,
  async () => {
    await using scratch = await _scratch();
    // No release: a target that passes the check fails later, at the download (exit 1).
    await using server = serveRelease({});
    for (const target of TARGETS) {
      const result = await _install(server, join(scratch.dir, "bin"), ["--target", target]);
      assert.equal(result.code, 1, `${target}: ${result.stderr}`);
      assert.match(
        result.stderr,
        /could not download .*\/latest\/download\/SHA256SUMS: (404 Not Found \(|the server answered with an error \(wget's exit code 8\); )is there a published release\?\)?$/m,
      );
    }
    const help = await _install(server, join(scratch.dir, "bin"), ["--help"]);
    const listed = help.stdout.match(/\b[\w]+-(?:unknown|apple|pc)-[\w-]+/g) ?? [];
    assert.deepEqual(listed, [...TARGETS]);
    const wrong = await _install(server, join(scratch.dir, "bin"), ["--target", "x86_64"]);
    assert.equal(wrong.code, 2);
    assert.ok(
      wrong.stderr.includes(`one of ${TARGETS.slice(0, -1).join(", ")} or ${TARGETS.at(-1)}`),
    );
  },
);

/** A certificate for 127.0.0.1 from the tests' private CA, its key, and the CA's file to trust. */
async function _privateTls(): Promise<{ cert: string; key: string; certFile: string }> {
  const { caPem, serverCert, serverKey } = await pki();
  return { cert: serverCert, key: serverKey, certFile: caPem };
}

/** {@linkcode serveRelease} over HTTPS, with `tls`'s certificate; `url` carries `userinfo`. */
function _serveReleaseTls(
  files: Readonly<Record<string, Uint8Array<ArrayBuffer>>>,
  tls: { readonly cert: string; readonly key: string },
  userinfo: string,
): ReleaseServer {
  const requested: string[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: tls.cert, key: tls.key, onListen: () => {} },
    (request) => {
      const path = new URL(request.url).pathname;
      requested.push(path);
      const name = /^\/releases\/download\/v[^/]+\/([^/]+)$/.exec(path)?.[1];
      const body = name === undefined ? undefined : files[name];
      return body === undefined
        ? new Response("not found", { status: 404 })
        : new Response(body, { headers: { "content-type": "application/octet-stream" } });
    },
  );
  return {
    url: `https://${userinfo}@127.0.0.1:${server.addr.port}/releases`,
    requested,
    userAgents: [],
    [Symbol.asyncDispose]: () => server.shutdown(),
  };
}

const DOWNLOAD_PASSWORD = "dl-pw-3f9a1c";
const PROXY_PASSWORD = "proxy-pw-7b2e4d";

// A proxy with credentials in the environment (as in Jenkins), which 127.0.0.1 bypasses.
const PROXY_ENV = {
  HTTPS_PROXY: `http://ci-proxy:${PROXY_PASSWORD}@127.0.0.1:9`,
  https_proxy: `http://ci-proxy:${PROXY_PASSWORD}@127.0.0.1:9`,
  NO_PROXY: "127.0.0.1",
  no_proxy: "127.0.0.1",
};

toolTest(
  "install.sh says a proxy that asks for a login (407) is that, names the variable for it, and prints no password",
  { ...INSTALL, tools: ["sh", "tar", "awk", "curl", ["sha256sum", "shasum"]] },
  async () => {
    await using scratch = await _scratch();
    // Nothing reaches the release server: the proxy refuses the tunnel to it.
    await using server = serveRelease({});
    await using proxy = startProxy("refuse");
    const installDir = join(scratch.dir, "bin");
    const login = proxy.url.replace("//", `//ci-proxy:${PROXY_PASSWORD}@`);
    const result = await _install(server, installDir, ["--version", VERSION], {
      SERVICE_CI_DOWNLOAD_URL: "https://releases.example/acme/service-ci/releases",
      HTTPS_PROXY: login,
      https_proxy: login,
    });
    assert.equal(result.code, 1, result.stderr);
    assert.match(
      result.stderr,
      /could not download https:\/\/releases\.example\/acme\/service-ci\/releases\/download\/v1\.2\.3\/SHA256SUMS: the proxy asks for a login \(407 Proxy Authentication Required\): give it in the proxy's variable, HTTPS_PROXY=http:\/\/user:password@host:port/,
    );
    assert.doesNotMatch(result.stderr, /published release/);
    assert.ok(!result.stderr.includes(PROXY_PASSWORD), result.stderr);
    assert.match(proxy.requests[0] ?? "", /^CONNECT releases\.example:443 /);
    await _assertNothingInstalled(installDir);
  },
);

// What install.sh says after a download whose certificate did not verify.
async function _assertCertificateProblem(
  result: CommandResult,
  server: ReleaseServer,
  trust: RegExp,
  installDir: string,
): Promise<void> {
  assert.equal(result.code, 1, result.stderr);
  const shown = server.url.replace(/\/\/[^@]*@/, "//");
  assert.match(
    result.stderr,
    new RegExp(
      `could not download ${
        shown.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
      }/download/v${VERSION}/SHA256SUMS: the server's TLS certificate could not be verified \\(a certificate problem, not a missing release\\)`,
    ),
  );
  assert.match(result.stderr, /private CA/);
  assert.match(result.stderr, trust);
  assert.doesNotMatch(result.stderr, /published release/);
  for (const secret of [DOWNLOAD_PASSWORD, PROXY_PASSWORD]) {
    assert.ok(!result.stderr.includes(secret), `the password ${secret} in:\n${result.stderr}`);
    assert.ok(!result.stdout.includes(secret), result.stdout);
  }
  await _assertNothingInstalled(installDir);
}

toolTest(
  "install.sh says curl's certificate failure is a certificate problem, how to trust a private CA, and names no password",
  { ...TLS, tools: [...TLS.tools, "curl"] },
  async () => {
    await using scratch = await _scratch();
    const tls = await _privateTls();
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = _serveReleaseTls(
      { SHA256SUMS: sums, [ARCHIVE]: scratch.archive },
      tls,
      `ci-user:${DOWNLOAD_PASSWORD}`,
    );
    const installDir = join(scratch.dir, "bin");

    const refused = await _install(server, installDir, ["--version", VERSION], PROXY_ENV);
    await _assertCertificateProblem(
      refused,
      server,
      /CURL_CA_BUNDLE=\S+ sh install\.sh\b.*curl --cacert /,
      installDir,
    );
    assert.match(refused.stderr, /SSL certificate problem/, "curl's own line stays");

    // A CA file curl cannot read is said as such.
    const unreadable = await _install(server, installDir, ["--version", VERSION], {
      CURL_CA_BUNDLE: join(scratch.dir, "no-such-ca.pem"),
    });
    assert.equal(unreadable.code, 1, unreadable.stderr);
    assert.match(
      unreadable.stderr,
      /curl could not read the CA file CURL_CA_BUNDLE names \(".*no-such-ca\.pem"\)/,
    );
    assert.doesNotMatch(unreadable.stderr, /published release/);

    // The advice works: CURL_CA_BUNDLE names the certificate, and the install goes through.
    const trusted = await _install(server, installDir, ["--version", VERSION], {
      ...PROXY_ENV,
      CURL_CA_BUNDLE: tls.certFile,
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(trusted.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);
  },
);

toolTest(
  "install.sh says wget's certificate failure is a certificate problem, and gives wget CURL_CA_BUNDLE as --ca-certificate",
  { tools: [...FALLBACK_TOOLS, "openssl"], onlyOn: ["linux"] },
  async () => {
    await using scratch = await _scratch();
    const tls = await _privateTls();
    const bin = join(scratch.dir, "path");
    await Deno.mkdir(bin);
    for (const tool of FALLBACK_TOOLS) await Deno.symlink(which(tool)!, join(bin, tool));
    const sums = _sums([sha256sumsLine(await sha256Hex(scratch.archive), ARCHIVE)]);
    await using server = _serveReleaseTls(
      { SHA256SUMS: sums, [ARCHIVE]: scratch.archive },
      tls,
      `ci-user:${DOWNLOAD_PASSWORD}`,
    );
    const installDir = join(scratch.dir, "bin");

    const refused = await _install(server, installDir, ["--version", VERSION], {
      ...PROXY_ENV,
      PATH: bin,
    });
    await _assertCertificateProblem(
      refused,
      server,
      /CURL_CA_BUNDLE.*--ca-certificate/,
      installDir,
    );

    const trusted = await _install(server, installDir, ["--version", VERSION], {
      ...PROXY_ENV,
      PATH: bin,
      CURL_CA_BUNDLE: tls.certFile,
    });
    assert.equal(trusted.code, 0, trusted.stderr);
    assert.equal(trusted.stdout, `installed ${installDir}/service-ci: service-ci ${VERSION}\n`);
  },
);

toolTest("install.sh passes shellcheck -s sh", SHELLCHECK, async () => {
  await assertShellcheckPasses([SCRIPT]);
});
