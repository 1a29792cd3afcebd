/**
 * The whole invocation, with every effect passed in: arguments and environment → config →
 * metadata → client → one gate per agent → reports → exit code.
 */

import { ApiError, ServiceClient } from "./client.ts";
import {
  CI_ENV_VARIABLES,
  type CiMetadata,
  describeCiMetadata,
  detectCiMetadata,
} from "./ci_metadata.ts";
import {
  type Config,
  CONFIG_ENV_VARIABLES,
  parseCommandLine,
  resolveConfig,
  UsageError,
} from "./config.ts";
import { mergeEnv, parseEnvFile } from "./env_file.ts";
import { combineExitCodes, ExitCode } from "./exit_code.ts";
import type { AgentOutcome, RunReport } from "./outcome.ts";
import { DeadlineReached, type GateEnd, type GateResult, runGate } from "./poll.ts";
import { ConsoleReporter } from "./report/console.ts";
import {
  githubAnnotations,
  githubOutputs,
  githubSummary,
  githubUsageError,
} from "./report/github.ts";
import { renderJson } from "./report/json.ts";
import { renderJunit } from "./report/junit.ts";
import { maskSecrets, sanitize } from "./sanitize.ts";
import { HELP } from "./help.ts";
import { userAgent, VERSION } from "./version.ts";

/** Variables read besides the configuration's and the CI metadata's. */
export const OUTPUT_ENV_VARIABLES: readonly string[] = [
  "NO_COLOR",
  "GITHUB_ACTIONS",
  "GITHUB_OUTPUT",
  "GITHUB_STEP_SUMMARY",
];

/** Every environment variable the program reads. */
export const ENV_VARIABLES: readonly string[] = [
  ...new Set([...CONFIG_ENV_VARIABLES, ...CI_ENV_VARIABLES, ...OUTPUT_ENV_VARIABLES]),
];

/** Why the process is being interrupted: the reason of the interrupt signal. */
export class Interrupted extends Error {
  override name = "Interrupted";
  /** The signal that arrived. */
  readonly signal: "SIGINT" | "SIGTERM";
  /** Makes the reason for one signal. */
  constructor(signal: "SIGINT" | "SIGTERM") {
    super(`interrupted by ${signal}`);
    this.signal = signal;
  }
}

/** The effects of one invocation; `main.ts` passes the real ones, tests pass fakes. */
export interface RunDeps {
  readonly args: readonly string[];
  /** Reads one environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Reads a text file; rejects as `Deno.readTextFile` does. */
  readonly readTextFile: (path: string) => Promise<string>;
  /** Writes (or appends to) a text file. */
  readonly writeTextFile: (path: string, text: string, append: boolean) => Promise<void>;
  /** Whether a directory exists (for report paths, checked before anything is sent). */
  readonly isDirectory: (path: string) => Promise<boolean>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stderrIsTerminal: boolean;
  /** Aborts with an {@linkcode Interrupted} reason on SIGINT/SIGTERM. */
  readonly interrupt: AbortSignal;
  /** Runs git read-only; undefined on any failure. */
  readonly git: (args: readonly string[]) => Promise<string | undefined>;
  /** Makes the fetch to use, trusting the extra PEM certificates if given. */
  readonly makeFetch: (caCerts: string | undefined) => typeof fetch;
  readonly clock: () => number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random: () => number;
  readonly newIdempotencyKey: () => string;
  /** Wall-clock time, for the report's start time. */
  readonly now: () => number;
}

/**
 * Runs one invocation and returns its exit code. It never throws: every failure is a line on
 * stderr and a code.
 *
 * @example
 * ```ts
 * declare const deps: RunDeps;
 * const code = await run(deps);
 * ```
 */
