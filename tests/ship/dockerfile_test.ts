/**
 * Tests the Dockerfile and .dockerignore as text (no Docker engine is needed): the image
 * builds with scripts/build.ts, copies its Linux output, runs as a non-root user, has no
 * ENTRYPOINT, its default command cannot pass (run here with `deno run` of src/main.ts and the
 * compile step's flags, as the image's binary), and the build context leaves secrets out.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { binaryPath, TARGETS } from "../../scripts/build.ts";
import { sourceCommand } from "../../scripts/smoke.ts";
import { runCommand } from "../support/command.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const LINUX_TARGETS = TARGETS.filter((target) => target.endsWith("-linux-gnu"));

interface Instruction {
  /** Upper-case keyword: FROM, RUN, COPY, … */
  readonly keyword: string;
  /** The rest of the instruction, continuation lines joined. */
  readonly args: string;
  /** Index of the stage (FROM) it belongs to. */
  readonly stage: number;
}

// Joins continuation lines, drops comments, and tags each instruction with its stage.
function _parseDockerfile(text: string): Instruction[] {
  const instructions: Instruction[] = [];
  let stage = -1;
  let pending = "";
  for (const line of text.split("\n")) {
    if (/^\s*#/.test(line)) continue;
    pending += line.replace(/\\\s*$/, " ");
    if (/\\\s*$/.test(line)) continue;
    const match = /^\s*(\w+)\s+([\s\S]*?)\s*$/.exec(pending);
    pending = "";
    if (match === null) continue;
    const keyword = match[1]!.toUpperCase();
    if (keyword === "FROM") stage++;
    instructions.push({ keyword, args: match[2]!.replace(/\s+/g, " "), stage });
  }
  return instructions;
}

const INSTRUCTIONS = _parseDockerfile(Deno.readTextFileSync(join(ROOT, "Dockerfile")));
const STAGES = INSTRUCTIONS.filter((instruction) => instruction.keyword === "FROM");
const FINAL = STAGES.length - 1;

function _inStage(stage: number, keyword: string): Instruction[] {
  return INSTRUCTIONS.filter((item) => item.stage === stage && item.keyword === keyword);
}

// FROM [--platform=…] image [AS name]
function _from(stage: number): { image: string; name: string | undefined } {
  const words = STAGES[stage]!.args.split(" ").filter((word) => !word.startsWith("--"));
  return { image: words[0]!, name: words[2] };
}

// Docker's pattern syntax: * is any run of non-separators, ** any run of path segments.
function _globToRegExp(pattern: string): RegExp {
  let source = "";
  for (let at = 0; at < pattern.length; at++) {
    if (pattern.startsWith("**/", at)) {
      source += "(?:.*/)?";
      at += 2;
    } else if (pattern.startsWith("**", at)) {
      source += ".*";
      at += 1;
    } else if (pattern[at] === "*") {
      source += "[^/]*";
    } else if (pattern[at] === "?") {
      source += "[^/]";
    } else {
      source += pattern[at]!.replace(/[.+^${}()|[\]\\]/, "\\$&");
    }
  }
  return new RegExp(`^${source}$`);
}

// Whether the build context sends this path, by .dockerignore's rules: the last matching
// pattern wins, `!` re-includes, and a pattern that matches a directory covers what it holds.
function _sentToDocker(path: string, dockerignore: string): boolean {
  let sent = true;
  for (const raw of dockerignore.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const include = line.startsWith("!");
    const pattern = _globToRegExp((include ? line.slice(1) : line).replace(/^\/|\/$/g, ""));
    const parts = path.split("/");
    const prefixes = parts.map((_, index) => parts.slice(0, index + 1).join("/"));
    if (prefixes.some((prefix) => pattern.test(prefix))) sent = include;
  }
  return sent;
}

Deno.test("the Dockerfile has a build stage on denoland/deno and a final stage", () => {
  assert.equal(STAGES.length, 2, STAGES.map((stage) => stage.args).join("\n"));
  assert.match(_from(0).image, /^denoland\/deno:debian-\d+\.\d+\.\d+$/);
  assert.equal(_from(0).name, "build");
});

Deno.test("the build stage pins the Deno version the workflows install", () => {
  const pinned = /(\d+\.\d+\.\d+)$/.exec(_from(0).image)?.[1];
  for (const workflow of ["ci.yml", "release.yml"]) {
    const text = Deno.readTextFileSync(join(ROOT, ".github", "workflows", workflow));
    const versions = [...text.matchAll(/deno-version: v(\S+)/g)].map((match) => match[1]);
    assert.ok(versions.length > 0, workflow);
    for (const version of versions) assert.equal(version, pinned, workflow);
  }
});

Deno.test("the build stage compiles with scripts/build.ts for each Linux target, without -A", () => {
  const builds = _inStage(0, "RUN").filter((run) => run.args.includes("scripts/build.ts"));
  assert.equal(builds.length, 1);
  const run = builds[0]!.args;
  assert.match(run, /deno run (--allow-[a-z]+ )+scripts\/build\.ts --target "\$target"/);
  assert.ok(!/(^|\s)(-A|--allow-all)(\s|$)/.test(run), run);
  assert.ok(!run.includes("--out"), "the binary stays at build.ts's default dist/ path");
  assert.match(run, /amd64\) target=x86_64-unknown-linux-gnu ;;/);
  assert.match(run, /arm64\) target=aarch64-unknown-linux-gnu ;;/);
  assert.deepEqual(LINUX_TARGETS, ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]);
  const copied = _inStage(0, "COPY").map((copy) => copy.args.split(" ")[0]);
  assert.ok(copied.includes("scripts/build.ts") && copied.includes("src/"), String(copied));
});

