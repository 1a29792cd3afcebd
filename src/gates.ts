/**
 * Every agent's gate, run at once against one deadline on the injected clock, each event handed
 * to every output; resolves with the finished report, its exit code decided before any report
 * is rendered.
 */

import type { CiContext, CiMetadata } from "./ci_metadata.ts";
import type { ServiceClient } from "./client.ts";
import type { Config } from "./config.ts";
import { type AgentOutcome, decideExitCode, type RunReport, toAgentOutcome } from "./outcome.ts";
import type { Output } from "./output.ts";
import { eachOutput } from "./outputs.ts";
import { DeadlineReached, type GateDeps, runGate } from "./poll.ts";
import type { RunDeps } from "./run.ts";
import type { RunOutput, RunPlan } from "./run_output.ts";
import { VERSION } from "./version.ts";

/** What the gates need of the run. */
export interface GatesContext {
  /** The run's configuration: agents, timeout, --run-id, --no-wait, --warn-only. */
  readonly config: Config;
  /** The CI metadata sent with every trigger. */
  readonly metadata: CiMetadata;
  /** What kind of build this is (a merge queue, a merge train), besides what is sent. */
  readonly context: CiContext;
  /** The service's client. */
  readonly client: ServiceClient;
  /** The program's streams and the secrets they mask. */
  readonly output: Output;
  /** The outputs, in the order they start. */
  readonly outputs: readonly RunOutput[];
}

/**
 * Runs every agent's gate and builds the finished report.
 *
 * @example
 * ```ts
 * import type { RunDeps } from "./run.ts";
 * declare const deps: RunDeps;
 * declare const context: GatesContext;
 * const report = await runGates(deps, context);
 * report.exitCode; // decided; no report is written yet
 * ```
 */
export async function runGates(deps: RunDeps, context: GatesContext): Promise<RunReport> {
  const { config, metadata, output, outputs } = context;
  const started = deps.clock();
  const startedAt = new Date(deps.now()).toISOString();
  const deadline = started + config.timeoutMinutes * 60_000;
  // Ends the deadline's timer and the outputs' own timers once every gate has ended.
  const done = new AbortController();
  const deadlineReached = new AbortController();
  deps.sleep(config.timeoutMinutes * 60_000, done.signal).then(
    () => deadlineReached.abort(new DeadlineReached()),
    () => {},
  );
  const signal = AbortSignal.any([deadlineReached.signal, deps.interrupt]);
  const agents = config.agents.length === 1 ? "1 agent" : `${config.agents.length} agents`;
  const plan: RunPlan = {
    agents: config.agents,
    metadata,
    context: context.context,
    title: `service-ci: waiting for ${agents}`,
    deadline,
    ended: done.signal,
  };
  eachOutput(outputs, output, (each) => each.start?.(plan));
  const gateDeps: GateDeps = {
    client: context.client,
    clock: deps.clock,
    sleep: deps.sleep,
    random: deps.random,
    newIdempotencyKey: deps.uuid,
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
        maxPollIntervalMs: config.maxPollIntervalSeconds * 1000,
        onEvent: (event) => eachOutput(outputs, output, (each) => each.event?.(agentId, event)),
      });
      // Service text is masked of every secret here, before any output renders it: escaping
      // (for Markdown, XML) would otherwise hide a secret from the mask the streams apply last.
      const outcome = toAgentOutcome(agentId, result, {
        durationMs: deps.clock() - started,
        timeoutMs: config.timeoutMinutes * 60_000,
        runIdGiven: config.runId !== undefined,
        secrets: output.secrets,
      });
      eachOutput(outputs, output, (each) => each.agentDone?.(outcome));
      return outcome;
    }));
  } finally {
    done.abort();
  }
  const report: RunReport = {
    version: VERSION,
    exitCode: decideExitCode(outcomes, { warnOnly: config.warnOnly }),
    startedAt,
    durationMs: Math.round(deps.clock() - started),
    warnOnly: config.warnOnly,
    ciMetadata: metadata,
    agents: outcomes,
  };
  eachOutput(outputs, output, (each) => each.end?.(report));
  return report;
}
