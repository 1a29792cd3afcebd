/**
 * Every agent's gate, run at once against one deadline on the injected clock, each event handed
 * to every output; resolves with the finished report, its exit code decided before any report
 * is rendered.
 */

import type { CiContext, CiMetadata } from "../ci/detect.ts";
import type { ServiceClient } from "../service/client.ts";
import type { Config } from "../config/resolve.ts";
import { type AgentOutcome, decideExitCode, type RunReport, toAgentOutcome } from "./outcome.ts";
import type { Output } from "../outputs/streams.ts";
import { eachOutput } from "../outputs/mod.ts";
import { DeadlineReached, type GateDeps, runGate } from "../service/poll.ts";
import type { RunEffects } from "../effects.ts";
import type { RunOutput, RunPlan } from "../outputs/output.ts";
import { VERSION } from "../config/version.ts";

/** The effects the gates use: the clock, the interrupt, jitter and idempotency keys. */
export type GatesEffects = Pick<RunEffects, "clock" | "interrupt" | "random" | "uuid">;

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
  /** When the run started (the clock's monotonic time): the deadline counts detection too. */
  readonly started: number;
}

/**
 * Runs every agent's gate and builds the finished report.
 */
export async function runGates(
  effects: GatesEffects,
  context: GatesContext,
): Promise<RunReport> {
  const { clock } = effects;
  const { config, metadata, output, outputs } = context;
  const { started } = context;
  const startedAt = new Date(clock.now() - (clock.monotonic() - started)).toISOString();
  const deadline = started + config.timeoutMinutes * 60_000;
  // Ends the deadline's timer and the outputs' own timers once every gate has ended.
  const done = new AbortController();
  const deadlineReached = new AbortController();
  clock.sleep(Math.max(0, deadline - clock.monotonic()), done.signal).then(
    () => deadlineReached.abort(new DeadlineReached()),
    () => {},
  );
  const signal = AbortSignal.any([deadlineReached.signal, effects.interrupt]);
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
    clock,
    random: effects.random,
    uuid: effects.uuid,
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
        durationMs: clock.monotonic() - started,
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
    durationMs: Math.round(clock.monotonic() - started),
    warnOnly: config.warnOnly,
    ciMetadata: metadata,
    agents: outcomes,
  };
  eachOutput(outputs, output, (each) => each.end?.(report));
  return report;
}
