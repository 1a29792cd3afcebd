/** What every forge's commit statuses share: the per-agent name and the writer's interface. */

import type { RequestOptions } from "../http.ts";
import type { AgentOutcome, RunReport } from "../../result/outcome.ts";

/** Stable from run to run, so branch protection can require it. */
export function statusName(agentId: string): string {
  return `service-ci / ${agentId.toLowerCase()}`;
}

export interface StatusStart {
  readonly agentId: string;
  readonly runId: string | null;
  readonly link: string | null;
}

export interface StatusEnd {
  readonly agent: AgentOutcome;
  readonly report: RunReport;
  readonly link: string | null;
}

/** Each method throws on failure (an `HttpFailure`); the output turns that into one line. */
export interface StatusForge {
  readonly forge: string;
  finishBy(endsAt: number): void;
  start(start: StatusStart, options: RequestOptions): Promise<void>;
  /** Creates the status if `start` never did. */
  end(end: StatusEnd, options: RequestOptions): Promise<void>;
  /** How to enable the statuses after `error`, one sentence (may be empty). */
  advice(error: unknown): string;
  /** Whether `error` would only repeat on another attempt (a refused token, a missing scope). */
  final(error: unknown): boolean;
}
