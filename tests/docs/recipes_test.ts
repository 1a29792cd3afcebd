/**
 * Tests the recipes in docs/recipes/: their YAML parses (and passes yamllint), their shell passes
 * shellcheck, every service-ci, `deno run` and direct-api.sh command in them uses only what the
 * program and the script accept, links and pinned versions are right, and the pre-push hook
 * really stops a `git push` whose gate fails.
 */

import assert from "node:assert/strict";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "npm:yaml@2.6.1";
import { parseCommandLine } from "../../src/config/command_line.ts";
import { resolveConfig } from "../../src/config/load.ts";
import { type CommandOptions, runCommand } from "../support/command.ts";
import { AGENTS, defaultAgents, KEYS, startFakeService } from "../support/fake_service.ts";
import { MAIN, runProgram } from "../support/program.ts";
import { assertShellcheckPasses } from "../support/shellcheck.ts";
import { type ToolOptions, toolTest } from "../support/tools.ts";
import { URL_RUN_FLAGS } from "../support/url_run.ts";
import { assertYamllintPasses, parseYaml } from "../support/yaml.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const RECIPES = join(ROOT, "docs", "recipes");
const VERSION = (JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as { version: string })
  .version;
const EXPECTED_RECIPES = [
  "bitbucket.md",
  "circleci.md",
  "cloud-build.md",
  "direct-api.md",
  "docker.md",
  "github-actions.md",
  "gitlab.md",
  "jenkins.md",
  "pre-push.md",
];
const IMAGE = "ghcr.io/service-ci/ci:v1";
const RAW_URL = "https://raw.githubusercontent.com/service-ci/service-ci/";
/** What the docs must give `deno run` before the URL: exactly what tests/e2e/url_run_test.ts runs. */

interface Block {
  readonly file: string;
  readonly lang: string;
  readonly text: string;
}

function _recipes(): Map<string, string> {
  const texts = new Map<string, string>();
  for (const entry of [...Deno.readDirSync(RECIPES)].toSorted((a, b) => a.name < b.name ? -1 : 1)) {
    if (entry.isFile && entry.name.endsWith(".md")) {
      texts.set(entry.name, Deno.readTextFileSync(join(RECIPES, entry.name)));
    }
  }
  return texts;
}

const TEXTS = _recipes();

function _blocks(): Block[] {
  const blocks: Block[] = [];
  for (const [file, text] of TEXTS) {
    for (const match of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
      blocks.push({ file, lang: match[1]!, text: match[2]! });
    }
  }
  return blocks;
}

const BLOCKS = _blocks();

// ---- a small shell lexer: enough for the recipes' command lines --------------------------------

type Token = { readonly word: string } | { readonly op: string };

function _closingParen(text: string, open: number): number {
  let depth = 0;
  for (let j = open; j < text.length; j++) {
    if (text[j] === "(") depth++;
    if (text[j] === ")" && --depth === 0) return j;
  }
  return text.length - 1;
}

function _tokens(script: string): Token[] {
  const tokens: Token[] = [];
  const text = script.replace(/\\\n/g, " ");
  let i = 0;
  let word: string | undefined;
  const end = () => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\n") {
      end();
      tokens.push({ op: ";" });
      i++;
    } else if (c === " " || c === "\t") {
      end();
      i++;
    } else if (c === "#" && word === undefined) {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (c === "'") {
      const close = text.indexOf("'", i + 1);
      word = (word ?? "") + text.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      let j = i + 1;
      let value = "";
      while (j < text.length && text[j] !== '"') {
        if (text[j] === "$" && text[j + 1] === "(") {
          const close = _closingParen(text, j + 1);
          value += text.slice(j, close + 1);
          j = close + 1;
          continue;
        }
        if (text[j] === "\\" && j + 1 < text.length) j++;
        value += text[j];
        j++;
      }
      word = (word ?? "") + value;
      i = j + 1;
    } else if (c === "\\") {
      word = (word ?? "") + (text[i + 1] ?? "");
      i += 2;
    } else if (c === "$" && text[i + 1] === "(") {
      const close = _closingParen(text, i + 1);
      word = (word ?? "") + text.slice(i, close + 1);
      i = close + 1;
    } else if (c === ">" || c === "<") {
      // A redirection: its target word is dropped by _commands (and 2 in 2>&1 is no word).
      if (word !== undefined && /^\d+$/.test(word)) word = undefined;
      end();
      const op = /^(>>|>&|<<|>|<)/.exec(text.slice(i))![1]!;
      tokens.push({ op: "redirect" });
      i += op.length;
    } else if ("|&;()".includes(c)) {
      end();
      const op = /^(&&|\|\||[|&;()])/.exec(text.slice(i))![1]!;
      tokens.push({ op });
      i += op.length;
    } else {
      word = (word ?? "") + c;
      i++;
    }
  }
  end();
  return tokens;
}

