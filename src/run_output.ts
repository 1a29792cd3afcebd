/**
 * The one interface every output of a run implements: the console, `--json`, `--junit`, each
 * CI's own channels (GitHub Actions as one CI among six) and the pull-request comment. The run
 * drives every output through the same lifecycle, and each output says what it is, which decides
 * what its failure means (docs/architecture.md).
 *
 * ```text
 * start(plan) → event(agent, event)* → agentDone(outcome)* → end(report) → deliver → finish(report)
 * ```
 */

import type { CiContext, CiMetadata } from "./ci_metadata.ts";
import type { AgentOutcome, RunReport } from "./outcome.ts";
import type { GateEvent } from "./poll.ts";
import type { FileReport } from "./report/deliver.ts";

/**
 * What an output is:
 *
 * - `report`: a report the user asked for (or that the CI reads from a file the step names):
 *   its files are checked before anything is sent, it is written with the exit code, and a
 *   failure to write it gives exit 3, every report then being rewritten with that code;
 * - `courtesy`: a channel that shows the run (a CI's annotations, the pull-request comment):
 *   never fatal, its failure one line, its finish bounded in time;
 * - `console`: the run's own account on stderr, whose summary is written last (first after an
 *   interrupt, when the job may be killed seconds later).
 */
export type OutputKind = "report" | "courtesy" | "console";

/** What every output learns when the run starts, before any request. */
export interface RunPlan {
  /** The agents, in the order of `--agent`. */
  readonly agents: readonly string[];
  /** The CI metadata sent with every trigger. */
  readonly metadata: CiMetadata;
  /** What kind of build this is (a merge queue, a merge train), besides what is sent. */
  readonly context: CiContext;
  /** The progress section's title, e.g. `service-ci: waiting for 2 agents`. */
  readonly title: string;
  /** The value of the run's clock at which waiting stops (`--timeout-minutes`). */
  readonly deadline: number;
  /** Aborts once every gate has ended (ends an output's own timers). */
  readonly ended: AbortSignal;
}

/**
 * One output of a run. Every hook is optional; the run calls them in the order of the module's
 * diagram, each output in the order of the list, and never lets one output's hook throw into
 * another's.
 *
 * @example
 * ```ts
 * const lines: string[] = [];
 * const counter: RunOutput = {
 *   kind: "courtesy",
 *   name: "the agent counter",
 *   agentDone: (outcome) => lines.push(`${outcome.agentId}: ${outcome.outcome}`),
 * };
 * ```
 */
export interface RunOutput {
  /** What it is: decides what its failure means. */
  readonly kind: OutputKind;
  /** What it is, for messages: `"the --junit report"`, `"the pull-request comment"`. */
  readonly name: string;
  /** A `report`'s files, checked before anything is sent and written with the exit code. */
  readonly files?: readonly FileReport[];
  /** A `report` written to stdout as one document (`--json`). */
  readonly document?: (report: RunReport) => string;
  /** The plan is known; nothing has been sent yet. */
  start?(plan: RunPlan): void;
  /** One agent's gate reported an event (triggered, attached, a status, a fault). */
  event?(agentId: string, event: GateEvent): void;
  /** One agent's gate has ended. */
  agentDone?(outcome: AgentOutcome): void;
  /** Every gate has ended: the exit code is decided, the reports are not yet written. */
  end?(report: RunReport): void;
  /**
   * The reports are written: `report` has the code the process exits with. A `courtesy`
   * output's finish never rejects on purpose; if it does, the run says so in one line.
   */
  finish?(report: RunReport): void | Promise<void>;
}

/** How long the courtesy outputs may take once the verdicts are in. */
export const COURTESY_BUDGET_MS = 60_000;
/** The same, after an interrupt: a CI that cancels a job kills it seconds later. */
export const INTERRUPTED_COURTESY_BUDGET_MS = 3_000;