export async function run(deps: RunDeps): Promise<number> {
  const secrets: string[] = [];
  const stderr = (text: string) => deps.stderr(maskSecrets(text, secrets));
  const stdout = (text: string) => deps.stdout(maskSecrets(text, secrets));
  try {
    const invocation = parseCommandLine(deps.args);
    if (invocation.kind === "help") {
      stdout(HELP);
      return ExitCode.Passed;
    }
    if (invocation.kind === "version") {
      stdout(`service-ci ${VERSION}\n`);
      return ExitCode.Passed;
    }
    const dotenv = await _readDotenv(deps, invocation.flags["env-file"]);
    const env = mergeEnv(ENV_VARIABLES, deps.env, dotenv);
    if (env.SERVICE_API_KEY) secrets.push(env.SERVICE_API_KEY);
    const config = resolveConfig(invocation.flags, env);
    await _checkReportPaths(deps, config);
    const caCerts = config.caCertPath === undefined
      ? undefined
      : await _readCaCerts(deps, config.caCertPath);
    const metadata = await detectCiMetadata(env, {
      overrides: config.overrides,
      readTextFile: (path) => deps.readTextFile(path).catch(() => undefined),
      git: deps.git,
    });
    const client = new ServiceClient({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      userAgent: userAgent(),
      requestTimeoutMs: config.requestTimeoutMs,
      fetch: _makeFetch(deps, caCerts, config.caCertPath),
    });
    if (config.dryRun) {
      _printDryRun(client, config, metadata, stdout, stderr);
      return ExitCode.Passed;
    }
    return await _gates(deps, { config, env, metadata, client, stdout, stderr });
  } catch (error) {
    if (error instanceof UsageError) {
      stderr(`service-ci: ${error.message}\n`);
      await _reportUsageErrorToGithub(deps, error.message, secrets, stderr);
      return ExitCode.Usage;
    }
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    stderr(`service-ci: internal error, the gate could not be checked: ${message}\n`);
    return ExitCode.Unchecked;
  }
}

// In GitHub Actions a usage error still gets an annotation and definite step outputs. The
// annotation goes to stderr: with --json, stdout must stay one JSON document.
async function _reportUsageErrorToGithub(
  deps: RunDeps,
  message: string,
  secrets: readonly string[],
  stderr: (text: string) => void,
): Promise<void> {
  if (deps.env("GITHUB_ACTIONS") !== "true") return;
  const { annotation, outputs } = githubUsageError(
    message,
    `ghadelimiter_${crypto.randomUUID()}`,
  );
  stderr(`${annotation}\n`);
  const path = deps.env("GITHUB_OUTPUT");
  if (path) await _writeReport(deps, path, outputs, true, "GITHUB_OUTPUT", secrets, stderr);
}

// Writes (or appends) one report file with the secrets masked; a failure is one line on stderr
// and `false`.
async function _writeReport(
  deps: RunDeps,
  path: string,
  text: string,
  append: boolean,
  what: string,
  secrets: readonly string[],
  stderr: (text: string) => void,
): Promise<boolean> {
  try {
    await deps.writeTextFile(path, maskSecrets(text, secrets), append);
    return true;
  } catch (error) {
    stderr(`service-ci: cannot write ${what} (${path}): ${_reason(error)}\n`);
    return false;
  }
}

async function _readDotenv(
  deps: RunDeps,
  explicit: string | undefined,
): Promise<Record<string, string>> {
  const path = explicit ?? ".env";
  try {
    return parseEnvFile(await deps.readTextFile(path));
  } catch (error) {
    if (explicit === undefined && error instanceof Deno.errors.NotFound) return {};
    const name = explicit === undefined ? "the .env file in the working directory" : "--env-file";
    throw new UsageError(`${name} cannot be read (${path}): ${_reason(error)}`);
  }
}

async function _readRequired(
  deps: RunDeps,
  path: string,
  name: string,
  what: string,
): Promise<string> {
  try {
    return await deps.readTextFile(path);
  } catch (error) {
    throw new UsageError(`${name} must name ${what} that can be read (${path}): ${_reason(error)}`);
  }
}

const CA_CERT = "--ca-cert/SERVICE_CA_CERT";

// Deno ignores a file without a certificate block, which would leave the CA silently untrusted.
async function _readCaCerts(deps: RunDeps, path: string): Promise<string> {
  const text = await _readRequired(deps, path, CA_CERT, "a PEM file");
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    throw new UsageError(
      `${CA_CERT} must name a PEM file of certificates (-----BEGIN CERTIFICATE-----); ${path} holds none`,
    );
  }
  return text;
}

// Deno rejects a malformed certificate block when the client is made, before anything is sent.
function _makeFetch(
  deps: RunDeps,
  caCerts: string | undefined,
  path: string | undefined,
): typeof fetch {
  try {
    return deps.makeFetch(caCerts);
  } catch (error) {
    if (caCerts === undefined) throw error;
    throw new UsageError(
      `${CA_CERT} must name a PEM file of valid certificates (${path}): ${_reason(error)}`,
    );
  }
}

async function _checkReportPaths(deps: RunDeps, config: Config): Promise<void> {
  if (config.junitPath === undefined) return;
  const slash = Math.max(config.junitPath.lastIndexOf("/"), config.junitPath.lastIndexOf("\\"));
  const directory = slash < 0 ? "." : config.junitPath.slice(0, slash) || "/";
  if (!(await deps.isDirectory(directory))) {
    throw new UsageError(
      `--junit must be a file path in an existing directory (${directory} does not exist)`,
    );
  }
}

