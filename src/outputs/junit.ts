/** Renders a run report as JUnit XML, one test case per agent, for CI test-report views. */

import type { AgentOutcome, Outcome, RunReport } from "../report/outcome.ts";
import { gateReason, OUTCOME_LABELS, outcomeReason } from "../report/words.ts";
import { shownMs } from "../text/duration.ts";
import { escapeXml } from "../text/xml.ts";
import { optionName, OPTIONS } from "../config/options.ts";

export const JUNIT_SUITE_NAME = "service-ci quality gates";

// The shape follows the Jenkins JUnit XSD (tests/fixtures/jenkins-junit.xsd). GitLab shows a
// failure, error or skipped child's *text* as the details, so each carries its explanation as
// text, not only as an attribute (and the XSD gives <skipped> no attributes).

export function renderJunit(report: RunReport): string {
  const agents = report.agents;
  const count = (...outcomes: Outcome[]) =>
    agents.filter((agent) => outcomes.includes(agent.outcome)).length;
  const tests = agents.length;
  const failures = count("failed");
  const errors = count("unchecked", "timed_out", "interrupted");
  const time = _seconds(report.durationMs);
  const started = Date.parse(report.startedAt);
  const metadata = report.ciMetadata;
  const properties = {
    "service_ci.version": report.version,
    "service_ci.exit_code": report.exitCode,
    "service_ci.warn_only": report.warnOnly,
    "ci.provider": metadata.provider,
    "ci.commit_sha": metadata.commit_sha,
    "ci.branch": metadata.branch,
    "ci.pull_request_number": metadata.pull_request_number,
    "ci.repository": metadata.repository,
    "ci.actor": metadata.actor,
    "ci.build_url": metadata.build_url,
  };
  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${_attributes({ name: "service-ci", tests, failures, errors, time })}>`,
    `  <testsuite${
      _attributes({
        name: JUNIT_SUITE_NAME,
        tests,
        failures,
        errors,
        skipped: count("triggered"),
        time,
        // What Ant and Surefire write, plus the zone, which readers of only the Ant form ignore.
        timestamp: Number.isNaN(started)
          ? null
          : `${new Date(started).toISOString().slice(0, 19)}Z`,
      })
    }>`,
    `    <properties>`,
    ...Object.entries(properties)
      .filter(([, value]) => value !== null)
      .map(([name, value]) => `      <property${_attributes({ name, value })}/>`),
    `    </properties>`,
    ...agents.flatMap((agent) => [
      `    <testcase${
        _attributes({
          classname: "service-ci",
          name: `agent ${agent.agentId}`,
          time: _seconds(agent.durationMs),
        })
      }>`,
      ..._verdict(agent),
      `      <system-out>${escapeXml(_details(agent))}</system-out>`,
      `    </testcase>`,
    ]),
    `  </testsuite>`,
    `</testsuites>`,
  ];
  return `${lines.join("\n")}\n`;
}

function _verdict(agent: AgentOutcome): string[] {
  if (agent.outcome === "passed") return [];
  if (agent.outcome === "triggered") {
    const why = escapeXml(`not waited for (${optionName(OPTIONS.noWait)})`);
    return [`      <skipped>${why}</skipped>`];
  }
  const [name, type] = agent.outcome === "failed"
    ? ["failure", "gate_failed"]
    : ["error", agent.outcome];
  const why = outcomeReason(agent);
  const message = `${OUTCOME_LABELS[agent.outcome].problem}${why === null ? "" : `: ${why}`}`;
  const text = escapeXml(`${message}\n${_details(agent)}`);
  return [`      <${name}${_attributes({ message, type })}>${text}</${name}>`];
}

function _details(agent: AgentOutcome): string {
  return Object.entries({
    agent: agent.agentId,
    outcome: agent.outcome,
    "run id": agent.runId,
    status: agent.status,
    link: agent.url,
    error: agent.error,
    gate: gateReason(agent),
  })
    .filter(([, value]) => value !== null)
    .map(([label, value]) => `${label}: ${value}`)
    .join("\n");
}

function _attributes(values: Readonly<Record<string, string | number | boolean | null>>): string {
  return Object.entries(values)
    .map(([name, value]) => value === null ? "" : ` ${name}="${escapeXml(String(value))}"`)
    .join("");
}

function _seconds(ms: number): string {
  return (shownMs(ms) / 1000).toFixed(3);
}
