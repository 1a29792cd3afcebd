/**
 * One invocation, as a one-way pipeline with every effect passed in: arguments and environment
 * → config → metadata → client → one gate per agent → outcome and exit code → reports.
 * The exit code is decided before any report is rendered, and every report shows the code the
 * process exits with.
 */

import {
  type CiMetadata,
  describeCiMetadata,
  detectCiMetadata,
  detectProvider,
} from "./ci_metadata.ts";
import { ServiceClient } from "./client.ts";
import { type Config, parseCommandLine, UsageError } from "./config.ts";
import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { ENV_VARIABLES } from "./env_variables.ts";
import { ExitCode } from "./exit_code.ts";
import { firstLine, loadConfig, makeTrustingFetch } from "./load_config.ts";
import {
  type AgentOutcome,
  decideExitCode,
  formatMinutes,
  type RunReport,
  toAgentOutcome,
} from "./outcome.ts";
import { Output } from "./output.ts";
import { DeadlineReached, type GateDeps, runGate } from "./poll.ts";
import { ConsoleReporter } from "./report/console.ts";
import {
  cannotWrite,
  deliverReports,
  type FileReport,
  type ReportFile,
  writeReportFile,
} from "./report/deliver.ts";
import {
  githubAnnotations,
  githubOutputs,
  githubSummary,
  githubUsageError,
} from "./report/github.ts";
import { renderJson } from "./report/json.ts";
import { nativeWriter } from "./report/native.ts";
import {
  type CommandOptions,
  type CommandResult,
  type NativeIo,
  nativeTimeBound,
  type NativeWriter,
} from "./report/native_io.ts";
import { forgeTokens } from "./pr_comment/env.ts";
import type { PullRequestComment } from "./pr_comment/pr_comment.ts";
import type { TriggeredRun } from "./pr_comment/content.ts";
import { sanitize } from "./sanitize.ts";
import { userAgent, VERSION } from "./version.ts";

export type { CommandOptions, CommandResult, ReportFile };

/** The effects of one invocation; `main.ts` passes the real ones, `tests/run_test.ts` fakes. */
export interface RunDeps {
  /** The command-line arguments, without the program's name. */
  readonly args: readonly string[];
  /** Reads one environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Reads a text file; rejects as `Deno.readTextFile` does. */
  readonly readTextFile: (path: string) => Promise<string>;
  /**
   * What keeps a report from being written at a path, or `null` (checked before anything is
   * sent, without writing to it).
   */
  readonly checkReportPath: (path: string) => Promise<string | null>;
  /** Opens a report file: created, and truncated unless `append`. */
  readonly openReportFile: (path: string, append: boolean) => Promise<ReportFile>;
  /** Writes to stdout; may throw (a closed pipe). */
  readonly stdout: (text: string) => void;
  /** Writes to stderr; may throw (a closed pipe). */
  readonly stderr: (text: string) => void;
  /** Whether stderr is a terminal: a live status line rather than log lines. */
  readonly stderrIsTerminal: boolean;
  /** Aborts with an `Interrupted` reason on SIGINT/SIGTERM. */
  readonly interrupt: AbortSignal;
  /** Runs git read-only; undefined on any failure. */
  readonly git: (args: readonly string[]) => Promise<string | undefined>;
  /** Makes the fetch to use, trusting the extra PEM certificates if given. */
  readonly makeFetch: (caCerts: string | undefined) => typeof fetch;
  /** Milliseconds on a monotonic clock: the one clock every wait and the deadline use. */
  readonly clock: () => number;
  /** Waits `ms` on that clock, or rejects with the signal's reason when it aborts. */
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** A number in [0, 1), for jitter. */
  readonly random: () => number;
  /** A fresh UUID v4 (idempotency keys, output delimiters). */
  readonly uuid: () => string;
  /** Wall-clock time, for the report's start time. */
  readonly now: () => number;
  /** The absolute working directory. */
  readonly cwd: string;
  /**
   * Runs a program found on PATH (a CI's native channel) within `options.timeoutMs`; never
   * rejects: the result says how it ended.
   */
  readonly runCommand: (
    program: string,
    args: readonly string[],
    options: CommandOptions,
  ) => Promise<CommandResult>;
  /**
   * Makes the fetch for a CI's own HTTP channel, through `proxy` when given; with `timeoutMs`,
   * each request is aborted when it has no answer within `timeoutMs()`.
   */
  readonly makeProxyFetch: (proxy: string | undefined, timeoutMs?: () => number) => typeof fetch;
}