/** The simple commands of a script, as word lists, without redirections. */
function _commands(script: string): string[][] {
  const commands: string[][] = [];
  let current: string[] = [];
  let skipNext = false;
  for (const token of _tokens(script)) {
    if ("op" in token) {
      if (token.op === "redirect") {
        skipNext = true;
        continue;
      }
      if (current.length > 0) commands.push(current);
      current = [];
    } else if (skipNext) {
      skipNext = false;
    } else {
      current.push(token.word);
    }
  }
  if (current.length > 0) commands.push(current);
  return commands;
}

/** Shell text in a block: the block itself, the run/command/script values of YAML, Groovy sh. */
function _scripts(block: Block): string[] {
  if (block.lang === "sh") return [block.text];
  if (block.lang === "yaml") {
    const scripts: string[] = [];
    const visit = (node: unknown, key: string | undefined) => {
      if (
        typeof node === "string" && key !== undefined && ["run", "command", "script"].includes(key)
      ) {
        scripts.push(node);
      } else if (Array.isArray(node)) {
        for (const item of node) visit(item, key);
      } else if (typeof node === "object" && node !== null) {
        for (const [name, value] of Object.entries(node)) visit(value, name);
      }
    };
    visit(parseDocument(block.text).toJS(), undefined);
    return scripts;
  }
  if (block.lang === "groovy") {
    return [...block.text.matchAll(/\bsh\s+'''([\s\S]*?)'''|\bsh\s+'([^'\n]*)'/g)].map((match) =>
      match[1] ?? match[2]!
    );
  }
  return [];
}

interface Invocation {
  readonly file: string;
  readonly kind: "service-ci" | "deno" | "direct-api";
  readonly words: readonly string[];
}

function _invocations(): Invocation[] {
  const found: Invocation[] = [];
  for (const block of BLOCKS) {
    for (const script of _scripts(block)) {
      for (const words of _commands(script)) {
        const at = words.findIndex((word) =>
          word === "service-ci" || word.endsWith("/service-ci") || word === "deno" ||
          word.endsWith("direct-api.sh") || (words[0] === "npx" && word.startsWith("service-ci@"))
        );
        if (at < 0) continue;
        const command = words[at]!;
        if (command === "deno" && words[at + 1] !== "run") continue;
        // `command -v service-ci` and a tar member name are not invocations.
        if (command === "service-ci" && (words[at - 1] === "-v" || words[0] === "tar")) continue;
        if (command.endsWith("direct-api.sh") && words[0] === "curl") continue;
        found.push({
          file: block.file,
          kind: command === "deno"
            ? "deno"
            : command.endsWith("direct-api.sh")
            ? "direct-api"
            : "service-ci",
          words: words.slice(command === "deno" ? at + 2 : at + 1),
        });
      }
    }
  }
  return found;
}

/** A Cloud Build step, as much of it as the recipe uses. */
interface CloudBuildStep {
  readonly name: string;
  readonly args?: readonly string[];
  readonly env?: readonly string[];
  readonly secretEnv?: readonly string[];
  readonly timeout?: string;
}

interface CloudBuildConfig {
  readonly steps?: readonly CloudBuildStep[];
  readonly availableSecrets?: {
    readonly secretManager?: ReadonlyArray<{ readonly versionName: string; readonly env: string }>;
  };
  readonly options?: { readonly substitutionOption?: string };
}

// A Cloud Build step has no shell: the image's command is the first of its args.
function _cloudBuildSteps(block: Block): CloudBuildStep[] {
  if (block.lang !== "yaml") return [];
  const config = parseDocument(block.text).toJS() as CloudBuildConfig | null;
  return (config?.steps ?? []).filter((step) => Array.isArray(step.args));
}

