/**
 * What every forge's commit status shares: the per-agent name and the interface a forge's writer
 * implements for the output (`output.ts`) that drives it.
 */

import type { RequestOptions } from "../http.ts";
import type { AgentOutcome, RunReport } from "../../result/outcome.ts";

/**
 * The name of an agent's status: stable from run to run (the agent's UUID, lower-cased), so
 * branch protection can require it.
 *
 * @example
 * ```ts
 * statusName("0B0C4A5E-8F4E-4A8E-9A53-3F1C2B9D7E10");
 * // "service-ci / 0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10"
 * ```
 */
export function statusName(agentId: string): string {
  return `service-ci / ${agentId.toLowerCase()}`;
}

/** Where an agent's status links to, and what it says while the gate runs. */
export interface StatusStart {
  /** The agent's UUID. */
  readonly agentId: string;
  /** The run's id (masked), when the trigger gave one. */
  readonly runId: string | null;
  /** The run's dashboard link, else the CI job's, when either is an http(s) URL. */
  readonly link: string | null;
}

/** An agent's status at the end of the run. */
export interface StatusEnd {
  /** The agent's outcome in the delivered report. */
  readonly agent: AgentOutcome;
  /** The delivered report (its exit code is the process's). */
  readonly report: RunReport;
  /** The run's dashboard link, else the CI job's, when either is an http(s) URL. */
  readonly link: string | null;
}

/**
 * One forge's commit statuses on one commit. Each method throws on failure (a `ForgeError`); the output turns that into one line.
 *
 * @example
 * ```ts
 * const forge: StatusForge = {
 *   forge: "Example",
 *   finishBy: () => {},
 *   start: () => Promise.resolve(),
 *   end: () => Promise.resolve(),
 *   advice: () => "Give the job the permission to write statuses.",
 *   final: () => false,
 * };
 * ```
 */
export interface StatusForge {
  /** The forge's name for messages: `"GitHub"`. */
  readonly forge: string;
  /** Stops the forge's requests waiting out a rate limit that ends after `endsAt` (epoch ms). */
  finishBy(endsAt: number): void;
  /** Marks the agent's status in progress. */
  start(start: StatusStart, options: RequestOptions): Promise<void>;
  /** Completes the agent's status with its outcome (creating it if `start` never did). */
  end(end: StatusEnd, options: RequestOptions): Promise<void>;
  /** How to enable the statuses after `error`, one sentence (may be empty). */
  advice(error: unknown): string;
  /** Whether `error` would only repeat on another attempt (a refused token, a missing scope). */
  final(error: unknown): boolean;
}