/**
 * Runs one invocation and resolves with its exit code. It never throws: every failure is a line
 * on stderr and a code.
 *
 * @example
 * ```ts
 * declare const deps: RunDeps;
 * const code = await run(deps);
 * ```
 */
export async function run(deps: RunDeps): Promise<number> {
  const output = new Output(deps);
  output.addSecret(deps.env("SERVICE_API_KEY"));
  try {
    const invocation = parseCommandLine(deps.args);
    if (invocation.kind === "help") {
      const { helpText } = await import("./help.ts");
      return output.stdout(helpText(DEFAULT_BASE_URL)) ? ExitCode.Passed : ExitCode.Unchecked;
    }
    if (invocation.kind === "version") {
      const text = `service-ci ${VERSION}\nbuilt-in service address: ${
        DEFAULT_BASE_URL ?? "none"
      }\n`;
      return output.stdout(text) ? ExitCode.Passed : ExitCode.Unchecked;
    }
    const { config, env, caCerts } = await loadConfig(invocation.flags, ENV_VARIABLES, deps);
    output.addSecret(config.apiKey);
    for (const token of forgeTokens(env)) output.addSecret(token);
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
      baseUrlSource: config.baseUrlSource,
      fetch: makeTrustingFetch(deps.makeFetch, caCerts, config.caCertPath),
    });
    if (config.dryRun) {
      if (config.json) output.commandsToStderr();
      return await _dryRun(client, config, metadata, output);
    }
    // One answer to "which CI is this" (ci_metadata.ts), the one sent to the service.
    const github = metadata.provider === "github_actions";
    // Every report path is checked before anything is sent: a bad one is a usage error.
    const reports = await _fileReports(deps, { config, env, github, output });
    if (config.json || reports.junitStream === "stdout") output.commandsToStderr();
    const native = await _native(deps, config, metadata, output, reports.junitStream === "stdout");
    const comment = config.prComment
      ? await _pullRequestComment(deps, config, env, metadata, output)
      : undefined;
    const context = { config, env, metadata, client, output, github, native, comment, reports };
    const gates = await _gates(deps, context);
    return await _report(deps, gates, context);
  } catch (error) {
    if (error instanceof UsageError) {
      output.stderr(`service-ci: ${error.message}\n`);
      await _reportUsageErrorToGithub(deps, error.message, output);
      return ExitCode.Usage;
    }
    // No stack trace: one line, and a code that never reads as a verdict.
    output.stderr(
      `service-ci: internal error, the gate could not be checked: ${firstLine(error)}\n`,
    );
    return ExitCode.Unchecked;
  }
}

async function _dryRun(
  client: ServiceClient,
  config: Config,
  metadata: CiMetadata,
  output: Output,
): Promise<number> {
  output.stderr(
    `service-ci ${VERSION}: dry run, nothing is sent; ${
      describeCiMetadata(metadata)
    }; service address ${config.baseUrl.href} from ${config.baseUrlSource}\n`,
  );
  const { dryRunDocument, renderDryRun } = await import("./dry_run.ts");
  const document = dryRunDocument(client, config, metadata);
  const written = config.json
    ? output.document(`${JSON.stringify(document, null, 2)}\n`)
    : output.stdout(renderDryRun(document));
  return written ? ExitCode.Passed : ExitCode.Unchecked;
}

interface _GateContext {
  readonly config: Config;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly metadata: CiMetadata;
  readonly client: ServiceClient;
  readonly output: Output;
  readonly github: boolean;
  /** The detected CI's native writer, when it has one and it is on. */
  readonly native: NativeWriter | undefined;
  /** The pull-request comment, when asked for and possible. */
  readonly comment: PullRequestComment | undefined;
  /** The report files, checked before anything was sent. */
  readonly reports: _FileReports;
}

// The detected CI's native writer, unless --no-ci-native. TeamCity reads service messages on
// stdout only, which --json owns: there the messages would be lost, so it says so instead.
async function _native(
  deps: RunDeps,
  config: Config,
  metadata: CiMetadata,
  output: Output,
  junitOnStdout: boolean,
): Promise<NativeWriter | undefined> {
  if (!config.ciNative) return undefined;
  const writer = await nativeWriter(metadata.provider, {
    workingDirectory: deps.cwd,
    now: deps.now,
    uuid: deps.uuid,
  });
  if (writer?.ci === "TeamCity" && (config.json || junitOnStdout)) {
    output.stderr(
      `service-ci: TeamCity reads service messages only from stdout, which ${
        config.json ? "--json" : "the --junit report"
      } holds: the gate is not shown in the Tests tab (use --junit with the XML report processing build feature)\n`,
    );
    return undefined;
  }
  return writer;
}