const INVOCATIONS = [
  ..._invocations(),
  ...BLOCKS.flatMap((block) =>
    _cloudBuildSteps(block).filter((step) => step.args![0] === "service-ci").map(
      (step): Invocation => ({ file: block.file, kind: "service-ci", words: step.args!.slice(1) }),
    )
  ),
];

// A stand-in for each value the shell would compute, valid for the flag it belongs to.
function _concrete(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === "$@") continue;
    if (!arg.includes("$")) {
      out.push(arg);
      continue;
    }
    const flag = args[i - 1];
    out.push(
      flag === "--agent"
        ? AGENTS.passing
        : flag === "--base-url"
        ? "https://eval.example.com"
        : flag === "--pull-request"
        ? "42"
        : flag === "--timeout-minutes"
        ? "30"
        : "value",
    );
  }
  return out;
}

function _checkServiceCiArgs(file: string, args: readonly string[]): void {
  try {
    const invocation = parseCommandLine(_concrete(args));
    if (invocation.kind !== "run") return; // --help, --version
    // Every literal value must be valid, not only every flag known.
    resolveConfig(invocation.flags, {
      SERVICE_API_KEY: "sk_test",
      SERVICE_BASE_URL: "https://eval.example.com",
      SERVICE_AGENT_ID: AGENTS.passing,
    });
  } catch (error) {
    throw new Error(`${file}: service-ci ${args.join(" ")}: ${error}`, { cause: error });
  }
}

Deno.test("every recipe exists, and the index links each one", () => {
  assert.deepEqual([...TEXTS.keys()].filter((name) => name !== "README.md"), EXPECTED_RECIPES);
  const index = TEXTS.get("README.md") ?? "";
  for (const name of EXPECTED_RECIPES) assert.match(index, new RegExp(`\\]\\(${name}\\)`), name);
});

Deno.test("every recipe says where the key lives and what the exit code does", () => {
  for (const name of EXPECTED_RECIPES) {
    const text = TEXTS.get(name)!;
    assert.match(text, /SERVICE_API_KEY/, name);
    assert.match(text, /^## .*(key|Key)/m, `${name} has a section on the key`);
    assert.match(text, /^## Exit code/m, `${name} has a section on the exit code`);
    assert.match(text, /\b0\b.*passed/s, name);
  }
});

Deno.test("every relative link in the recipes leads to a file", () => {
  for (const [name, text] of TEXTS) {
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1]!.split("#")[0]!;
      if (target === "" || /^[a-z]+:/.test(target)) continue;
      assert.ok(
        Deno.statSync(join(RECIPES, target)).isFile,
        `${name} links to ${target}, which is not a file`,
      );
    }
  }
});

Deno.test("every YAML block parses", () => {
  const yaml = BLOCKS.filter((block) => block.lang === "yaml");
  assert.ok(yaml.length >= 6, `${yaml.length} YAML blocks`);
  for (const block of yaml) {
    parseYaml(block.text, `${block.file}:\n${block.text}`);
  }
});

Deno.test("every service-ci command in the recipes uses only flags and values service-ci accepts", () => {
  const commands = INVOCATIONS.filter((invocation) => invocation.kind === "service-ci");
  assert.ok(commands.length >= 14, `found ${commands.length} service-ci commands`);
  for (const { file, words } of commands) _checkServiceCiArgs(file, words);
  // Those that write JUnit make its directory first (--junit needs it to exist).
  for (const block of BLOCKS) {
    for (const match of block.text.matchAll(/--junit\s+(\S+)\/[^/\s]+/g)) {
      const directory = match[1]!;
      if (directory.startsWith("/")) continue;
      assert.match(
        block.text,
        new RegExp(`mkdir -p ${directory}\\b`),
        `${block.file}: ${match[0]}`,
      );
    }
  }
});

