/**
 * One invocation as a one-way pipeline, every effect passed in. The exit code is decided before any
 * report is rendered, so every report shows it. No CI is named: writers sit behind one interface.
 */

import { parseCommandLine } from "./config/command_line.ts";
import { loadConfig, makeTrustingFetch, secretValues } from "./config/load.ts";
import { UsageError } from "./config/errors.ts";
import { DEFAULT_BASE_URL } from "./config/default_base_url.ts";
import type { RunEffects } from "./effects.ts";
import { ExitCode } from "./config/exit_codes.ts";
import { CONFIG_ENV_VARIABLES, inActionTerms, OPTIONS } from "./config/options.ts";
import { exchangeLog, Output } from "./outputs/streams.ts";
import { userAgent, VERSION } from "./config/version.ts";
import { firstLine } from "./text/quote.ts";
import { readBounded } from "./platform/bounds.ts";

/** Never throws: every failure is a line on stderr and a code. */
export async function run(effects: RunEffects): Promise<number> {
  const output = new Output(effects.console);
  // Only the variables the program declares are asked for: the option table's until the command
  // line is known, then every one of ENV_VARIABLES (loaded with the pipeline).
  const ask = (names: readonly string[]) => (name: string) =>
    names.includes(name) ? effects.env.get(name) : undefined;
  // Every secret the environment holds is masked before anything can be said, usage errors
  // included; those of a .env file as soon as it is read (loadConfig).
  for (const secret of secretValues(ask(CONFIG_ENV_VARIABLES))) output.addSecret(secret);
  try {
    const invocation = parseCommandLine(effects.args);
    if (invocation.kind !== "run") {
      const text = invocation.kind === "help"
        ? (await import("./config/help.ts")).helpText(DEFAULT_BASE_URL)
        : `service-ci ${VERSION}\nbuilt-in service address: ${DEFAULT_BASE_URL ?? "none"}\n`;
      return output.stdout(text) ? ExitCode.Passed : ExitCode.Unchecked;
    }
    // The pipeline is loaded only now: --help and --version need none of it.
    const [
      { CI_ENV_VARIABLES, detectCiBuild, ENV_VARIABLES },
      { ServiceClient },
      { chooseOutputs, finishOutputs },
      { runGates },
      { boundedGit, configGit },
    ] = await Promise.all([
      import("./ci/detect.ts"),
      import("./service/client.ts"),
      import("./outputs/mod.ts"),
      import("./gates.ts"),
      import("./platform/git.ts"),
    ]);
    const { config, caCerts, warning } = await loadConfig(invocation.flags, ENV_VARIABLES, {
      env: ask(ENV_VARIABLES),
      ...(effects.env.refused === undefined ? {} : { envRefused: effects.env.refused }),
      readTextFile: effects.files.readTextFile,
      git: configGit(effects),
      cwd: effects.cwd,
      addSecret: (secret) => output.addSecret(secret),
      ciVariables: CI_ENV_VARIABLES,
    });
    if (warning !== undefined) output.stderr(`service-ci: warning: ${warning}\n`);
    // The deadline starts here: detection (git among it) counts toward --timeout-minutes.
    const started = effects.clock.monotonic();
    const { metadata, context } = await detectCiBuild(config.ci, {
      overrides: config,
      readTextFile: (path) => readBounded(effects, path),
      git: boundedGit(effects, config.timeoutMinutes * 60_000),
    });
    const log = exchangeLog(output, config.verbose, metadata.provider, config.ci, effects.clock);
    const client = new ServiceClient({
      baseUrl: config.baseUrl,
      apiKey: config.apiKey,
      userAgent: userAgent(),
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
      baseUrlSource: config.sources.baseUrl,
      fetch: makeTrustingFetch(
        (caCerts) => effects.http.makeFetch({ caCerts }),
        caCerts,
        config.caCert,
      ),
      clock: effects.clock,
      timeout: effects.http.timeout,
      log,
    });
    if (config.dryRun) {
      const { dryRun } = await import("./outputs/dry_run.ts");
      return dryRun(client, config, { metadata, context }, output);
    }
    const build = { config, metadata, context, output };
    const outputs = await chooseOutputs(
      { ...effects, http: { ...effects.http, log, secrets: output.secrets } },
      build,
    );
    const report = await runGates(effects, { ...build, client, outputs, started });
    return await finishOutputs(effects, outputs, report, output);
  } catch (error) {
    if (error instanceof UsageError) {
      const message = _fromAction(ask(CONFIG_ENV_VARIABLES))
        ? inActionTerms(error.message)
        : error.message;
      output.stderr(`service-ci: ${message}\n`);
      const { reportUsageError } = await import("./outputs/mod.ts");
      await reportUsageError(effects, message, output);
      return ExitCode.Usage;
    }
    // No stack trace: one line, and a code that never reads as a verdict.
    const why = firstLine(error);
    output.stderr(`service-ci: internal error, the gate could not be checked: ${why}\n`);
    return ExitCode.Unchecked;
  }
}

// Whether the GitHub action runs the program (scripts/action.sh says so).
function _fromAction(env: (name: string) => string | undefined): boolean {
  try {
    return OPTIONS.action.parse(env(OPTIONS.action.variable) ?? "", "") === true;
  } catch {
    return false;
  }
}
