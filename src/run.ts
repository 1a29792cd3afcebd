/**
 * One invocation, as a one-way pipeline with every effect passed in: arguments and environment
 * → config → metadata → client → the outputs → one gate per agent → outcome and exit code →
 * the outputs end. The exit code is decided before any report is rendered, and every report
 * shows the code the process exits with. No CI is named here: the outputs (outputs.ts) hold
 * each CI's writer behind one interface (run_output.ts); docs/architecture.md draws the flow.
 */

import { detectCiBuild, detectProvider } from "./ci_metadata.ts";
import { ServiceClient } from "./client.ts";
import { metadataOverrides, parseCommandLine } from "./config.ts";
import { FileRefused, firstLine, UsageError } from "./errors.ts";
import { DEFAULT_BASE_URL } from "./default_base_url.ts";
import { ENV_VARIABLES } from "./env_variables.ts";
import { ExitCode } from "./exit_code.ts";
import { runGates } from "./gates.ts";
import { loadConfig, makeTrustingFetch } from "./load_config.ts";
import { inActionTerms, OPTIONS, secretValues } from "./options.ts";
import { Output } from "./output.ts";
import { chooseOutputs, finishOutputs, reportUsageError } from "./outputs.ts";
import type { ReportFile } from "./report/deliver.ts";
import type { CommandOptions, CommandResult } from "./report/native_io.ts";
import { userAgent, VERSION } from "./version.ts";

export type { CommandOptions, CommandResult, ReportFile };

/** The effects of one invocation; `main.ts` passes the real ones, `tests/run_test.ts` fakes. */
export interface RunDeps {
  /** The command-line arguments, without the program's name. */
  readonly args: readonly string[];
  /** Reads one environment variable. */
  readonly env: (name: string) => string | undefined;
  /** Whether Deno's permission list refused reading the variable `env` said was unset. */
  readonly envRefused?: (name: string) => boolean;
  /**
   * Reads a regular text file; rejects as `Deno.readTextFile` does, and with `FileRefused` for a
   * path that is not a regular file or is too large to be one the program reads.
   */
  readonly readTextFile: (path: string) => Promise<string>;
  /**
   * What keeps a report from being written at a path, or `null` (checked before anything is
   * sent, without writing to it); `append` for a file the runner owns.
   */
  readonly checkReportPath: (path: string, append: boolean) => Promise<string | null>;
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
  // Every secret the environment holds is masked before anything can be said, usage errors
  // included; those of a .env file as soon as it is read (loadConfig).
  for (const secret of secretValues(deps.env)) output.addSecret(secret);
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
    const { config, env, caCerts } = await loadConfig(invocation.flags, ENV_VARIABLES, {
      ...deps,
      addSecret: (secret) => output.addSecret(secret),
    });
    // The one answer to "which CI is this" (ci_metadata.ts): sent to the service, and choosing
    // the CI's writer among the outputs.
    const { metadata, context } = await detectCiBuild(env, {
      overrides: metadataOverrides(config),
      readTextFile: (path) =>
        deps.readTextFile(path).catch((error) => {
          if (error instanceof FileRefused) throw error;
          return undefined;
        }),
      git: deps.git,
    });
    const client = new ServiceClient({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      userAgent: userAgent(),
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
      baseUrlSource: config.sources.baseUrl,
      fetch: makeTrustingFetch(deps.makeFetch, caCerts, config.caCert),
      now: deps.now,
    });
    if (config.dryRun) {
      const { dryRun } = await import("./dry_run.ts");
      return dryRun(client, config, { metadata, context, env }, output);
    }
    // Every report's path is checked before anything is sent: a bad one is a usage error.
    const outputs = await chooseOutputs(deps, { config, env, metadata, context, output });
    const report = await runGates(deps, { config, metadata, context, client, output, outputs });
    return await finishOutputs(deps, outputs, report, output);
  } catch (error) {
    if (error instanceof UsageError) {
      const message = _fromAction(deps) ? inActionTerms(error.message) : error.message;
      output.stderr(`service-ci: ${message}\n`);
      const env = Object.fromEntries(ENV_VARIABLES.map((name) => [name, deps.env(name)]));
      await reportUsageError(deps, message, detectProvider(env), output);
      return ExitCode.Usage;
    }
    // No stack trace: one line, and a code that never reads as a verdict.
    output.stderr(
      `service-ci: internal error, the gate could not be checked: ${firstLine(error)}\n`,
    );
    return ExitCode.Unchecked;
  }
}

// Whether the GitHub action runs the program (scripts/action.sh says so).
function _fromAction(deps: RunDeps): boolean {
  try {
    return OPTIONS.action.parse(deps.env(OPTIONS.action.variable) ?? "", "") === true;
  } catch {
    return false;
  }
}
