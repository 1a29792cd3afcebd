/**
 * `deno task smoke`: proves that one way service-ci ships works where it runs. It takes the
 * command that starts service-ci (a release binary, `docker run … image service-ci`, or
 * `--source` for `deno run` with the compile step's flags), starts the fake evaluation service
 * on 127.0.0.1, runs the command against it, and prints one line per check and a closing
 * `N passed, N failed`. It exits 0 only when every check passed.
 *
 * The command gets the key in `SERVICE_API_KEY` (`docker run -e SERVICE_API_KEY` passes it on)
 * and the service's address as `--base-url`, in an environment holding nothing else of the
 * caller's but what a process needs to start (PATH, HOME, the temporary directory, Docker's and
 * Deno's own locations), so a CI runner's variables do not reach it.
 *
 * ```sh
 * deno task smoke --source
 * deno task smoke -- dist/x86_64-unknown-linux-gnu/service-ci
 * deno task smoke --reports "$PWD/reports" --reports-as /reports -- \
 *   docker run --rm --network host -e SERVICE_API_KEY -v "$PWD/reports:/reports" ci:smoke service-ci
 * ```
 */

import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  AGENTS,
  defaultAgents,
  type FakeAgent,
  type FakeService,
  KEYS,
  startFakeService,
} from "../tests/support/fake_service.ts";
import { reportSchema, strictAjv } from "../tests/support/report_schema.ts";
import { readBuildConfig, RUNTIME_FLAGS } from "./build.ts";

const ROOT = new URL("..", import.meta.url);

/** The agents the smoke runs use, by what their gate does. */
export const SMOKE_AGENTS = {
  passing: AGENTS.passing,
  failing: AGENTS.failing,
  /** Its run ends with status `errored`: no verdict, so the gate cannot be checked (exit 3). */
  unchecked: "3d4e5f60-7182-4930-a1b2-c3d4e5f60718",
  /** Its run takes ten minutes: the gate is still waiting when SIGINT comes. */
  slow: "4e5f6071-8293-4a41-b2c3-d4e5f6071829",
} as const;

/** One check's result. `skipped` holds why it did not run (a missing tool, another OS). */
export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly skipped?: string;
}

/** Options of {@linkcode smoke}. */
export interface SmokeOptions {
  /** The version `--version` must print, e.g. `1.2.0`. */
  readonly version: string;
  /** Where the reports are read from; default a fresh temporary directory. */
  readonly reports?: string;
  /** The same directory as the command sees it (a container's mount); default `reports`. */
  readonly reportsAs?: string;
  /** Send SIGINT during a wait and expect 130; default everywhere but Windows. */
  readonly sigint?: boolean;
  /** Milliseconds one run of the command may take; default 60 000. */
  readonly runTimeoutMs?: number;
  /** Whether xmllint validates the JUnit report; default: whether it is on PATH. */
  readonly xmllint?: boolean;
}