Deno.test("the build stage copies, and .dockerignore sends, every script build.ts imports", () => {
  const build = Deno.readTextFileSync(join(ROOT, "scripts", "build.ts"));
  const imported = [...build.matchAll(/^import .* from "\.\/([\w.]+)";$/gm)].map((match) =>
    `scripts/${match[1]}`
  );
  assert.ok(imported.length > 0, "build.ts imports a script of its own (sbom.ts)");
  const copied = _inStage(0, "COPY").flatMap((copy) => copy.args.split(" ").slice(0, -1));
  const dockerignore = Deno.readTextFileSync(join(ROOT, ".dockerignore"));
  for (const script of imported) {
    assert.ok(copied.includes(script), `${script} is copied (${copied})`);
    assert.equal(_sentToDocker(script, dockerignore), true, script);
  }
});

Deno.test("the final stage copies the binary from build.ts's Linux output path", () => {
  const workdir = _inStage(0, "WORKDIR").at(-1)?.args;
  assert.ok(workdir?.startsWith("/"), "the build stage sets an absolute WORKDIR");
  const binary = _inStage(FINAL, "COPY").find((copy) =>
    copy.args.endsWith(" /usr/local/bin/service-ci")
  );
  assert.ok(binary, "a COPY to /usr/local/bin/service-ci");
  const [from, source] = binary.args.split(" ");
  assert.equal(from, "--from=build");
  const pattern = _globToRegExp(source!);
  for (const target of LINUX_TARGETS) {
    const path = `${workdir}/${binaryPath(target, "dist")}`;
    assert.ok(pattern.test(path), `${source} matches ${path}`);
  }
  for (const target of TARGETS.filter((target) => !LINUX_TARGETS.includes(target))) {
    assert.ok(!pattern.test(`${workdir}/${binaryPath(target, "dist")}`), target);
  }
});

Deno.test("the final stage is a glibc Debian slim image with a shell and CA certificates", () => {
  assert.match(_from(FINAL).image, /^debian:[a-z]+-slim$/);
  assert.ok(
    _inStage(FINAL, "COPY").some((copy) =>
      copy.args ===
        "--from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt"
    ),
  );
  assert.ok(
    _inStage(0, "RUN").some((run) =>
      run.args.includes("install -y --no-install-recommends ca-certificates")
    ),
  );
});

