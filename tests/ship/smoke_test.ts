/**
 * scripts/smoke.ts, the checks every way service-ci ships goes through on its own runner: here it
 * runs against `deno run` with the compile step's flags and must pass, and against commands that
 * are not service-ci, or are noisy, and must fail.
 */

import assert from "node:assert/strict";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileArgs } from "../../scripts/build.ts";
import { denoNoise, formatResults, main, sourceCommand } from "../../scripts/smoke.ts";
import { runCommand } from "../support/command.ts";
import { taskArgs } from "../support/tasks.ts";
import { assertShellcheckPasses } from "../support/shellcheck.ts";
import { onPath, toolTest } from "../support/tools.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

// `deno task smoke <args>`, as the task runs it, from the repository's root.
async function _smoke(args: readonly string[]) {
  return await runCommand(Deno.execPath(), [...taskArgs("smoke"), ...args], { cwd: ROOT });
}

function _lines(stdout: string): string[] {
  return stdout.trimEnd().split("\n");
}

Deno.test("the smoke script passes every check against deno run with the compile step's flags", async () => {
  const result = await _smoke(["--source"]);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const lines = _lines(result.stdout);
  assert.match(lines[0] ?? "", /^smoke: .* run --config \S+deno\.json -P --no-prompt --quiet /);
  const checks = lines.slice(1, -1);
  assert.ok(checks.every((line) => /^(?:ok {2}|skip) {2}/.test(line)), result.stdout);
  for (
    const name of [
      '--version prints "service-ci ',
      "--help exits 0",
      "no arguments exits 2 with the one-line usage error",
      "a passing gate exits 0",
      "a failing gate exits 1",
      "an unchecked gate exits 3",
      "--json prints a report that docs/report.schema.json accepts",
      "--junit writes a report",
      "SIGINT during a wait exits 130",
      "the key appears in no output",
      "no Deno noise",
    ]
  ) {
    assert.ok(checks.some((line) => line.includes(name)), `no check "${name}":\n${result.stdout}`);
  }
  const skipped = checks.filter((line) => line.startsWith("skip")).length;
  assert.equal(lines.at(-1), `${checks.length - skipped} passed, 0 failed`);
  if (onPath("xmllint")) {
    assert.ok(checks.includes("ok    --junit writes a report that the Jenkins JUnit XSD accepts"));
  }
  if (Deno.build.os !== "windows") assert.equal(skipped, 0, result.stdout);
});

Deno.test("the smoke script fails against a command that always exits 0", async () => {
  const result = await _smoke(["--", Deno.execPath(), "eval", "0"]);
  assert.equal(result.code, 1, result.stdout + result.stderr);
  const failed = _lines(result.stdout).filter((line) => line.startsWith("FAIL"));
  const expected = [
    "--version prints",
    "--help exits 0",
    "no arguments exits 2",
    "a failing gate exits 1",
    "an unchecked gate exits 3",
    "--json prints a report",
    "--junit writes a report",
    ...(Deno.build.os === "windows" ? [] : ["SIGINT during a wait exits 130"]),
  ];
  for (const name of expected) {
    assert.ok(
      failed.some((line) => line.includes(name)),
      `"${name}" did not fail:\n${result.stdout}`,
    );
  }
  assert.match(
    _lines(result.stdout).at(-1) ?? "",
    new RegExp(`^\\d+ passed, ${failed.length} failed$`),
  );
});

Deno.test(
  "the smoke script fails on Deno's own lines: deno run without --quiet names a missing --allow-run program",
  { ignore: onPath("buildkite-agent") },
  async () => {
    const loud = sourceCommand().filter((arg) => arg !== "--quiet");
    const result = await _smoke(["--no-sigint", "--", ...loud]);
    assert.equal(result.code, 1, result.stdout + result.stderr);
    const detail = result.stdout.slice(result.stdout.indexOf("FAIL  no Deno noise"));
    assert.match(detail, /^ {4}--version: Info .*buildkite-agent/m, result.stdout);
  },
);

Deno.test("sourceCommand() runs src/main.ts with exactly the flags deno compile bakes in", () => {
  const compile = compileArgs("x86_64-unknown-linux-gnu", { entry: "src/main.ts", outDir: "dist" });
  const flags = compile.slice(1, compile.indexOf("--target"));
  const command = sourceCommand();
  assert.deepEqual(command.slice(0, 4), [
    Deno.execPath(),
    "run",
    "--config",
    fileURLToPath(new URL("../../deno.json", import.meta.url)),
  ]);
  assert.deepEqual(command.slice(4, -1), flags);
  assert.equal(command.at(-1), fileURLToPath(new URL("../../src/main.ts", import.meta.url)));
});