/** What one run of the command did. */
interface _Run {
  readonly args: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

// Deno's own lines, which a user's CI log must never show: a permission prompt or refusal, a
// module or runtime download, a compile or type-check step, a warning or info from the runtime.
const DENO_NOISE: readonly RegExp[] = [
  /^\s*(?:Download|Compile|Check|Warning|Info)\s/m,
  /Deno requests|┏ ⚠️|\[y\/n\]|Allow\?|--allow-\w+ flag|NotCapable|PermissionDenied/,
  /dl\.deno\.land|denort/,
  /^error: Uncaught/m,
];

// The environment a started process needs, on every OS, and nothing from the CI around it.
const PASSED_THROUGH = [
  "PATH",
  "HOME",
  "USERPROFILE",
  "SystemRoot",
  "SYSTEMROOT",
  "windir",
  "ComSpec",
  "PATHEXT",
  "TEMP",
  "TMP",
  "TMPDIR",
  "LOCALAPPDATA",
  "APPDATA",
  "DENO_DIR",
  "XDG_RUNTIME_DIR",
  "DOCKER_HOST",
  "DOCKER_CONFIG",
  "DOCKER_CONTEXT",
];

/**
 * The lines of `text` that Deno itself printed (see {@linkcode smoke}'s "no Deno noise" check).
 *
 * @example
 * ```ts
 * denoNoise("Download https://registry.npmjs.org/ajv\nPASSED"); // ["Download https://registry.npmjs.org/ajv"]
 * ```
 */
export function denoNoise(text: string): string[] {
  return text.split("\n").filter((line) => {
    // deno-lint-ignore no-control-regex
    const plain = line.replace(/\x1b\[[0-9;]*m/g, "");
    return DENO_NOISE.some((pattern) => pattern.test(plain));
  });
}

/**
 * The command that stands in for a release binary here: `deno run` of `src/main.ts` with
 * deno.json as its config and exactly the flags `deno compile` bakes into the binary
 * (scripts/build.ts's `RUNTIME_FLAGS`: the default permission set with `-P`, no prompt, quiet).
 *
 * @example
 * ```ts
 * sourceCommand(); // [Deno.execPath(), "run", "--config", ".../deno.json", "-P", "--no-prompt", "--quiet", ".../src/main.ts"]
 * ```
 */
export function sourceCommand(): string[] {
  return [
    Deno.execPath(),
    "run",
    "--config",
    fileURLToPath(new URL("deno.json", ROOT)),
    ...RUNTIME_FLAGS,
    fileURLToPath(new URL("src/main.ts", ROOT)),
  ];
}

function _agents(): FakeAgent[] {
  const [passing, failing] = defaultAgents(200);
  return [
    passing!,
    failing!,
    {
      ...passing!,
      id: SMOKE_AGENTS.unchecked,
      name: "guardian-errored",
      finished: () => ({ status: "errored" }),
    },
    { ...passing!, id: SMOKE_AGENTS.slow, name: "guardian-slow", runMs: 600_000 },
  ];
}

function _environment(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: "1", SERVICE_API_KEY: KEYS.ci };
  for (const name of PASSED_THROUGH) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  return env;
}

// A started command, its output read as it comes, so a check can wait for a line.
class _Started {
  readonly #process: Deno.ChildProcess;
  readonly #done: Promise<_Run>;
  #stderr = "";
  #ended = false;

  constructor(command: readonly string[], args: readonly string[], cwd: string) {
    const [program, ...fixed] = command;
    const process = new Deno.Command(program!, {
      args: [...fixed, ...args],
      cwd,
      env: _environment(),
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#process = process;
    const stdout = new Response(process.stdout).text();
    const stderr = (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of process.stderr) {
        this.#stderr += decoder.decode(chunk, { stream: true });
      }
    })();
    this.#done = (async () => {
      const [status, out] = await Promise.all([process.status, stdout, stderr]);
      this.#ended = true;
      return { args, code: status.code, stdout: out, stderr: this.#stderr };
    })();
  }

  get stderr(): string {
    return this.#stderr;
  }

  get ended(): boolean {
    return this.#ended;
  }

  kill(signal: Deno.Signal): void {
    try {
      this.#process.kill(signal);
    } catch {
      // It has ended already.
    }
  }