Deno.test("the final stage runs as a non-root user", () => {
  const user = _inStage(FINAL, "USER").at(-1)?.args;
  assert.ok(user, "a USER instruction in the final stage");
  const name = user.split(":")[0]!;
  assert.ok(!["root", "0"].includes(name), user);
  assert.match(name, /^[1-9]\d*$/, "a numeric uid needs no /etc/passwd entry");
});

// The final stage's default command, in exec form (a JSON array), as `docker run <image>` runs it.
function _defaultCommand(): string[] {
  const cmd = _inStage(FINAL, "CMD").at(-1)?.args;
  assert.ok(cmd, "a CMD instruction in the final stage");
  const words: unknown = JSON.parse(cmd);
  assert.ok(
    Array.isArray(words) && words.every((word) => typeof word === "string"),
    `CMD in exec form, a JSON array of strings (got ${cmd})`,
  );
  return words;
}

Deno.test("the Dockerfile has no ENTRYPOINT, so `service-ci --agent <id>` is the command", () => {
  assert.deepEqual(INSTRUCTIONS.filter((item) => item.keyword === "ENTRYPOINT"), []);
  // No argument that ends a run with 0 without a gate (--help, --version, --dry-run): a
  // container step copied without its command (Cloud Build, Tekton) must not be green.
  assert.deepEqual(_defaultCommand(), ["service-ci"]);
});

Deno.test(
  "the image's default command cannot pass: with no arguments and no settings it exits 2 with the one-line usage error",
  async () => {
    const [program, ...args] = _defaultCommand();
    assert.equal(program, "service-ci");
    // The image's environment: the final stage's ENV (none), plus what deno run needs to find
    // its cache here; its working directory holds no .env.
    const env: Record<string, string> = {};
    for (const name of ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME", "TMPDIR"]) {
      const value = Deno.env.get(name);
      if (value !== undefined) env[name] = value;
    }
    assert.deepEqual(_inStage(FINAL, "ENV"), []);
    const cwd = await Deno.makeTempDir({ prefix: "service-ci-image-cmd-" });
    try {
      const [deno, ...source] = sourceCommand();
      const result = await runCommand(deno!, [...source, ...args], { cwd, env, clearEnv: true });
      assert.equal(result.code, 2, result.stdout + result.stderr);
      assert.equal(result.stdout, "");
      const lines = result.stderr.trimEnd().split("\n");
      assert.equal(lines.length, 1, result.stderr);
      assert.match(lines[0]!, /^service-ci: no agent given: pass --agent <uuid>/);
    } finally {
      await Deno.remove(cwd, { recursive: true });
    }
  },
);

Deno.test("the image carries the OCI labels, with the version from a build argument", () => {
  const labels = _inStage(FINAL, "LABEL").map((label) => label.args).join(" ");
  const values = Object.fromEntries(
    [...labels.matchAll(/([\w.-]+)="([^"]*)"/g)].map((match) => [match[1], match[2]]),
  );
  for (const key of ["title", "description", "source", "version", "licenses"]) {
    assert.ok(values[`org.opencontainers.image.${key}`], `org.opencontainers.image.${key}`);
  }
  assert.equal(values["org.opencontainers.image.version"], "${VERSION}");
  assert.equal(values["org.opencontainers.image.licenses"], "Apache-2.0");
  assert.ok(_inStage(FINAL, "ARG").some((arg) => arg.args.startsWith("VERSION")));
});

Deno.test(".dockerignore keeps .env files, .git and everything not built out of the context", () => {
  const dockerignore = Deno.readTextFileSync(join(ROOT, ".dockerignore"));
  for (
    const path of [
      ".env",
      ".env.local",
      "src/.env",
      ".git/config",
      "dist/SHA256SUMS",
      "tests/ship/build_test.ts",
      "docs/compatibility.md",
      "coverage/lcov.info",
    ]
  ) {
    assert.equal(_sentToDocker(path, dockerignore), false, path);
  }
  for (const path of ["deno.json", "deno.lock", "src/main.ts", "scripts/build.ts"]) {
    assert.equal(_sentToDocker(path, dockerignore), true, path);
  }
});