// Loaded only when asked for: the comment's modules (and node:crypto) stay off the hot path.
async function _pullRequestComment(
  deps: RunDeps,
  config: Config,
  env: Readonly<Record<string, string | undefined>>,
  metadata: CiMetadata,
  output: Output,
): Promise<PullRequestComment | undefined> {
  const { PullRequestComment } = await import("./pr_comment/pr_comment.ts");
  // An interrupt must not stop the last edit, so its waits have a signal of their own.
  const never = new AbortController().signal;
  const made = PullRequestComment.fromEnv(env, {
    metadata,
    agents: config.agents,
    key: config.prCommentKey,
    userAgent: userAgent(),
    warn: (line) => output.stderr(`${line}\n`),
    fetch: deps.makeProxyFetch(undefined),
    sleep: (ms) => deps.sleep(ms, never),
    now: deps.now,
  });
  if ("skip" in made) {
    output.stderr(`${made.skip}\n`);
    return undefined;
  }
  return made;
}

// Runs every agent's gate against one deadline on the injected clock, with progress on stderr,
// and builds the finished report: outcomes and the exit code, before any report is rendered.
async function _gates(deps: RunDeps, context: _GateContext): Promise<_Gates> {
  const { config, metadata, client, output } = context;
  const started = deps.clock();
  const startedAt = new Date(deps.now()).toISOString();
  const deadline = started + config.timeoutMs;
  // Ends the deadline's timer and the heartbeat once every gate has ended.
  const done = new AbortController();
  const deadlineReached = new AbortController();
  deps.sleep(config.timeoutMs, done.signal).then(
    () => deadlineReached.abort(new DeadlineReached()),
    () => {},
  );
  const signal = AbortSignal.any([deadlineReached.signal, deps.interrupt]);
  // Service text is masked of every secret before it is rendered: escaping for Markdown (the
  // comment) would otherwise hide a secret from the mask that the outputs apply last.
  const secrets = output.secrets;
  const reporter = new ConsoleReporter({
    write: (text) => output.stderr(text),
    clock: deps.clock,
    deadline,
    agents: config.agents,
    tty: deps.stderrIsTerminal,
    color: deps.stderrIsTerminal && !context.env.NO_COLOR,
    secrets,
  });
  _heartbeat(deps, () => reporter.tick(), deps.stderrIsTerminal ? 1000 : 5000, done.signal);
  const agents = config.agents.length === 1 ? "1 agent" : `${config.agents.length} agents`;
  if (context.github) output.command("::group::service-ci progress");
  for (const line of context.native?.progressStart(`service-ci: waiting for ${agents}`) ?? []) {
    output.command(line);
  }
  reporter.line(
    `service-ci ${VERSION} → ${config.baseUrl.origin}${
      config.baseUrl.pathname.replace(/\/+$/, "")
    } (${agents}, timeout ${formatMinutes(config.timeoutMs)} min${
      config.noWait ? ", --no-wait" : ""
    })`,
  );
  reporter.line(describeCiMetadata(metadata));
  const gateDeps: GateDeps = {
    client,
    clock: deps.clock,
    sleep: deps.sleep,
    random: deps.random,
    newIdempotencyKey: deps.uuid,
  };
  // The comment is first written once every agent has its run (or has ended without one).
  const triggered = new Map<string, TriggeredRun>();
  const settle = (run: TriggeredRun) => {
    if (context.comment === undefined || triggered.has(run.agentId)) return;
    const clean = (text: string | null) => text === null ? null : sanitize(text, { secrets });
    triggered.set(run.agentId, {
      ...run,
      runId: clean(run.runId),
      url: clean(run.url),
      refused: clean(run.refused ?? null),
    });
    if (triggered.size === config.agents.length) {
      void context.comment.begin({
        commitSha: metadata.commit_sha,
        buildUrl: metadata.build_url,
        runs: config.agents.map((agentId) => triggered.get(agentId)!),
      });
    }
  };
  let outcomes: AgentOutcome[];
  try {
    outcomes = await Promise.all(config.agents.map(async (agentId) => {
      const result = await runGate(gateDeps, {
        agentId,
        metadata,
        deadline,
        signal,
        runId: config.runId,
        noWait: config.noWait,
        maxPollIntervalMs: config.maxPollIntervalMs,
        onEvent: (event) => {
          reporter.event(agentId, event);
          if (event.type === "triggered") settle({ agentId, runId: event.runId, url: event.url });
          if (event.type === "attached") settle({ agentId, runId: event.runId, url: null });
        },
      });
      const outcome = toAgentOutcome(agentId, result, {
        durationMs: deps.clock() - started,
        timeoutMs: config.timeoutMs,
        runIdGiven: config.runId !== undefined,
        secrets,
      });
      // A gate that ended without a run says why in the comment, not "running".
      settle({
        agentId,
        runId: result.runId,
        url: result.url,
        refused: result.runId === null ? outcome.error ?? outcome.outcome : null,
      });
      reporter.agentDone(outcome);
      return outcome;
    }));
  } finally {
    done.abort();
  }
  if (context.github) output.command("::endgroup::");
  const report: RunReport = {
    version: VERSION,
    exitCode: decideExitCode(outcomes, { warnOnly: config.warnOnly }),
    startedAt,
    durationMs: Math.round(deps.clock() - started),
    warnOnly: config.warnOnly,
    ciMetadata: metadata,
    agents: outcomes,
  };
  for (const line of context.native?.progressEnd(report) ?? []) output.command(line);
  return { report, reporter };
}