Deno.test("every deno run in the recipes has exactly deno.json's permissions, the pinned release and an address", () => {
  const runs = INVOCATIONS.filter((invocation) => invocation.kind === "deno");
  assert.ok(runs.length >= 4, `found ${runs.length} deno run commands`);
  for (const { file, words } of runs) {
    const entry = words.findIndex((word) => !word.startsWith("-"));
    assert.deepEqual(words.slice(0, entry), URL_RUN_FLAGS, file);
    const args = words.slice(entry + 1);
    // The entry is the release tag's main.ts (on GitHub, or a mirror's copy), or a variable
    // whose default in the same recipe is.
    const literal = /^https?:\/\/[^\s}"]+$/.exec(words[entry]!)?.[0];
    const variable = /^\$\{?(\w+)\}?$/.exec(words[entry]!)?.[1];
    const text = TEXTS.get(file)!;
    const byDefault = variable === undefined
      ? undefined
      : (new RegExp(`\\b${variable} = '(https?://[^']+)'`).exec(text) ??
        new RegExp(`\\b${variable}=\\$\\{${variable}:-(https?://[^}]+)\\}`).exec(text))?.[1];
    const url = literal ?? byDefault;
    assert.ok(typeof url === "string", `${file}: deno run ${words[entry]}`);
    assert.match(url, new RegExp(`/v${VERSION.replaceAll(".", "\\.")}/src/main\\.ts$`), file);
    if (url.startsWith("https://raw.githubusercontent.com/")) {
      assert.equal(url, `${RAW_URL}v${VERSION}/src/main.ts`, file);
    }
    _checkServiceCiArgs(file, args);
    // A release tag has no built-in address: every gate run from a URL names one (the hook's
    // comes from .env's SERVICE_BASE_URL).
    if (args[0] !== "--version" && file !== "pre-push.md") {
      assert.ok(args.includes("--base-url"), `${file}: deno run ${words[entry]} has no --base-url`);
    }
  }
});

Deno.test("every direct-api.sh command uses only options the script has", () => {
  const header = Deno.readTextFileSync(join(ROOT, "scripts", "direct-api.sh")).split(
    "\nset -eu",
  )[0]!;
  const options = new Set([...header.matchAll(/--[a-z][a-z-]*/g)].map((match) => match[0]));
  for (const option of ["--agent", "--base-url", "--timeout-minutes"]) {
    assert.ok(options.has(option), option);
  }
  const commands = INVOCATIONS.filter((invocation) => invocation.kind === "direct-api");
  assert.ok(commands.length >= 1);
  for (const { file, words } of commands) {
    for (let i = 0; i < words.length; i += 2) {
      const option = words[i]!.split("=")[0]!;
      assert.ok(options.has(option), `${file}: direct-api.sh does not take ${option}`);
      if (words[i]!.includes("=")) i--;
      else assert.ok(words[i + 1] !== undefined, `${file}: ${option} needs a value`);
    }
  }
});

Deno.test("the recipes name one image and pin the version of deno.json", () => {
  for (const [name, text] of TEXTS) {
    for (const match of text.matchAll(/ghcr\.io\/[\w./-]+(:[\w.-]+)?/g)) {
      if (match[0] === "ghcr.io/service-ci/ci") continue;
      assert.equal(match[0], IMAGE, name);
    }
    for (
      const match of text.matchAll(
        /raw\.githubusercontent\.com\/service-ci\/service-ci\/([^/]+)\//g,
      )
    ) {
      assert.equal(match[1], `v${VERSION}`, `${name} pins ${match[1]}`);
    }
    for (const match of text.matchAll(/SERVICE_CI_VERSION = '([^']+)'/g)) {
      assert.equal(match[1], VERSION, name);
    }
  }
});

Deno.test("every npx in the recipes runs the npm package pinned to deno.json's version", () => {
  let count = 0;
  for (const block of BLOCKS) {
    for (const match of block.text.matchAll(/\bnpx\b[^\n]*?\bservice-ci\b(@\S+)?/g)) {
      count++;
      assert.equal(match[1], `@${VERSION}`, `${block.file}: ${match[0]}`);
    }
  }
  assert.ok(count >= 3, `${count} npx commands`);
});

// What the tests that run programs need. Windows CI runners lack most of these tools, so those
// tests do not run on Windows.
const SHELLCHECK: ToolOptions = { tools: ["shellcheck"], notOn: ["windows"] };
const YAMLLINT: ToolOptions = { tools: ["yamllint"], notOn: ["windows"] };

// A program's exit code, and its stdout and stderr as one text.
async function _output(
  command: string,
  args: readonly string[],
  options: CommandOptions = {},
): Promise<{ code: number; text: string }> {
  const { code, stdout, stderr } = await runCommand(command, args, options);
  return { code, text: stdout + stderr };
}

