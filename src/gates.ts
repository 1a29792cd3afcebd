/**
 * Every agent's gate, run at once against one deadline on the injected clock, each event handed to
 * every output; resolves with the report, its exit code decided before any report is rendered.
 */

import type { CiContext, CiMetadata } from "./ci/detect.ts";
import type { ServiceClient } from "./service/client.ts";
import type { Config } from "./config/load.ts";
import {
  type AgentOutcome,
  decideExitCode,
  type RunReport,
  toAgentOutcome,
} from "./report/outcome.ts";
import type { Output } from "./outputs/streams.ts";
import { eachOutput } from "./outputs/mod.ts";
import { DeadlineReached, runGate } from "./service/poll.ts";
import type { RunEffects } from "./effects.ts";
import type { RunOutput, RunPlan } from "./outputs/output.ts";
import { VERSION } from "./config/version.ts";

export async function runGates(
  effects: Pick<RunEffects, "clock" | "interrupt" | "random" | "uuid">,
  context: {
    readonly config: Config;
    readonly metadata: CiMetadata;
    readonly context: CiContext;
    readonly client: ServiceClient;
    readonly output: Output;
    /** In the order they start. */
    readonly outputs: readonly RunOutput[];
    /** On the clock's monotonic time: the deadline counts detection too. */
    readonly started: number;
  },
): Promise<RunReport> {
  const { clock } = effects;
  const { config, metadata, output, outputs, started } = context;
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
  let outcomes: AgentOutcome[];
  try {
    outcomes = await Promise.all(config.agents.map(async (agentId) => {
      const result = await runGate({ ...effects, client: context.client }, {
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
    exitCode: decideExitCode(outcomes, { warnOnly: config.warnOnly, reportUndelivered: false }),
    startedAt,
    durationMs: Math.round(clock.monotonic() - started),
    warnOnly: config.warnOnly,
    ciMetadata: metadata,
    agents: outcomes,
  };
  eachOutput(outputs, output, (each) => each.end?.(report));
  return report;
}
