/** Renders a run report as the `--json` document, whose shape `docs/report.schema.json` fixes. */

import type { CiMetadata } from "../ci/detect.ts";
import type { AgentOutcome, Outcome, RunReport } from "../result/outcome.ts";

/**
 * The version of the document's shape. It changes only when a field is removed, renamed or
 * changes meaning, so a consumer can refuse a shape it does not know.
 */
export const REPORT_SCHEMA_VERSION = 1;

/**
 * One agent in the JSON document.
 *
 * @example
 * ```ts
 * const agent: JsonAgent = {
 *   agent_id: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10",
 *   run_id: "run_1",
 *   status: "completed",
 *   passed: true,
 *   outcome: "passed",
 *   exit_code: 0,
 *   duration_ms: 1200,
 *   url: "https://service.example/runs/run_1",
 *   error: null,
 *   gate: { rule: "toxicity < 0.01" },
 * };
 * ```
 */
export interface JsonAgent {
  /** The agent's UUID, as given on the command line. */
  readonly agent_id: string;
  /** The run's id, once the trigger answered with one. */
  readonly run_id: string | null;
  /** The last status the service reported, as it spelled it. */
  readonly status: string | null;
  /** `results.gate.passed` when it was a boolean on a finished run, else `null`. */
  readonly passed: boolean | null;
  /** How the gate ended. */
  readonly outcome: Outcome;
  /** This agent's own exit code (contract §5). */
  readonly exit_code: number;
  /** Whole milliseconds from the start of the invocation to this agent's end. */
  readonly duration_ms: number;
  /** The dashboard link the service gave, if any. */
  readonly url: string | null;
  /** One line saying why the gate could not be checked, or `null`. */
  readonly error: string | null;
  /**
   * What the service said beside its verdict, passed or failed (`results.gate`'s other scalars,
   * `results.summary`), bounded and masked; `{}` when it said nothing more or gave no verdict.
   */
  readonly gate: Readonly<Record<string, string | number | boolean>>;
}

/**
 * The whole JSON document (`docs/report.schema.json`).
 */
export interface JsonReport {
  /** The version of this shape: {@linkcode REPORT_SCHEMA_VERSION}. */
  readonly schema_version: typeof REPORT_SCHEMA_VERSION;
  /** service-ci's own version. */
  readonly version: string;
  /** The process exit code. */
  readonly exit_code: number;
  /** When the invocation started (ISO 8601). */
  readonly started_at: string;
  /** Wall time of the whole invocation, in whole milliseconds. */
  readonly duration_ms: number;
  /** True when `--warn-only` turned a failed gate into exit code 0. */
  readonly warn_only: boolean;
  /** The CI metadata sent with every trigger. */
  readonly ci_metadata: CiMetadata;
  /** One entry per agent, in the order they were given. */
  readonly agents: readonly JsonAgent[];
}

/**
 * Maps one agent's outcome to its object in the JSON document; the GitHub `agents` output
 * uses the same objects, so both read alike.
 */
export function toJsonAgent(agent: AgentOutcome): JsonAgent {
  return {
    agent_id: agent.agentId,
    run_id: agent.runId,
    status: agent.status,
    passed: agent.passed,
    outcome: agent.outcome,
    exit_code: agent.exitCode,
    duration_ms: _milliseconds(agent.durationMs),
    url: agent.url,
    error: agent.error,
    // fromEntries defines each name as its own member: `__proto__` stays a field, not a prototype.
    gate: Object.fromEntries(agent.gate.map(({ name, value }) => [name, value])),
  };
}

/**
 * Maps a run report to the JSON document's object, keys in their documented order.
 */
export function toJsonReport(report: RunReport): JsonReport {
  const metadata = report.ciMetadata;
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    version: report.version,
    exit_code: report.exitCode,
    started_at: report.startedAt,
    duration_ms: _milliseconds(report.durationMs),
    warn_only: report.warnOnly,
    // Copied field by field so that an extra property on the object passed in never leaks
    // into a document whose schema forbids it.
    ci_metadata: {
      commit_sha: metadata.commit_sha,
      branch: metadata.branch,
      pull_request_number: metadata.pull_request_number,
      repository: metadata.repository,
      actor: metadata.actor,
      provider: metadata.provider,
      build_url: metadata.build_url,
    },
    agents: report.agents.map(toJsonAgent),
  };
}

/**
 * Renders the `--json` document: pretty-printed with two spaces, ending in a newline.
 *
 * Shape (every key always present; `docs/report.schema.json` is the reference):
 * `schema_version` (1), `version`, `exit_code`, `started_at`, `duration_ms`, `warn_only`,
 * `ci_metadata` {`commit_sha`, `branch`, `pull_request_number`, `repository`, `actor`,
 * `provider`, `build_url`}, and `agents`, in the order given, each {`agent_id`, `run_id`,
 * `status`, `passed` (true, false or null), `outcome`, `exit_code`, `duration_ms`, `url`,
 * `error`, `gate` (the service's other words: an object of scalars)}. Durations are whole
 * milliseconds.
 */
export function renderJson(report: RunReport): string {
  return `${JSON.stringify(toJsonReport(report), null, 2)}\n`;
}

// The schema promises a non-negative integer, whatever clock arithmetic produced.
function _milliseconds(ms: number): number {
  return Number.isFinite(ms) && ms > 0 ? Math.round(ms) : 0;
}
