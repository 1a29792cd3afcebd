/** Renders a run report as the `--json` document, whose shape `docs/report.schema.json` fixes. */

import type { AgentOutcome, RunReport } from "../report/outcome.ts";
import { shownMs } from "../text/duration.ts";

/** The GitHub `agents` output uses the same objects, so both read alike. */
export function toJsonAgent(agent: AgentOutcome): Readonly<Record<string, unknown>> {
  return {
    agent_id: agent.agentId,
    run_id: agent.runId,
    status: agent.status,
    passed: agent.passed,
    outcome: agent.outcome,
    exit_code: agent.exitCode,
    duration_ms: Math.round(shownMs(agent.durationMs)),
    url: agent.url,
    error: agent.error,
    // fromEntries defines each name as its own member: `__proto__` stays a field, not a prototype.
    gate: Object.fromEntries(agent.gate.map(({ name, value }) => [name, value])),
  };
}

export function renderJson(report: RunReport): string {
  const metadata = report.ciMetadata;
  const document = {
    // Changes only when a field is removed, renamed or changes meaning.
    schema_version: 1,
    version: report.version,
    exit_code: report.exitCode,
    started_at: report.startedAt,
    duration_ms: Math.round(shownMs(report.durationMs)),
    warn_only: report.warnOnly,
    // Field by field: an extra property passed in never leaks into a schema that forbids it.
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
  return `${JSON.stringify(document, null, 2)}\n`;
}