interface _Gates {
  /** The finished run, its exit code decided. */
  readonly report: RunReport;
  /** The console, which writes the summary once the reports are delivered. */
  readonly reporter: ConsoleReporter;
}

async function _heartbeat(
  deps: RunDeps,
  tick: () => void,
  intervalMs: number,
  signal: AbortSignal,
): Promise<void> {
  try {
    for (;;) {
      await deps.sleep(intervalMs, signal);
      tick();
    }
  } catch {
    // The gates have ended.
  }
}

type _ReportContext = Pick<
  _GateContext,
  "config" | "env" | "output" | "github" | "native" | "comment" | "reports"
>;

// Delivers every report of the finished run, then the CI's annotations and the console summary,
// all with the code as delivered; resolves with that code.
async function _report(deps: RunDeps, gates: _Gates, context: _ReportContext): Promise<number> {
  const { config, output, github } = context;
  const json = config.json ? renderJson : undefined;
  const report = await deliverReports(gates.report, context.reports.files, json, {
    openReportFile: context.reports.open,
    stdout: (text) => output.document(text),
    warn: (line) => output.stderr(`${line}\n`),
  });
  if (github) {
    for (const line of githubAnnotations(report)) output.command(line);
  }
  // The CI's own channels and the comment never change the verdict: each failure is one line.
  // Interrupted, the job may be killed seconds later (GitHub: SIGTERM 7.5 s after SIGINT, then
  // SIGKILL 2.5 s after that): the summary and the runs still going come first, and the CI's
  // channels and the comment get what is left of a short budget.
  const interrupted = deps.interrupt.aborted;
  if (interrupted) _summary(gates, report, output);
  const budgetMs = interrupted ? INTERRUPTED_COURTESY_BUDGET_MS : COURTESY_BUDGET_MS;
  const courtesy = (async () => {
    // The CI's own channels and the comment never change the verdicts: each failure is one line.
    await context.native?.finish(report, _nativeIo(deps, context));
    await context.comment?.finish(report);
  })();
  const ended = new AbortController();
  const inTime = await Promise.race([
    courtesy.then(() => true),
    deps.sleep(budgetMs, ended.signal).then(() => false, () => true),
  ]);
  ended.abort();
  if (!inTime) {
    output.stderr(
      `service-ci: the CI's report channels and the pull-request comment did not finish within ${
        budgetMs / 1000
      } s and were left; the verdict and exit code are not affected\n`,
    );
  }
  if (!interrupted) _summary(gates, report, output);
  return report.exitCode;
}

interface _FileReports {
  /** The report files of this run: `--junit`, and in GitHub Actions its two files. */
  readonly files: readonly FileReport[];
  /** Opens one of them: a file, or the program's own stream for `--junit -`. */
  readonly open: RunDeps["openReportFile"];
  /** Which stream the `--junit` report goes to instead of a file, if any. */
  readonly junitStream: "stdout" | "stderr" | undefined;
}

// `--junit` names that mean one of the program's own streams: written through it, not opened
// (Deno's permission set covers files, not devices).
const _STREAMS: Readonly<Record<string, "stdout" | "stderr">> = {
  "-": "stdout",
  "/dev/stdout": "stdout",
  "/dev/fd/1": "stdout",
  "/dev/stderr": "stderr",
  "/dev/fd/2": "stderr",
};

