/**
 * The interface every output of a run implements, and the order the run calls it in:
 *
 * ```text
 * start(plan) → event(agent, event)* → agentDone(outcome)* → end(report) → deliver
 *   → finish(report, window) → settle()
 * ```
 */

import type { CiContext, CiMetadata } from "../ci/detect.ts";
import type { Config } from "../config/load.ts";
import type { AgentOutcome, RunReport } from "../report/outcome.ts";
import type { GateEvent } from "../service/poll.ts";
import type { Output } from "./streams.ts";

export interface RunPlan {
  readonly agents: readonly string[];
  readonly metadata: CiMetadata;
  readonly context: CiContext;
  readonly title: string;
  readonly deadline: number;
  readonly ended: AbortSignal;
}

export interface FileReport {
  /** For messages: `"the --junit report"`, `"GITHUB_OUTPUT"`. */
  readonly what: string;
  /** For a usage error: `"--junit"`, `"GITHUB_OUTPUT"`. */
  readonly source: string;
  /** Who can fix a path that cannot be written: `"it"` (the flag) or `"the step"`. */
  readonly fixedBy: string;
  readonly path: string;
  /** `--junit -`. */
  readonly stream?: "stdout" | "stderr";
  readonly append: boolean;
  readonly render: (report: RunReport) => string;
}

export type FinishWindow = { readonly endsAt: number; readonly signal: AbortSignal };

export interface RunOutput {
  /** A `report` that cannot be written gives exit 3; a `courtesy` is never fatal, bounded in time. */
  readonly kind: "report" | "courtesy" | "console";
  readonly name: string;
  readonly files?: readonly FileReport[];
  readonly document?: (report: RunReport) => string;
  /** The statuses finish first, in a time of their own, so a slow comment never delays them. */
  readonly decidesMerges?: boolean;
  start?(plan: RunPlan): void;
  event?(agentId: string, event: GateEvent): void;
  agentDone?(outcome: AgentOutcome): void;
  end?(report: RunReport): void;
  finish?(report: RunReport, window?: FinishWindow): void | Promise<void>;
  settle?(): readonly string[];
}

export interface OutputsContext {
  readonly config: Config;
  readonly metadata: CiMetadata;
  readonly context: CiContext;
  readonly output: Output;
}