Deno.test("denoNoise() finds prompts, downloads, compile steps and runtime warnings, and nothing else", () => {
  const noisy = [
    "Download https://registry.npmjs.org/ajv",
    "Compile file:///app/src/main.ts to service-ci",
    "Check file:///app/src/main.ts",
    "Warning Implicitly using latest version",
    "Info Failed to resolve 'buildkite-agent' for allow-run",
    '┏ ⚠️  Deno requests env access to "SERVICE_API_KEY".',
    "\x1b[33mWarning\x1b[0m something",
    "error: Uncaught (in promise) NotCapable: Requires net access",
  ];
  for (const line of noisy) assert.deepEqual(denoNoise(`PASSED\n${line}\n`), [line], line);
  const quiet = [
    "service-ci 1.1.0 → http://127.0.0.1:8787 (1 agent, timeout 2 min)",
    "guardian-prod-readiness: triggered run run_0001",
    "PASSED: the gate of guardian-prod-readiness passed (toxicity < 0.01)",
    "Checked 3 agents",
  ];
  assert.deepEqual(denoNoise(quiet.join("\n")), []);
});

Deno.test("formatResults() prints ok, FAIL with its detail, skip, then the counts without skips", () => {
  assert.deepEqual(
    formatResults([
      { name: "a", ok: true, detail: "" },
      { name: "b", ok: false, detail: "exit 0" },
      { name: "c", ok: true, detail: "", skipped: "Windows" },
    ]),
    ["ok    a", "FAIL  b", "    exit 0", "skip  c (Windows)", "1 passed, 1 failed"],
  );
});

Deno.test("the smoke script's usage errors exit 2: no command, or a command and --source", async () => {
  const error = console.error;
  const printed: string[] = [];
  console.error = (...args: unknown[]) => printed.push(args.join(" "));
  try {
    assert.equal(await main([]), 2);
    assert.equal(await main(["--source", "--", "service-ci"]), 2);
    assert.equal(await main(["--reports-as", "/reports", "--", "service-ci"]), 2);
  } finally {
    console.error = error;
  }
  assert.match(printed.join("\n"), /give the command that starts service-ci after --, or --source/);
  assert.match(printed.join("\n"), /give --source or a command, not both/);
  assert.match(printed.join("\n"), /--reports-as needs --reports/);
});

// The Dockerfile's default command (its last CMD, in exec form), as words.
function _imageCmd(): string[] {
  const dockerfile = Deno.readTextFileSync(join(ROOT, "Dockerfile"));
  const cmd = [...dockerfile.matchAll(/^CMD\s+(\[.*\])\s*$/gm)].at(-1)?.[1];
  assert.ok(cmd, "the Dockerfile has a CMD in exec form");
  return JSON.parse(cmd);
}

// A stand-in for docker: `image inspect` answers the user and size given in FAKE_USER and
// FAKE_SIZE, `run … id -u` the uid in FAKE_UID, and `run … <image> service-ci <args>` runs the
// source with the compile step's flags, the mounted directory's container path turned into its
// host path, as docker would have it. `run … <image>` with no command runs the Dockerfile's CMD,
// or the words of FAKE_CMD when set (a program other than service-ci runs as it is). It logs its calls to <dir>/calls itself: the smoke script
// gives the commands it runs none of its own environment.
async function _fakeDocker(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;
  const source = sourceCommand().map(quote).join(" ");
  const cmd = _imageCmd().map(quote).join(" ");
  await Deno.writeTextFile(
    join(bin, "docker"),
    `#!/bin/sh
printf '%s\\n' "docker $*" >> '${join(dir, "calls")}'
case "$1 $2" in
  "image inspect")
    case "$4" in
      *User*) printf '%s\\n' "$FAKE_USER" ;;
      *Size*) printf '%s\\n' "$FAKE_SIZE" ;;
    esac
    exit 0
    ;;
esac
host=
while [ "$#" -gt 0 ] && [ "$1" != service-ci ] && [ "$1" != id ]; do
  if [ "$1" = --volume ]; then host=\${2%%:*}; fi
  shift
done
if [ "$#" -eq 0 ]; then
  if [ -n "\${FAKE_CMD:-}" ]; then set -- $FAKE_CMD; else set -- ${cmd}; fi
fi
if [ "$1" = id ]; then printf '%s\\n' "$FAKE_UID"; exit 0; fi
if [ "$1" != service-ci ]; then exec "$@"; fi
shift
for arg in "$@"; do
  shift
  case $arg in /reports/*) arg=$host\${arg#/reports} ;; esac
  set -- "$@" "$arg"
done
exec ${source} "$@"
`,
    { mode: 0o755 },
  );
  return bin;
}

/**
 * Runs smoke_image.sh against the fake docker. With `smoke: "stubbed"`, `deno task --quiet smoke`
 * (the smoke checks through docker run, the same in every run and played in full by the first
 * test below) is a stand-in that passes, so a test of the image's user, size or default command
 * does not replay them; any other deno command runs the real one.
 */