// The report files of this run, each path checked before anything is sent (docs/reports.md).
async function _fileReports(
  deps: RunDeps,
  context: Pick<_GateContext, "config" | "env" | "github" | "output">,
): Promise<_FileReports> {
  const { config, env, github, output } = context;
  const files: (FileReport & { readonly source: string })[] = [];
  const junitStream = config.junitPath === undefined ? undefined : _STREAMS[config.junitPath];
  if (junitStream === "stdout" && config.json) {
    throw new UsageError(
      `--junit ${config.junitPath} and --json cannot both be written to stdout: give --junit a file path`,
    );
  }
  if (config.junitPath !== undefined) {
    const { renderJunit } = await import("./report/junit.ts");
    files.push({
      what: "the --junit report",
      source: "--junit",
      path: config.junitPath,
      append: false,
      render: (report) => output.mask(renderJunit(report)),
    });
  }
  if (github && env.GITHUB_OUTPUT) {
    const delimiter = `ghadelimiter_${deps.uuid()}`;
    files.push({
      what: "GITHUB_OUTPUT",
      source: "GITHUB_OUTPUT",
      path: env.GITHUB_OUTPUT,
      append: true,
      render: (report) => output.mask(githubOutputs(report, delimiter)),
    });
  }
  if (github && env.GITHUB_STEP_SUMMARY) {
    files.push({
      what: "GITHUB_STEP_SUMMARY",
      source: "GITHUB_STEP_SUMMARY",
      path: env.GITHUB_STEP_SUMMARY,
      append: true,
      render: (report) => output.mask(githubSummary(report)),
    });
  }
  for (const file of files) {
    if (file.source === "--junit" && junitStream !== undefined) continue;
    const problem = await deps.checkReportPath(file.path);
    if (problem !== null) {
      throw new UsageError(
        `${file.source} ${JSON.stringify(file.path)} ${problem}: give ${
          file.source === "--junit" ? "it" : "the step"
        } a writable file path (nothing was sent)`,
      );
    }
  }
  const open: RunDeps["openReportFile"] = (path, append) => {
    const stream = path === config.junitPath ? junitStream : undefined;
    if (stream === undefined) return deps.openReportFile(path, append);
    return Promise.resolve(_streamReport(output, stream));
  };
  return { files, open, junitStream };
}

// A report written to one of the program's own streams.
function _streamReport(output: Output, stream: "stdout" | "stderr"): ReportFile {
  return {
    write: (text) => {
      if (stream === "stderr") output.stderr(text);
      else if (!output.stdout(text)) return Promise.reject(new Error("stdout is closed"));
      return Promise.resolve();
    },
    rewind: () => Promise.reject(new Error(`${stream} cannot be rewritten`)),
    close: () => {},
  };
}

/** How long the CI's channels and the comment may take once the verdicts are in. */
export const COURTESY_BUDGET_MS = 60_000;
/** The same, after an interrupt: a CI that cancels a job kills it seconds later. */
export const INTERRUPTED_COURTESY_BUDGET_MS = 3_000;

// The console summary, and each run the interrupt left going on the service.
function _summary(gates: _Gates, report: RunReport, output: Output): void {
  gates.reporter.finish(report);
  for (const agent of report.agents) {
    if (agent.outcome === "interrupted" && agent.runId !== null) {
      output.stderr(
        `run ${agent.runId} of agent ${agent.agentId} is still going on the service${
          agent.url === null ? "" : `: ${agent.url}`
        }\n`,
      );
    }
  }
}

// In GitHub Actions a usage error still gets an annotation and definite step outputs. The
// annotation goes to stderr: with --json, stdout must stay one JSON document.
async function _reportUsageErrorToGithub(
  deps: RunDeps,
  message: string,
  output: Output,
): Promise<void> {
  const env = Object.fromEntries(ENV_VARIABLES.map((name) => [name, deps.env(name)]));
  if (detectProvider(env) !== "github_actions") return;
  const { annotation, outputs } = githubUsageError(message, `ghadelimiter_${deps.uuid()}`);
  output.command(annotation, "stderr");
  const path = deps.env("GITHUB_OUTPUT");
  if (!path) return;
  try {
    await writeReportFile(deps.openReportFile, path, output.mask(outputs), true);
  } catch (error) {
    output.stderr(`${cannotWrite("GITHUB_OUTPUT", path, error)}\n`);
  }
}

function _nativeIo(deps: RunDeps, context: _ReportContext): NativeIo {
  const { output, env } = context;
  const bound = nativeTimeBound(deps.clock);
  return {
    command: (line) => output.command(line),
    warn: (line) => output.stderr(`${line}\n`),
    writeTextFile: (path, text, append) =>
      writeReportFile(deps.openReportFile, path, output.mask(text), append),
    runCommand: (program, args, stdin) =>
      deps.runCommand(program, args, {
        stdin: stdin === undefined ? undefined : output.mask(stdin),
        timeoutMs: bound(),
      }),
    makeFetch: (proxy) => deps.makeProxyFetch(proxy, bound),
    env: (name) => env[name],
  };
}
