/** The one place that chooses a run's outputs and ends them once every gate has. */

import { describeSources } from "../config/load.ts";
import { UsageError } from "../config/errors.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import type { RunReport } from "../report/outcome.ts";
import { formatBound } from "../text/duration.ts";
import type { Output } from "./streams.ts";
import { ConsoleReporter } from "./console.ts";
import { deliverReports } from "./deliver.ts";
import { renderJson } from "./json.ts";
import { renderJunit } from "./junit.ts";
import { nativeWriter } from "./ci/native.ts";
import { type NativeIo } from "./ci/native_io.ts";
import type { RunEffects } from "../effects.ts";
import type { OutputsContext, RunOutput } from "./output.ts";
import type { ForgeClients } from "../forge/clients.ts";
import type { ForgeConfig } from "../forge/forge.ts";
import { detectProvider, ENV_VARIABLES } from "../ci/detect.ts";
import { userAgent, VERSION } from "../config/version.ts";
import { andList, firstLine, quoteValue } from "../text/quote.ts";
import { nativeTimeBound } from "../platform/bounds.ts";

/** Checks every report's path before anything is sent: one not writable is a usage error. */
export async function chooseOutputs(
  effects: Pick<RunEffects, "clock" | "http" | "files" | "programs" | "console" | "uuid" | "cwd">,
  context: OutputsContext,
): Promise<RunOutput[]> {
  const { config, output } = context;
  const [junit, json] = [optionName(OPTIONS.junit), optionName(OPTIONS.json)];
  const junitStream = config.junit === undefined ? undefined : _STREAMS[config.junit];
  if (junitStream === "stdout" && config.json) {
    throw new UsageError(
      `${junit} ${config.junit} and ${json} cannot both be written to stdout: give ${junit} a file path`,
    );
  }
  // Whatever holds stdout as one document pushes the CI's command lines to stderr.
  const stdoutHeldBy = config.json ? json : junitStream === "stdout" ? `the ${junit} report` : null;
  if (stdoutHeldBy !== null) output.commandsToStderr();
  const outputs: RunOutput[] = [];
  const writer = await nativeWriter(context.metadata.provider, effects);
  // One client per forge for every writer, made on first use with the run's clock and fetch; an
  // interrupt must not stop the last writes, so their waits end only by their own signals.
  let clients: ForgeClients | undefined;
  const forgeClients = async () =>
    clients ??= new (await import("../forge/clients.ts")).ForgeClients({
      userAgent: userAgent(),
      clock: effects.clock,
      http: effects.http,
      requestTimeoutMs: config.requestTimeoutSeconds * 1000,
    });
  // A CI's writer as outputs: the files its runner names are reports; its progress section,
  // annotations and artifacts a courtesy, which --no-ci-native turns off.
  const files = writer?.reportFiles?.(config.ci) ?? [];
  if (files.length > 0) outputs.push({ kind: "report", name: `the ${writer!.ci} reports`, files });
  if (writer?.stdoutOnly !== undefined && config.ciNative && stdoutHeldBy !== null) {
    output.stderr(
      `service-ci: ${writer.ci} reads ${writer.stdoutOnly.what} only from stdout, which ${stdoutHeldBy} holds: ${writer.stdoutOnly.lost}\n`,
    );
  } else if (writer !== undefined && config.ciNative) {
    const commands = (lines: readonly string[]) => lines.forEach((line) => output.command(line));
    outputs.push({
      kind: "courtesy",
      name: `the ${writer.ci} channels`,
      start: (plan) => commands(writer.progressStart(plan.title)),
      end: (report) => commands(writer.progressEnd(report)),
      finish: (report, window) => {
        if (window !== undefined) clients?.finishBy(window.endsAt);
        return writer.finish(report, _nativeIo(effects, output, config, forgeClients));
      },
    });
  }
  if (config.prComment) {
    // Loaded only when asked for: the comment's modules (and node:crypto) stay off the hot path.
    const [{ pullRequestComment, commentOutput }, { forgeTarget }] = await Promise.all([
      import("./pr_comment.ts"),
      import("../forge/target.ts"),
    ]);
    const target = forgeTarget(config, context, "comment");
    if ("skip" in target) output.stderr(`${target.skip}\n`);
    else {
      const comment = pullRequestComment(target, (await forgeClients()).http(target), {
        agents: config.agents,
        key: config.prCommentKey,
        warn: (line) => output.stderr(`${line}\n`),
      });
      outputs.push(commentOutput(comment, output.secrets));
    }
  }
  if (config.commitStatus) {
    const { commitStatusOutputs } = await import("./statuses.ts");
    outputs.push(...commitStatusOutputs(context, await forgeClients()));
  }
  outputs.push({
    kind: "courtesy",
    name: "the forge clients",
    settle: () => clients?.settle() ?? [],
  });
  if (config.junit !== undefined) {
    outputs.push({
      kind: "report",
      name: `the ${junit} report`,
      files: [{
        what: `the ${junit} report`,
        source: junit,
        fixedBy: "it",
        path: config.junit,
        append: false,
        ...(junitStream === undefined ? {} : { stream: junitStream }),
        render: renderJunit,
      }],
    });
  }
  if (config.json) {
    outputs.push({ kind: "report", name: `the ${json} document`, document: renderJson });
  }
  outputs.push(
    new ConsoleReporter({
      output,
      clock: effects.clock,
      tty: effects.console.stderrIsTerminal,
      color: effects.console.stderrIsTerminal && !config.noColor,
      header: `service-ci ${VERSION} → ${config.baseUrl.origin}${
        config.baseUrl.pathname.replace(/\/+$/, "")
      } (${config.agents.length === 1 ? "1 agent" : `${config.agents.length} agents`}, timeout ${
        formatBound(config.timeoutMinutes * 60_000)
      }${config.noWait ? `, ${optionName(OPTIONS.noWait)}` : ""}; ${describeSources(config)})`,
    }),
  );
  for (const file of outputs.flatMap((each) => each.files ?? [])) {
    if (file.stream !== undefined) continue;
    const problem = await effects.files.checkReportPath(file.path, file.append);
    if (problem === null) continue;
    const fix = problem.includes("create it first") ? " or" : ":";
    const path = quoteValue(file.path);
    throw new UsageError(
      `${file.source} ${path} ${problem}${fix} give ${file.fixedBy} a writable file path (nothing was sent)`,
    );
  }
  return outputs;
}

