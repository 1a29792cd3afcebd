/** The result of one agent's gate, and of a whole invocation: what every report is fed. */

import type { CiMetadata } from "./ci_metadata.ts";

/**
 * How one agent's gate ended.
 *
 * - `passed` / `failed`: the service gave a verdict.
 * - `unchecked`: the gate could not be checked (auth, not found, refused, run ended
 *   without a verdict, too many faults, unusable answer).
 * - `timed_out`: the timeout ran out before a verdict.
 * - `interrupted`: SIGINT/SIGTERM arrived before a verdict.
 * - `triggered`: `--no-wait` started the run and did not wait for it.
 */
export type Outcome =
  | "passed"
  | "failed"
  | "unchecked"
  | "timed_out"
  | "interrupted"
  | "triggered";

/**
 * What is known about one agent when the runner stops. Every string that came from
 * the service (`runId`, `status`, `url`, `error`) is already sanitized.
 *
 * @example
 * ```ts
 * const outcome: AgentOutcome = {
 *   agentId: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10",
 *   runId: "run_1",
 *   status: "completed",
 *   passed: true,
 *   outcome: "passed",
 *   exitCode: 0,
 *   durationMs: 1200,
 *   url: "https://service.example/runs/run_1",
 *   error: null,
 * };
 * ```
 */
export interface AgentOutcome {
  /** The agent's UUID, as given on the command line. */
  readonly agentId: string;
  /** The run's id, once the trigger answered with one. */
  readonly runId: string | null;
  /** The last status the service reported, as it spelled it. */
  readonly status: string | null;
  /** `results.gate.passed` when it was a boolean on a finished run, else `null`. */
  readonly passed: boolean | null;
  /** How the gate ended. */
  readonly outcome: Outcome;
  /** This agent's own exit code (contract §5). */
  readonly exitCode: number;
  /** Time from the start of the invocation to this agent's end. */
  readonly durationMs: number;
  /** The dashboard link the service gave, if any. */
  readonly url: string | null;
  /** One line saying why the gate could not be checked, or `null`. */
  readonly error: string | null;
}

/**
 * Everything one invocation did: the input to the JSON, JUnit, GitHub and console reports.
 *
 * @example
 * ```ts
 * declare const report: RunReport;
 * const failed = report.agents.filter((agent) => agent.outcome === "failed");
 * ```
 */
export interface RunReport {
  /** service-ci's own version. */
  readonly version: string;
  /** The process exit code. */
  readonly exitCode: number;
  /** When the invocation started (ISO 8601). */
  readonly startedAt: string;
  /** Wall time of the whole invocation. */
  readonly durationMs: number;
  /** True when `--warn-only` turned a failed gate into exit code 0. */
  readonly warnOnly: boolean;
  /** The CI metadata sent with every trigger. */
  readonly ciMetadata: CiMetadata;
  /** One entry per agent, in the order they were given. */
  readonly agents: readonly AgentOutcome[];
}