function _reason(error: unknown): string {
  return error instanceof Error ? error.message.split("\n")[0]! : String(error);
}

function _printDryRun(
  client: ServiceClient,
  config: Config,
  metadata: CiMetadata,
  stdout: (text: string) => void,
  stderr: (text: string) => void,
): void {
  stderr(`service-ci ${VERSION}: dry run, nothing is sent; ${describeCiMetadata(metadata)}\n`);
  const requests = config.agents.map((agent) => {
    const headers = Object.fromEntries(
      [...client.headers("<a new UUID v4 for each trigger>")].map(([name, value]) => [
        name,
        name === "x-api-key" ? "***" : value,
      ]),
    );
    return {
      method: "POST",
      url: client.runsUrl(agent).href,
      headers,
      body: { ci_metadata: metadata },
    };
  });
  if (config.json) {
    stdout(`${JSON.stringify({ dry_run: true, requests }, null, 2)}\n`);
    return;
  }
  for (const request of requests) {
    const headers = Object.entries(request.headers).map(([name, value]) => `${name}: ${value}`);
    stdout(
      `${request.method} ${request.url}\n${headers.join("\n")}\n\n${
        JSON.stringify(request.body, null, 2)
      }\n\n`,
    );
  }
}

interface _Context {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly metadata: CiMetadata;
  readonly client: ServiceClient;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

async function _gates(deps: RunDeps, context: _Context): Promise<number> {
  const { config, env, metadata, client } = context;
  const github = env.GITHUB_ACTIONS === "true";
  // Workflow commands go to stdout unless --json owns it; the Actions runner reads both.
  const command = config.json ? context.stderr : context.stdout;
  const started = deps.clock();
  const startedAt = new Date(deps.now()).toISOString();
  const deadline = started + config.timeoutMs;
  const deadlineController = new AbortController();
  const deadlineTimer = setTimeout(
    () => deadlineController.abort(new DeadlineReached()),
    config.timeoutMs,
  );
  const signal = AbortSignal.any([deadlineController.signal, deps.interrupt]);
  const reporter = new ConsoleReporter({
    write: context.stderr,
    clock: deps.clock,
    deadline,
    agents: config.agents,
    tty: deps.stderrIsTerminal,
    color: deps.stderrIsTerminal && !env.NO_COLOR,
    secrets: [config.apiKey],
  });
  const ticker = setInterval(() => reporter.tick(), deps.stderrIsTerminal ? 1000 : 5000);
  if (github) command("::group::service-ci progress\n");
  const agents = config.agents.length === 1 ? "1 agent" : `${config.agents.length} agents`;
  const minutes = Number((config.timeoutMs / 60_000).toFixed(3));
  reporter.line(
    `service-ci ${VERSION} → ${config.baseUrl.origin}${
      config.baseUrl.pathname.replace(/\/+$/, "")
    } (${agents}, timeout ${minutes} min${config.noWait ? ", --no-wait" : ""})`,
  );
  reporter.line(describeCiMetadata(metadata));

  let outcomes: AgentOutcome[];
  try {
    outcomes = await Promise.all(config.agents.map(async (agentId) => {
      const result = await runGate({ ...deps, client }, {
        agentId,
        metadata,
        deadline,
        signal,
        runId: config.runId,
        noWait: config.noWait,
        maxPollIntervalMs: config.maxPollIntervalMs,
        onEvent: (event) => reporter.event(agentId, event),
      });
      const outcome = _toOutcome(agentId, result, deps.clock() - started, config);
      reporter.agentDone(outcome);
      return outcome;
    }));
  } finally {
    clearTimeout(deadlineTimer);
    clearInterval(ticker);
  }
  if (github) command("::endgroup::\n");

  const combined = combineExitCodes(outcomes.map((outcome) => outcome.exitCode));
  const exitCode = config.warnOnly && combined === ExitCode.Failed ? ExitCode.Passed : combined;
  let report: RunReport = {
    version: VERSION,
    exitCode,
    startedAt,
    durationMs: Math.round(deps.clock() - started),
    warnOnly: config.warnOnly,
    ciMetadata: metadata,
    agents: outcomes,
  };
  const failedWrites = await _writeReports(deps, report, context, command, github);
  if (failedWrites && (exitCode === ExitCode.Passed || exitCode === ExitCode.Failed)) {
    report = { ...report, exitCode: ExitCode.Unchecked };
  }
  reporter.finish(report);
  for (const outcome of outcomes) {
    if (outcome.outcome === "interrupted" && outcome.runId !== null) {
      context.stderr(
        `run ${outcome.runId} of agent ${outcome.agentId} is still going on the service${
          outcome.url === null ? "" : `: ${outcome.url}`
        }\n`,
      );
    }
  }
  return report.exitCode;
}

async function _writeReports(
  deps: RunDeps,
  report: RunReport,
  context: _Context,
  command: (text: string) => void,
  github: boolean,
): Promise<boolean> {
  const { config, env } = context;
  const secrets = [config.apiKey];
  let failed = false;
  const write = async (path: string, text: string, append: boolean, what: string) => {
    if (!await _writeReport(deps, path, text, append, what, secrets, context.stderr)) {
      failed = true;
    }
  };
  if (config.json) context.stdout(renderJson(report));
  if (config.junitPath !== undefined) {
    await write(config.junitPath, renderJunit(report), false, "the --junit report");
  }
  if (github) {
    for (const line of githubAnnotations(report)) command(`${line}\n`);
    if (env.GITHUB_OUTPUT) {
      const delimiter = `ghadelimiter_${crypto.randomUUID()}`;
      await write(env.GITHUB_OUTPUT, githubOutputs(report, delimiter), true, "GITHUB_OUTPUT");
    }
    if (env.GITHUB_STEP_SUMMARY) {
      await write(env.GITHUB_STEP_SUMMARY, githubSummary(report), true, "GITHUB_STEP_SUMMARY");
    }
  }
  return failed;
}

function _toOutcome(
  agentId: string,
  result: GateResult,
  durationMs: number,
  config: Config,
): AgentOutcome {
  const clean = (text: string | null) =>
    text === null ? null : sanitize(text, { secrets: [config.apiKey] });
  const base = {
    agentId,
    runId: clean(result.runId),
    status: clean(result.status),
    passed: result.passed,
    durationMs: Math.round(durationMs),
    url: clean(result.url),
  };
  const end: GateEnd = result.end;
  switch (end.kind) {
    case "passed":
      return { ...base, outcome: "passed", exitCode: ExitCode.Passed, error: null };
    case "failed":
      return { ...base, outcome: "failed", exitCode: ExitCode.Failed, error: null };
    case "triggered":
      return { ...base, outcome: "triggered", exitCode: ExitCode.Passed, error: null };
    case "unchecked":
      return {
        ...base,
        outcome: "unchecked",
        exitCode: ExitCode.Unchecked,
        error: clean(_withHint(end.reason, end.error, result.runId === null)),
      };
    case "deadline": {
      const minutes = Number((config.timeoutMs / 60_000).toFixed(3));
      const last = (result.status === null ? "" : `; last status ${clean(result.status)}`) +
        (end.lastFault === null ? "" : `; last fault: ${clean(end.lastFault)}`);
      const what = result.runId === null ? "before the run was triggered" : "before a verdict";
      return {
        ...base,
        outcome: "timed_out",
        exitCode: ExitCode.TimedOut,
        error: `the timeout of ${minutes} min ran out ${what}${last}`,
      };
    }
    case "aborted": {
      const signal = end.reason instanceof Interrupted ? end.reason.signal : "SIGINT";
      return {
        ...base,
        outcome: "interrupted",
        exitCode: signal === "SIGTERM" ? ExitCode.Sigterm : ExitCode.Sigint,
        error: `interrupted by ${signal}`,
      };
    }
  }
}

/** Adds what to fix to the service's refusal, naming the prerequisite when it is known. */
function _withHint(reason: string, error: ApiError | undefined, duringTrigger: boolean): string {
  if (error === undefined) return reason;
  const code = (error.code ?? "").toLowerCase();
  let hint: string | undefined;
  if (error.status === 401) {
    hint = "check that SERVICE_API_KEY holds a current API key of this service";
  } else if (error.status === 403) {
    hint = "the API key needs CI access: create one under Settings → API Keys with CI access";
  } else if (error.kind === "not_found") {
    hint = duringTrigger
      ? "check the agent UUID and --base-url: the service knows no such agent"
      : "the run is no longer readable on the service";
  } else if (code.includes("inactive")) {
    hint = "the agent is inactive: activate it in the service's dashboard";
  } else if (code.includes("gate")) {
    hint = "the agent has no quality gate: configure one on the agent";
  } else if (code.includes("system") || code.includes("endpoint")) {
    hint = "the agent's system has no reachable endpoint: configure it on the system";
  } else if (error.kind === "tls") {
    hint =
      "trust the service's CA with --ca-cert <pem> (or SERVICE_CA_CERT, DENO_CERT, DENO_TLS_CA_STORE=system), or check --base-url's host name";
  } else if (error.kind === "redirect") {
    hint = "check --base-url: redirects are only followed within the API on the same origin";
  }
  return hint === undefined ? reason : `${reason} (fix: ${hint})`;
}
