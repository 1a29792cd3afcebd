/**
 * The one interface every output of a run implements: the console, `--json`, `--junit`, each
 * CI's own channels (GitHub Actions as one CI among six) and the pull-request comment. The run
 * drives every output through the same lifecycle, and each output says what it is, which decides
 * what its failure means (docs/architecture.md).
 *
 * ```text
 * start(plan) → event(agent, event)* → agentDone(outcome)* → end(report) → deliver
 *   → finish(report, window) (the outputs that decide merges first) → settle()
 * ```
 */

import type { CiContext, CiMetadata } from "../ci/detect.ts";
import type { Config } from "../config/resolve.ts";
import type { AgentOutcome, RunReport } from "../result/outcome.ts";
import type { GateEvent } from "../service/poll.ts";
import type { FileReport } from "./deliver.ts";
import type { Output } from "./streams.ts";

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

/** The time an output's finish has. */
export interface FinishWindow {
  /** When the time is up, in epoch milliseconds (the run's wall clock). */
  readonly endsAt: number;
  /** Aborts when the time is up: what is still in flight then is left. */
  readonly signal: AbortSignal;
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
  /**
   * A `courtesy` output that decides merges (the commit statuses): finished before every other
   * courtesy output, in a time of its own, so a slow comment never delays it.
   */
  readonly decidesMerges?: boolean;
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
  finish?(report: RunReport, window?: FinishWindow): void | Promise<void>;
  /** Every output has finished, or its time is up: the lines still to print, if any. */
  settle?(): readonly string[];
}

/** How long the outputs that decide merges (the commit statuses) may take to finish. */
export const MERGE_BUDGET_MS = 45_000;
/** How long the other courtesy outputs may take once those are done. */
export const COURTESY_BUDGET_MS = 60_000;
/**
 * {@linkcode MERGE_BUDGET_MS} after an interrupt: GitHub sends SIGTERM 7.5 s after SIGINT and
 * kills the job 2.5 s later, so the statuses get 5 s and the rest 2 s, inside that window.
 */
export const INTERRUPTED_MERGE_BUDGET_MS = 5_000;
/** {@linkcode COURTESY_BUDGET_MS} after an interrupt. */
export const INTERRUPTED_COURTESY_BUDGET_MS = 2_000;

/** What choosing the outputs needs to know of the run. */
export interface OutputsContext {
  /** The run's configuration: which reports, the comment, --no-ci-native. */
  readonly config: Config;
  /** The environment as the program sees it (flags, variables and `.env` merged). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The CI metadata: its provider chooses the CI's writer. */
  readonly metadata: CiMetadata;
  /** What kind of build this is (a merge queue, a merge train), besides what is sent. */
  readonly context: CiContext;
  /** The program's streams and the secrets they mask. */
  readonly output: Output;
}