/**
 * Resolves with the exit code, which a report that cannot be written changes. The console's
 * summary comes last, but first after an interrupt, when the job may be killed seconds later.
 */
export async function finishOutputs(
  effects: Pick<RunEffects, "clock" | "files" | "interrupt">,
  outputs: readonly RunOutput[],
  report: RunReport,
  output: Output,
): Promise<number> {
  const reports = outputs.filter((each) => each.kind === "report");
  const delivered = await deliverReports(report, reports, output, effects.files);
  const consoles = outputs.filter((each) => each.kind === "console");
  const summary = () => eachOutput(consoles, output, (each) => each.finish?.(delivered));
  const interrupted = effects.interrupt.aborted;
  if (interrupted) summary();
  const finishWithin = async (outputs: readonly RunOutput[], budgetMs: number) => {
    if (outputs.length === 0) return;
    const ended = new AbortController();
    const window = { endsAt: effects.clock.now() + budgetMs, signal: ended.signal };
    const pending = new Set(outputs);
    const finished = Promise.all(outputs.map(async (each) => {
      try {
        await each.finish!(delivered, window);
      } catch (error) {
        output.stderr(`service-ci: ${each.name} could not be written: ${firstLine(error)}\n`);
      }
      pending.delete(each);
    }));
    const timer = new AbortController();
    const inTime = await Promise.race([
      finished.then(() => true),
      effects.clock.sleep(budgetMs, timer.signal).then(() => false, () => true),
    ]);
    timer.abort();
    if (inTime) return;
    ended.abort(new Error(`the ${formatBound(budgetMs)} to finish are over`));
    const names = [...pending].map((each) => each.name);
    output.stderr(
      `service-ci: ${andList(names)} did not finish within ${formatBound(budgetMs)} and ${
        names.length === 1 ? "was" : "were"
      } left; the verdict and exit code are not affected\n`,
    );
  };
  const courtesy = outputs.filter((each) => each.kind === "courtesy" && each.finish);
  // The statuses decide merges: first, in a time of their own (45 s, 60 s for the rest). After an
  // interrupt, GitHub sends SIGTERM 7.5 s after SIGINT and SIGKILL 2.5 s later: 5 s + 2 s fit.
  await finishWithin(courtesy.filter((each) => each.decidesMerges), interrupted ? 5_000 : 45_000);
  await finishWithin(courtesy.filter((each) => !each.decidesMerges), interrupted ? 2_000 : 60_000);
  eachOutput(outputs, output, (each) => {
    for (const line of each.settle?.() ?? []) output.stderr(`${line}\n`);
  });
  if (!interrupted) summary();
  return delivered.exitCode;
}

/** An output whose hook throws is one line on stderr and does not keep the others from theirs. */
export function eachOutput(
  outputs: readonly RunOutput[],
  output: Output,
  hook: (each: RunOutput) => unknown,
): void {
  for (const each of outputs) {
    try {
      hook(each);
    } catch (error) {
      output.stderr(`service-ci: ${each.name}: ${firstLine(error)}\n`);
    }
  }
}

/** The config could not be read, so the CI is detected from the environment alone. */
export async function reportUsageError(
  effects: Pick<RunEffects, "clock" | "env" | "files" | "programs" | "uuid" | "cwd">,
  message: string,
  output: Output,
): Promise<void> {
  const env = Object.fromEntries(ENV_VARIABLES.map((name) => [name, effects.env.get(name)]));
  const writer = await nativeWriter(detectProvider(env), effects);
  const refuse = () => Promise.reject(new Error("nothing is sent on a usage error"));
  await writer?.usageError?.(message, _nativeIo(effects, output, { ci: env }, refuse));
}

// `--junit` names of our streams, written through, not opened: Deno's permissions cover files only.
const _STREAMS: Readonly<Record<string, "stdout" | "stderr">> = {
  "-": "stdout",
  "/dev/stdout": "stdout",
  "/dev/fd/1": "stdout",
  "/dev/stderr": "stderr",
  "/dev/fd/2": "stderr",
};

// Its programs and requests share one time bound per finish.
function _nativeIo(
  effects: Pick<RunEffects, "clock" | "files" | "programs">,
  output: Output,
  config: ForgeConfig,
  forgeClients: () => Promise<ForgeClients>,
): NativeIo {
  const bound = nativeTimeBound(effects.clock.monotonic);
  return {
    command: (line, stream) => output.command(line, stream),
    warn: (line) => output.stderr(`${line}\n`),
    // For the reports whose failure is one line and does not change the code.
    writeTextFile: async (path, text, append) => {
      const file = await effects.files.openReportFile(path, append);
      try {
        await file.write(output.mask(text));
      } catch (error) {
        await file.discard();
        throw error;
      }
      await file.close();
    },
    runCommand: (program, args, stdin) =>
      effects.programs.runCommand(program, args, {
        stdin: stdin === undefined ? undefined : output.mask(stdin),
        timeoutMs: bound(),
      }),
    forgeClients,
    requestBound: bound,
    config,
  };
}