toolTest(
  "every YAML block passes yamllint with the repository's rules",
  YAMLLINT,
  async () => {
    const dir = await Deno.makeTempDir({ prefix: "service-ci-recipes-yaml-" });
    try {
      let n = 0;
      for (const block of BLOCKS.filter((block) => block.lang === "yaml")) {
        await Deno.writeTextFile(
          join(dir, `${++n}-${block.file.replace(".md", "")}.yml`),
          block.text,
        );
      }
      await assertYamllintPasses([dir]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

toolTest("the shell of every recipe passes shellcheck", SHELLCHECK, async () => {
  const dir = await Deno.makeTempDir({ prefix: "service-ci-recipes-sh-" });
  try {
    const files: string[] = [];
    // One file per recipe, blocks in order, as a reader pastes them into one shell; the scripts
    // inside YAML and Groovy each on their own.
    for (const name of TEXTS.keys()) {
      const blocks = BLOCKS.filter((block) => block.file === name);
      const sh = blocks.filter((block) => block.lang === "sh").map((block) => block.text);
      const embedded = blocks.filter((block) => block.lang !== "sh").flatMap(_scripts);
      for (const [i, script] of [sh.join("\n"), ...embedded].entries()) {
        if (script.trim() === "") continue;
        const file = join(dir, `${name.replace(".md", "")}-${i}.sh`);
        await Deno.writeTextFile(file, `#!/bin/sh\n${script}\n`);
        files.push(file);
      }
    }
    const hook = /<<'HOOK'[^\n]*\n([\s\S]*?)\nHOOK\n/.exec(TEXTS.get("pre-push.md")!)?.[1];
    assert.ok(hook, "pre-push.md holds the hook");
    await Deno.writeTextFile(join(dir, "hook.sh"), hook);
    files.push(join(dir, "hook.sh"));
    await assertShellcheckPasses(files);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

toolTest(
  "the pre-push hook lets a push through when the gate passes, stops it when it fails or cannot load service-ci, and in a linked worktree reads the main working tree's .env",
  {
    tools: ["git", "sh", "dash"],
    notOn: ["windows"],
  },
  async () => {
    const install = BLOCKS.find((block) =>
      block.file === "pre-push.md" && block.text.includes("<<'HOOK'")
    );
    assert.ok(install, "pre-push.md has the install command");
    await using service = await startFakeService({ agents: defaultAgents(200) });
    const dir = await Deno.makeTempDir({ prefix: "service-ci-pre-push-" });
    try {
      const repo = join(dir, "repo");
      const remote = join(dir, "remote.git");
      // No service-ci binary on PATH: the hook runs the checkout's src/main.ts with Deno, with the
      // permission flags the recipe gives.
      const path = [dirname(Deno.execPath()), "/usr/local/bin", "/usr/bin", "/bin"].join(delimiter);
      const env: Record<string, string> = {
        PATH: path,
        HOME: dir,
        NO_COLOR: "1",
        GIT_CONFIG_NOSYSTEM: "1",
        GIT_AUTHOR_NAME: "test",
        GIT_AUTHOR_EMAIL: "test@example.com",
        GIT_COMMITTER_NAME: "test",
        GIT_COMMITTER_EMAIL: "test@example.com",
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
      };
      const git = async (args: string[], cwd = repo) => {
        const result = await _output("git", args, { cwd, env, clearEnv: true });
        return result;
      };
      assert.equal((await git(["init", "-q", "--bare", remote], dir)).code, 0);
      assert.equal((await git(["init", "-q", "-b", "main", repo], dir)).code, 0);
      await Deno.writeTextFile(join(repo, ".gitignore"), ".env\n");
      await git(["add", ".gitignore"]);
      await git(["commit", "-q", "-m", "one"]);
      await git(["remote", "add", "origin", remote]);
      // The hook reads SERVICE_CI_URL from .env, as service-ci reads the rest.
      const writeEnv = (agent: string, url = MAIN) =>
        Deno.writeTextFile(
          join(repo, ".env"),
          `SERVICE_API_KEY=${KEYS.ci}\nSERVICE_BASE_URL=${service.url}\nSERVICE_AGENT_ID=${agent}\nSERVICE_CI_URL=${url}\n`,
        );

      const installed = await _output("sh", ["-c", install.text], {
        cwd: repo,
        env,
        clearEnv: true,
      });
      assert.equal(installed.code, 0, installed.text);

      await writeEnv(AGENTS.passing);
      const head = (await git(["rev-parse", "HEAD"])).text.trim();
      const pushed = await git(["push", "origin", "main"]);
      assert.equal(pushed.code, 0, pushed.text);
      assert.match(pushed.text, /pre-push: checking the quality gate/);
      assert.match(pushed.text, /PASSED/);
      assert.ok(!pushed.text.includes(KEYS.ci));
      assert.equal((await git(["rev-parse", "main"], remote)).text.trim(), head);
      const [trigger] = service.requestsOf("POST");
      const metadata = JSON.parse(trigger!.body).ci_metadata;
      assert.equal(metadata.commit_sha, head);
      assert.equal(metadata.branch, "main");
      assert.equal(metadata.provider, "local");

      await writeEnv(AGENTS.failing);
      await Deno.writeTextFile(join(repo, "two.txt"), "two\n");
      await git(["add", "two.txt"]);
      await git(["commit", "-q", "-m", "two"]);
      const refused = await git(["push", "origin", "main"]);
      assert.notEqual(refused.code, 0, refused.text);
      assert.match(refused.text, /FAILED/);
      assert.match(refused.text, /failed to push/);
      assert.equal((await git(["rev-parse", "main"], remote)).text.trim(), head);

      // Deno cannot load service-ci (nothing listens there): said as that, not as a failed gate.
      await writeEnv(AGENTS.passing, "http://127.0.0.1:9/v1.1.0/src/main.ts");
      const unloaded = await git(["push", "origin", "main"]);
      assert.notEqual(unloaded.code, 0, unloaded.text);
      assert.match(
        unloaded.text,
        /pre-push: service-ci could not be loaded from http:\/\/127\.0\.0\.1:9\//,
      );
      assert.doesNotMatch(unloaded.text, /FAILED/);
      assert.equal(service.requestsOf("POST").length, 2);

      // A linked worktree shares the hook but not the git-ignored .env: the hook reads the main
      // working tree's and says so. Run by dash, the strictest common /bin/sh.
      await writeEnv(AGENTS.passing);
      const hookPath = join(repo, ".git", "hooks", "pre-push");
      const dash = (await _output("sh", ["-c", "command -v dash"], { env, clearEnv: true })).text
        .trim();
      const hookText = await Deno.readTextFile(hookPath);
      await Deno.writeTextFile(hookPath, hookText.replace(/^#!.*\n/, `#!${dash}\n`));
      const worktree = join(dir, "my worktree");
      assert.equal((await git(["worktree", "add", "-q", "-b", "feature", worktree])).code, 0);
      await Deno.writeTextFile(join(worktree, "three.txt"), "three\n");
      await git(["add", "three.txt"], worktree);
      await git(["commit", "-q", "-m", "three"], worktree);
      const worktreeHead = (await git(["rev-parse", "HEAD"], worktree)).text.trim();
      const fromWorktree = await git(["push", "origin", "feature"], worktree);
      assert.equal(fromWorktree.code, 0, fromWorktree.text);
      assert.ok(
        fromWorktree.text.includes(`pre-push: settings from ${join(repo, ".env")}`),
        fromWorktree.text,
      );
      assert.match(fromWorktree.text, /PASSED/);
      const worktreeTrigger = JSON.parse(service.requestsOf("POST")[2]!.body).ci_metadata;
      assert.equal(worktreeTrigger.commit_sha, worktreeHead);
      assert.equal(worktreeTrigger.branch, "feature");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

// Cloud Build's substitution of `$NAME` and `${NAME}` in a step's args and env; with
// `substitutionOption: ALLOW_LOOSE` one the build does not have is empty.
function _substitute(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(/\$(?:\{(\w+)\}|(\w+))/g, (_, braced, bare) => values[braced ?? bare] ?? "");
}

Deno.test("the Cloud Build recipe's step runs as written: the key from secretEnv, the metadata from its substitutions", async () => {
  const block = BLOCKS.find((block) =>
    block.file === "cloud-build.md" && block.text.startsWith("# cloudbuild.yaml")
  );
  assert.ok(block, "cloud-build.md has the cloudbuild.yaml");
  const config = parseYaml<CloudBuildConfig>(block.text, "cloud-build.md's cloudbuild.yaml");
  const step = config.steps?.find((step) => step.name === IMAGE);
  assert.ok(step?.args, "a step runs the image with its args");
  assert.equal(step.args[0], "service-ci");
  // The pull-request substitutions are missing from push builds: without ALLOW_LOOSE Cloud Build
  // refuses such a build before it starts.
  assert.equal(config.options?.substitutionOption, "ALLOW_LOOSE");
  assert.ok(Number.parseInt(step.timeout ?? "") > 30 * 60, "the step's timeout is above 30 min");
  const secrets = config.availableSecrets?.secretManager ?? [];
  assert.deepEqual(step.secretEnv, ["SERVICE_API_KEY"]);
  assert.match(
    secrets.find((secret) => secret.env === "SERVICE_API_KEY")?.versionName ?? "",
    /^projects\/\$PROJECT_ID\/secrets\/[\w-]+\/versions\/latest$/,
  );

  await using service = await startFakeService({ agents: defaultAgents(50) });
  const run = (substitutions: Record<string, string>, agent: string, args = step.args!) => {
    const env: Record<string, string> = {};
    for (const entry of step.env ?? []) {
      const at = entry.indexOf("=");
      env[entry.slice(0, at)] = _substitute(entry.slice(at + 1), substitutions);
    }
    for (const name of step.secretEnv ?? []) env[name] = KEYS.ci;
    // The image has the service's address built in; the source entry is given the fake's.
    env.SERVICE_BASE_URL = service.url;
    return runProgram(
      args.slice(1).map((arg) =>
        arg === "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10" ? agent : _substitute(arg, substitutions)
      ),
      { env },
    );
  };
  const head = "4f1c2d3e5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d";
  const build = {
    PROJECT_ID: "acme-ci",
    BUILD_ID: "b7f1c2",
    LOCATION: "europe-west1",
    COMMIT_SHA: head,
    BRANCH_NAME: "main",
    REPO_FULL_NAME: "acme/widgets",
  };
  const buildUrl =
    "https://console.cloud.google.com/cloud-build/builds;region=europe-west1/b7f1c2?project=acme-ci";

  // A pull-request trigger: the branch is the change's, not BRANCH_NAME.
  const pullRequest = await run(
    { ...build, _PR_NUMBER: "42", _HEAD_BRANCH: "feature/login", _BASE_BRANCH: "main" },
    AGENTS.passing,
  );
  assert.equal(pullRequest.code, 0, pullRequest.stderr);
  assert.ok(!(pullRequest.stdout + pullRequest.stderr).includes(KEYS.ci));
  const [trigger] = service.requestsOf("POST");
  assert.equal(trigger!.headers["x-api-key"], KEYS.ci);
  assert.deepEqual(JSON.parse(trigger!.body).ci_metadata, {
    commit_sha: head,
    branch: "feature/login",
    pull_request_number: 42,
    repository: "acme/widgets",
    actor: null,
    provider: "cloud_build",
    build_url: buildUrl,
  });

  // A push trigger, with no pull-request substitutions: a failed gate fails the step.
  const push = await run(build, AGENTS.failing);
  assert.equal(push.code, 1, push.stderr);
  assert.deepEqual(JSON.parse(service.requestsOf("POST")[1]!.body).ci_metadata, {
    commit_sha: head,
    branch: "main",
    pull_request_number: null,
    repository: "acme/widgets",
    actor: null,
    provider: "cloud_build",
    build_url: buildUrl,
  });

  // The step copied without its args runs the image's default command, `service-ci` alone.
  const bare = await run(build, AGENTS.passing, ["service-ci"]);
  assert.equal(bare.code, 2, bare.stderr);
  assert.equal(service.requestsOf("POST").length, 2);
});

Deno.test("the YAML examples of README.md and docs/github-actions.md parse too", () => {
  let count = 0;
  for (const path of ["README.md", join("docs", "github-actions.md")]) {
    const text = Deno.readTextFileSync(join(ROOT, path));
    for (const match of text.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)) {
      count++;
      parseYaml(match[1]!, `${path}:\n${match[1]}`);
    }
  }
  assert.ok(count >= 3, `${count} YAML blocks`);
});