  // The run, or a thrown Error after `ms` (the process is killed then).
  async finished(ms: number): Promise<_Run> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.kill("SIGKILL");
        reject(new Error(`did not end within ${ms / 1000} s`));
      }, ms);
    });
    try {
      return await Promise.race([this.#done, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}

function _shown(run: _Run): string {
  const tail = (text: string) => text.trim().split("\n").slice(-6).join("\n    ");
  return `exit ${run.code}\n    stderr: ${tail(run.stderr)}\n    stdout: ${tail(run.stdout)}`;
}

function _exitCheck(name: string, run: _Run | Error, code: number): CheckResult {
  if (run instanceof Error) return { name, ok: false, detail: run.message };
  return { name, ok: run.code === code, detail: run.code === code ? "" : _shown(run) };
}

async function _xmllintErrors(file: string): Promise<string> {
  const xsd = fileURLToPath(new URL("tests/fixtures/jenkins-junit.xsd", ROOT));
  const output = await new Deno.Command("xmllint", {
    args: ["--noout", "--schema", xsd, file],
    stdout: "piped",
    stderr: "piped",
  }).output();
  return output.success ? "" : new TextDecoder().decode(output.stderr).trim();
}

function _onPath(program: string): boolean {
  try {
    return new Deno.Command(program, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

async function _until(test: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end;) {
    if (test()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return test();
}

/**
 * Runs every check against `command` (the program and its first arguments; the checks append
 * theirs) and returns one result per check, in order.
 *
 * @example
 * ```ts
 * const results = await smoke(sourceCommand(), { version: "1.2.0" });
 * results.every((result) => result.ok); // true
 * ```
 */
export async function smoke(
  command: readonly string[],
  options: SmokeOptions,
): Promise<CheckResult[]> {
  const [program, ...fixed] = command;
  if (program === undefined) throw new TypeError("smoke() needs a command (got none)");
  // The command runs in a directory of its own; a relative path names a file from here.
  const started = [/[\\/]/.test(program) ? resolve(program) : program, ...fixed];
  const cwd = await Deno.makeTempDir({ prefix: "service-ci-smoke-" });
  const reports = options.reports ?? cwd;
  const reportsAs = options.reportsAs ?? reports;
  const timeout = options.runTimeoutMs ?? 60_000;
  await using service: FakeService = await startFakeService({ agents: _agents() });
  const gate = (agents: readonly string[], extra: readonly string[] = []) => [
    "--base-url",
    service.url,
    "--timeout-minutes",
    "2",
    ...agents.flatMap((agent) => ["--agent", agent]),
    ...extra,
  ];
  const run = (args: readonly string[]) =>
    new _Started(started, args, cwd).finished(timeout).catch((error: Error) => error);
  const results: CheckResult[] = [];
  const runs: _Run[] = [];
  const record = (run: _Run | Error) => {
    if (!(run instanceof Error)) runs.push(run);
    return run;
  };

  const version = record(await run(["--version"]));
  const expected = `service-ci ${options.version}`;
  results.push(
    version instanceof Error
      ? { name: `--version prints "${expected}"`, ok: false, detail: version.message }
      : {
        name: `--version prints "${expected}"`,
        ok: version.code === 0 && version.stdout.split("\n")[0]?.trim() === expected,
        detail: _shown(version),
      },
  );
  const help = record(await run(["--help"]));
  results.push(
    help instanceof Error ? { name: "--help exits 0", ok: false, detail: help.message } : {
      name: "--help exits 0 and prints the usage",
      ok: help.code === 0 && help.stdout.includes("Usage:"),
      detail: _shown(help),
    },
  );

  // A step that runs the command without its arguments (a container step copied without its
  // command runs the image's CMD, `service-ci` alone) must not pass: no agent is a usage error.
  results.push(_noArgumentsCheck(record(await run([]))));

  // The three verdicts, at once: each waits about a second for its first read.
  const junitName = "service-ci-junit.xml";
  const junitAs = `${reportsAs.replace(/[\\/]+$/, "")}/${junitName}`;
  const [passing, failing, unchecked, reported] = await Promise.all([
    run(gate([SMOKE_AGENTS.passing])),
    run(gate([SMOKE_AGENTS.failing])),
    run(gate([SMOKE_AGENTS.unchecked])),
    run(gate([SMOKE_AGENTS.passing, SMOKE_AGENTS.failing], ["--json", "--junit", junitAs])),
  ]);
  results.push(_exitCheck("a passing gate exits 0", record(passing!), 0));
  results.push(_exitCheck("a failing gate exits 1", record(failing!), 1));
  results.push(_exitCheck("an unchecked gate exits 3", record(unchecked!), 3));
  record(reported!);
  results.push(_jsonCheck(reported!));
  const junitPath = `${reports.replace(/[\\/]+$/, "")}/${junitName}`;
  let junit = "";
  try {
    junit = await Deno.readTextFile(junitPath);
  } catch {
    // Reported by the check below.
  }
  results.push(
    await _junitCheck(reported!, junit, junitPath, options.xmllint ?? _onPath("xmllint")),
  );

  if (options.sigint ?? Deno.build.os !== "windows") {
    results.push(await _sigintCheck(started, gate([SMOKE_AGENTS.slow]), cwd, timeout, record));
  } else {
    results.push({
      name: "SIGINT during a wait exits 130",
      ok: true,
      detail: "",
      skipped: Deno.build.os === "windows" ? "Windows has no SIGINT to send" : "--no-sigint",
    });
  }

  const texts = [
    ...runs.flatMap((run) => [run.stdout, run.stderr]),
    junit,
  ];
  const leaks = texts.filter((text) => text.includes(KEYS.ci) || text.includes(KEYS.ci.slice(8)));
  results.push({
    name: "the key appears in no output and no report",
    ok: leaks.length === 0,
    detail: leaks.map((text) => text.slice(0, 400)).join("\n    "),
  });
  const noise = [
    ...new Set(
      runs.flatMap((run) =>
        denoNoise(`${run.stderr}\n${run.stdout}`).map((line) => `${_label(run)}: ${line}`)
      ),
    ),
  ];
  results.push({
    name: "no Deno noise: no permission prompt, download, compile or warning line",
    ok: noise.length === 0 && runs.length > 0,
    detail: noise.join("\n    "),
  });
  await Deno.remove(cwd, { recursive: true }).catch(() => {});
  return results;
}

// A run as a reader tells it apart: its agent, or its one flag.
function _label(run: _Run): string {
  const agent = run.args.indexOf("--agent");
  return agent === -1 ? run.args.join(" ") : `--agent ${run.args[agent + 1]}`;
}

function _noArgumentsCheck(run: _Run | Error): CheckResult {
  const name = "no arguments exits 2 with the one-line usage error";
  if (run instanceof Error) return { name, ok: false, detail: run.message };
  const lines = run.stderr.trimEnd().split("\n");
  const ok = run.code === 2 && run.stdout === "" && lines.length === 1 &&
    /^service-ci: .*--agent/.test(lines[0]!);
  return { name, ok, detail: ok ? "" : _shown(run) };
}

function _jsonCheck(run: _Run | Error): CheckResult {
  const name = "--json prints a report that docs/report.schema.json accepts";
  if (run instanceof Error) return { name, ok: false, detail: run.message };
  let document: unknown;
  try {
    document = JSON.parse(run.stdout);
  } catch (error) {
    return { name, ok: false, detail: `not JSON (${String(error)})\n    ${_shown(run)}` };
  }
  const valid = _validateReport(document);
  if (valid !== "") return { name, ok: false, detail: valid };
  const outcomes = (document as { agents: { agent_id: string; outcome: string }[] }).agents
    .map((agent) => `${agent.agent_id}=${agent.outcome}`).join(" ");
  const wanted = `${SMOKE_AGENTS.passing}=passed ${SMOKE_AGENTS.failing}=failed`;
  const ok = run.code === 1 && outcomes === wanted;
  return { name, ok, detail: ok ? "" : `${outcomes} (wanted ${wanted})\n    ${_shown(run)}` };
}

async function _junitCheck(
  run: _Run | Error,
  junit: string,
  path: string,
  xmllint: boolean,
): Promise<CheckResult> {
  const name = xmllint
    ? "--junit writes a report that the Jenkins JUnit XSD accepts"
    : "--junit writes a report (xmllint not found: not checked against the XSD)";
  if (run instanceof Error) return { name, ok: false, detail: run.message };
  if (junit === "") return { name, ok: false, detail: `no report at ${path}\n    ${_shown(run)}` };
  const cases = [SMOKE_AGENTS.passing, SMOKE_AGENTS.failing].filter((agent) =>
    !junit.includes(agent)
  );
  if (!junit.startsWith("<?xml") || cases.length > 0) {
    return { name, ok: false, detail: `not a report of both agents:\n    ${junit.slice(0, 400)}` };
  }
  const errors = xmllint ? await _xmllintErrors(path) : "";
  return { name, ok: errors === "", detail: errors };
}

async function _sigintCheck(
  command: readonly string[],
  args: readonly string[],
  cwd: string,
  timeout: number,
  record: (run: _Run | Error) => _Run | Error,
): Promise<CheckResult> {
  const name = 'SIGINT during a wait exits 130 with the "still going" lines';
  const started = new _Started(command, args, cwd);
  const waiting = await _until(
    () => started.ended || /triggered run \S+/.test(started.stderr),
    timeout,
  ) && !started.ended;
  if (!waiting) {
    started.kill("SIGKILL");
    const run = record(await started.finished(timeout).catch((error: Error) => error));
    return {
      name,
      ok: false,
      detail: `no "triggered run" line\n    ${run instanceof Error ? run.message : _shown(run)}`,
    };
  }
  // A moment for the first read to go out, so the interrupt lands mid-wait.
  await new Promise((resolve) => setTimeout(resolve, 300));
  started.kill("SIGINT");
  const run = record(await started.finished(15_000).catch((error: Error) => error));
  if (run instanceof Error) return { name, ok: false, detail: run.message };
  const stillGoing = new RegExp(
    `run \\S+ of agent ${SMOKE_AGENTS.slow} is still going on the service`,
  );
  const ok = run.code === 130 && stillGoing.test(run.stderr);
  return { name, ok, detail: ok ? "" : _shown(run) };
}

let _validate: ((document: unknown) => string) | undefined;

function _validateReport(document: unknown): string {
  if (_validate === undefined) {
    const validate = strictAjv().compile(reportSchema());
    _validate = (value) => validate(value) ? "" : JSON.stringify(validate.errors, null, 2);
  }
  return _validate(document);
}

/**
 * The lines {@linkcode main} prints for `results`: `ok`, `FAIL` or `skip` and the check's name
 * (a failure's detail indented below it), then `N passed, N failed`.
 *
 * @example
 * ```ts
 * formatResults([{ name: "--help exits 0", ok: true, detail: "" }]);
 * // ["ok    --help exits 0", "1 passed, 0 failed"]
 * ```
 */
export function formatResults(results: readonly CheckResult[]): string[] {
  const lines: string[] = [];
  for (const result of results) {
    if (result.skipped !== undefined) {
      lines.push(`skip  ${result.name} (${result.skipped})`);
    } else {
      lines.push(`${result.ok ? "ok  " : "FAIL"}  ${result.name}`);
      if (!result.ok && result.detail !== "") lines.push(`    ${result.detail}`);
    }
  }
  const counted = results.filter((result) => result.skipped === undefined);
  const passed = counted.filter((result) => result.ok).length;
  lines.push(`${passed} passed, ${counted.length - passed} failed`);
  return lines;
}

const USAGE = `Usage: deno task smoke [options] -- <command> [<argument>...]
       deno task smoke [options] --source

Runs service-ci's smoke checks against a command that starts it (service-ci's own
arguments are appended), with the fake evaluation service on 127.0.0.1.

Options:
  --source              test \`deno run\` of src/main.ts with the compile step's flags
  --expect-version <v>  the version --version must print (default: deno.json's)
  --reports <dir>       where to read the --junit report (default: a temporary directory)
  --reports-as <dir>    that directory as the command sees it (e.g. a container's mount)
  --no-sigint           skip the SIGINT check (it never runs on Windows)
  -h, --help            print this help`;

/**
 * Runs the checks for the command-line arguments, prints the results, and returns the exit
 * code: 0 every check passed, 1 a check failed, 2 usage error.
 *
 * @example
 * ```ts
 * const code = await main(["--source"]);
 * ```
 */
export async function main(args: readonly string[]): Promise<number> {
  let values;
  let positionals;
  try {
    ({ values, positionals } = parseArgs({
      args: [...args],
      options: {
        source: { type: "boolean" },
        "expect-version": { type: "string" },
        reports: { type: "string" },
        "reports-as": { type: "string" },
        "no-sigint": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: true,
    }));
    if (values.help) {
      console.log(USAGE);
      return 0;
    }
    if (values.source === true && positionals.length > 0) {
      throw new TypeError(`give --source or a command, not both (got ${positionals.join(" ")})`);
    }
    if (values.source !== true && positionals.length === 0) {
      throw new TypeError("give the command that starts service-ci after --, or --source");
    }
    if (values["reports-as"] !== undefined && values.reports === undefined) {
      throw new TypeError("--reports-as needs --reports (the same directory, as read here)");
    }
  } catch (error) {
    console.error(`smoke: ${error instanceof Error ? error.message : String(error)}`);
    console.error("run `deno task smoke --help` for the options");
    return 2;
  }
  const version = values["expect-version"] ??
    readBuildConfig(Deno.readTextFileSync(new URL("deno.json", ROOT))).version;
  const command = values.source === true ? sourceCommand() : positionals;
  console.log(`smoke: ${command.join(" ")}`);
  const results = await smoke(command, {
    version: version.replace(/^v/, ""),
    ...(values.reports === undefined ? {} : { reports: values.reports }),
    ...(values["reports-as"] === undefined ? {} : { reportsAs: values["reports-as"] }),
    ...(values["no-sigint"] === true ? { sigint: false } : {}),
  });
  for (const line of formatResults(results)) console.log(line);
  return results.every((result) => result.ok) ? 0 : 1;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