async function _smokeImage(
  env: Record<string, string>,
  { smoke = "real" }: { smoke?: "real" | "stubbed" } = {},
) {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-smoke-image-" });
  try {
    const bin = await _fakeDocker(dir);
    if (smoke === "stubbed") {
      await Deno.writeTextFile(
        join(bin, "deno"),
        `#!/bin/sh
if [ "$1 $2 $3" = "task --quiet smoke" ]; then
  printf '%s\\n' "deno $*" >> '${join(dir, "calls")}'
  printf 'ok    the smoke checks (stubbed)\\n'
  exit 0
fi
exec '${Deno.execPath()}' "$@"
`,
        { mode: 0o755 },
      );
    }
    const calls = join(dir, "calls");
    await Deno.writeTextFile(calls, "");
    const result = await runCommand("sh", ["scripts/smoke_image.sh", "ci:smoke"], {
      cwd: ROOT,
      env: { PATH: `${bin}${delimiter}${Deno.env.get("PATH") ?? ""}`, ...env },
    });
    return { ...result, calls: (await Deno.readTextFile(calls)).trimEnd().split("\n") };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** The stand-in passed the smoke checks: only the check under test failed. */
function _assertSmokeStubbed(result: { stdout: string; calls: string[] }): void {
  assert.match(result.stdout, /^ok {4}the smoke checks \(stubbed\)$/m);
  assert.equal(result.stdout.match(/^FAIL/gm)?.length, 1, result.stdout);
  assert.ok(
    result.calls.some((call) =>
      /^deno task --quiet smoke --reports \S+ --reports-as \/reports -- docker run /.test(call)
    ),
    result.calls.join("\n"),
  );
}

const IMAGE_OK = { FAKE_USER: "10001:10001", FAKE_UID: "10001", FAKE_SIZE: "180000000" };

toolTest(
  "smoke_image.sh runs the smoke checks through docker run with a mounted report directory, and checks the user and the size",
  { tools: ["sh"], notOn: ["windows"] },
  async () => {
    const result = await _smokeImage(IMAGE_OK);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^ok {4}--junit writes a report/m);
    assert.match(
      result.stdout,
      /^ok {4}the image's default command \(no command given\) exits 2 with the one-line usage error$/m,
    );
    assert.ok(result.calls.includes("docker run --rm ci:smoke"), result.calls.join("\n"));
    assert.match(result.stdout, /^ok {4}the image runs as a user that is not root \(USER 10001/m);
    assert.match(result.stdout, /^ok {4}the image is within its size budget: 180 MB of \d+ MB$/m);
    assert.ok(
      result.calls.some((call) =>
        /^docker run --rm --network host --env SERVICE_API_KEY --volume \S+:\/reports ci:smoke service-ci --version$/
          .test(call)
      ),
      result.calls.join("\n"),
    );
  },
);

toolTest(
  "smoke_image.sh fails an image that runs as root, or is over its size budget",
  { tools: ["sh"], notOn: ["windows"] },
  async () => {
    for (const user of ["", "root", "0:0"]) {
      const root = await _smokeImage({ ...IMAGE_OK, FAKE_USER: user }, { smoke: "stubbed" });
      assert.equal(root.code, 1, `USER "${user}"`);
      assert.match(root.stdout, /^FAIL {2}the image runs as a user that is not root/m);
      _assertSmokeStubbed(root);
    }
    const uid = await _smokeImage({ ...IMAGE_OK, FAKE_UID: "0" }, { smoke: "stubbed" });
    assert.match(uid.stdout, /^FAIL {2}the image runs as a user that is not root/m);
    _assertSmokeStubbed(uid);
    const big = await _smokeImage({ ...IMAGE_OK, FAKE_SIZE: "900000000" }, { smoke: "stubbed" });
    assert.equal(big.code, 1);
    assert.match(big.stdout, /^FAIL {2}the image is within its size budget: 900 MB/m);
    _assertSmokeStubbed(big);
  },
);

toolTest(
  "smoke_image.sh fails an image whose default command passes (service-ci --help, or true)",
  { tools: ["sh"], notOn: ["windows"] },
  async () => {
    for (const cmd of ["service-ci --help", "true"]) {
      const result = await _smokeImage({ ...IMAGE_OK, FAKE_CMD: cmd }, { smoke: "stubbed" });
      assert.equal(result.code, 1, `CMD ${cmd}: ${result.stdout}`);
      _assertSmokeStubbed(result);
      assert.match(
        result.stdout,
        /^FAIL {2}the image's default command \(no command given\) exits 2 with the one-line usage error \(exit \d+;/m,
        `CMD ${cmd}`,
      );
    }
  },
);

toolTest(
  "smoke_image.sh passes shellcheck -s sh",
  { tools: ["shellcheck"], notOn: ["windows"] },
  async () => {
    await assertShellcheckPasses([join(ROOT, "scripts", "smoke_image.sh")]);
  },
);

Deno.test("docs/develop.md states the image's size budget that smoke_image.sh holds it to", () => {
  const script = Deno.readTextFileSync(join(ROOT, "scripts", "smoke_image.sh"));
  const budget = /^budget_mb=(\d+)$/m.exec(script)?.[1];
  assert.ok(budget, "smoke_image.sh sets budget_mb");
  const docs = Deno.readTextFileSync(join(ROOT, "docs", "develop.md"));
  // deno fmt wraps Markdown: any blank between the words.
  assert.match(docs, new RegExp(`size\\s+budget\\s+of\\s+${budget}\\s+MB`));
});
