/** Renders a run report as JUnit XML, one test case per agent, for CI test-report views. */

import type { AgentOutcome, RunReport } from "../result/outcome.ts";
import { OUTCOME_LABELS, shownMs } from "../text/words.ts";
import { XML_ENTITIES } from "../text/sanitize.ts";
import { optionName, OPTIONS } from "../config/options.ts";
import { gateReason, outcomeReason } from "./summary.ts";

export const JUNIT_SUITE_NAME = "service-ci quality gates";

// The shape follows the Jenkins JUnit XSD (tests/fixtures/jenkins-junit.xsd). GitLab shows a
// failure, error or skipped child's *text* as the details, so each carries its explanation as
// text, not only as an attribute (and the XSD gives <skipped> no attributes).

export function renderJunit(report: RunReport): string {
  const agents = report.agents;
  const failures = agents.filter((agent) => agent.outcome === "failed").length;
  const errors = agents.filter((agent) => _isError(agent)).length;
  const skipped = agents.filter((agent) => agent.outcome === "triggered").length;
  const time = _seconds(report.durationMs);
  const timestamp = _timestamp(report.startedAt);

  const lines = [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites${
      _attributes({ name: "service-ci", tests: agents.length, failures, errors, time })
    }>`,
    `  <testsuite${
      _attributes({
        name: JUNIT_SUITE_NAME,
        tests: agents.length,
        failures,
        errors,
        skipped,
        time,
        timestamp,
      })
    }>`,
    ..._properties(report),
    ...agents.flatMap(_testcase),
    `  </testsuite>`,
    `</testsuites>`,
  ];
  return `${lines.join("\n")}\n`;
}

/**
 * Tab, line feed and carriage return become character references, so attribute normalization
 * and line-end handling keep them.
 */
export function escapeXml(text: string): string {
  return text.replace(_NOT_XML, "").replace(/[&<>"'\t\n\r]/g, (char) => _ENTITIES[char] ?? "");
}

// Outside XML 1.0's Char production, plus DEL and C1: discouraged, and some readers reject them.
const _NOT_XML =
  // deno-lint-ignore no-control-regex
  /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

const _ENTITIES: Readonly<Record<string, string>> = {
  ...XML_ENTITIES,
  "\t": "&#9;",
  "\n": "&#10;",
  "\r": "&#13;",
};

const _NOT_WAITED = () => `not waited for (${optionName(OPTIONS.noWait)})`;

function _isError(agent: AgentOutcome): boolean {
  return agent.outcome === "unchecked" || agent.outcome === "timed_out" ||
    agent.outcome === "interrupted";
}

function _testcase(agent: AgentOutcome): string[] {
  const open = `    <testcase${
    _attributes({
      classname: "service-ci",
      name: `agent ${agent.agentId}`,
      time: _seconds(agent.durationMs),
    })
  }>`;
  return [
    open,
    ..._verdict(agent),
    `      <system-out>${_details(agent)}</system-out>`,
    `    </testcase>`,
  ];
}

function _verdict(agent: AgentOutcome): string[] {
  const element = (name: string, message: string, type: string) =>
    `      <${name}${_attributes({ message, type })}>${
      escapeXml(`${message}\n${_details(agent, false)}`)
    }</${name}>`;
  switch (agent.outcome) {
    case "passed":
      return [];
    case "failed":
      return [element("failure", _reason(OUTCOME_LABELS.failed.problem!, agent), "gate_failed")];
    case "unchecked":
    case "timed_out":
    case "interrupted":
      return [
        element("error", _reason(OUTCOME_LABELS[agent.outcome].problem!, agent), agent.outcome),
      ];
    case "triggered":
      return [`      <skipped>${escapeXml(_NOT_WAITED())}</skipped>`];
  }
}

function _reason(summary: string, agent: AgentOutcome): string {
  const why = outcomeReason(agent);
  return why === null ? summary : `${summary}: ${why}`;
}

// One "label: value" line per known fact; escaped unless the caller escapes the whole text.
function _details(agent: AgentOutcome, escape = true): string {
  const facts: [string, string | null][] = [
    ["agent", agent.agentId],
    ["outcome", agent.outcome],
    ["run id", agent.runId],
    ["status", agent.status],
    ["link", agent.url],
    ["error", agent.error],
    ["gate", gateReason(agent)],
  ];
  const text = facts
    .filter((fact): fact is [string, string] => fact[1] !== null)
    .map(([label, value]) => `${label}: ${value}`)
    .join("\n");
  return escape ? escapeXml(text) : text;
}

function _properties(report: RunReport): string[] {
  const metadata = report.ciMetadata;
  const values: Record<string, string | number | boolean | null> = {
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
  return [
    `    <properties>`,
    ...Object.entries(values)
      .filter((entry): entry is [string, string | number | boolean] => entry[1] !== null)
      .map(([name, value]) => `      <property${_attributes({ name, value })}/>`),
    `    </properties>`,
  ];
}

function _attributes(values: Readonly<Record<string, string | number | boolean | null>>): string {
  return Object.entries(values)
    .filter((entry): entry is [string, string | number | boolean] => entry[1] !== null)
    .map(([name, value]) => ` ${name}="${escapeXml(String(value))}"`)
    .join("");
}

function _seconds(ms: number): string {
  return (shownMs(ms) / 1000).toFixed(3);
}

// What Ant and Surefire write, plus the zone, which readers that parse only the Ant form ignore.
function _timestamp(startedAt: string): string | null {
  const time = Date.parse(startedAt);
  return Number.isNaN(time) ? null : `${new Date(time).toISOString().slice(0, 19)}Z`;
}
