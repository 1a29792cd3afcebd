/** TeamCity: a progress block, a test per agent, a build problem per unchecked gate, parameters. */

import type { AgentOutcome } from "../../report/outcome.ts";
import { outcomeText } from "../../report/words.ts";
import { gateProblems, outputValues } from "../summary.ts";
import { CI_OUTPUTS, type NativeWriter, printLines } from "./native_io.ts";
import { optionName, OPTIONS } from "../../config/options.ts";

const TEAMCITY_SUITE = "service-ci";

/** A gate with no verdict: an ignored test and a `buildProblem`. Parameters as the action's. */
export function createTeamcityWriter(): NativeWriter {
  return {
    ci: "TeamCity",
    stdoutOnly: {
      what: "service messages",
      lost: `the gate is not shown in the Tests tab (use ${
        optionName(OPTIONS.junit)
      } with the XML report processing build feature)`,
    },
    progressStart: (title) => [
      teamcityMessage("blockOpened", { name: TEAMCITY_SUITE, description: title }),
    ],
    progressEnd: () => [teamcityMessage("blockClosed", { name: TEAMCITY_SUITE })],
    finish(report, io) {
      const problems = new Map(gateProblems(report).map((problem) => [problem.agent, problem]));
      printLines(io, [
        teamcityMessage("testSuiteStarted", { name: TEAMCITY_SUITE }),
        ...report.agents.flatMap((agent) => _test(agent, problems.get(agent))),
        teamcityMessage("testSuiteFinished", { name: TEAMCITY_SUITE }),
        ...report.agents.flatMap((agent) => {
          const problem = problems.get(agent);
          if (agent.outcome === "failed" || problem === undefined) return [];
          return [teamcityMessage("buildProblem", {
            description: problem.message.slice(0, _MAX_DESCRIPTION),
            identity: teamcityProblemIdentity(agent.agentId, agent.outcome.replace("_", "-")),
          })];
        }),
        ...CI_OUTPUTS.map((name) =>
          teamcityMessage("setParameter", {
            name: `${TEAMCITY_SUITE}.${name}`,
            value: outputValues(report)[name],
          })
        ),
      ], "TeamCity: could not print a service message");
      return Promise.resolve();
    },
  };
}

/**
 * @example
 * ```ts
 * teamcityMessage("testStarted", { name: "it's [x]" });
 * // "##teamcity[testStarted name='it|'s |[x|]']"
 * ```
 */
export function teamcityMessage(name: string, attrs: Readonly<Record<string, string>>): string {
  const pairs = Object.entries(attrs).map(([key, value]) =>
    `${key}='${escapeTeamcityValue(value)}'`
  );
  return `##teamcity[${[name, ...pairs].join(" ")}]`;
}

/**
 * As TeamCity's own writer does (`MapSerializerUtil.STD_ESCAPER` in JetBrains'
 * teamcity-service-messages): no line break is left, and no `[` that could start another message.
 */
export function escapeTeamcityValue(value: string): string {
  return value.replace(/[|'\n\r[\]\u0085\u2028\u2029]/g, (char) => `|${_ESCAPES[char] ?? char}`);
}

const _ESCAPES: Readonly<Record<string, string>> = {
  "\n": "n",
  "\r": "r",
  "\u0085": "x",
  "\u2028": "l",
  "\u2029": "p",
};

// TeamCity keeps a build problem's identity to at most 60 characters and its description to 4000.
const _MAX_IDENTITY = 60;
const _MAX_DESCRIPTION = 4000;

// Every gate but a passed or triggered one has a problem (gateProblems).
function _test(agent: AgentOutcome, problem?: { title: string; message: string }): string[] {
  const name = agent.agentId;
  const duration = String(Math.max(0, Math.round(agent.durationMs)));
  const verdict = agent.outcome === "passed"
    ? []
    : agent.outcome === "failed"
    ? [teamcityMessage("testFailed", { name, message: problem!.title, details: problem!.message })]
    : [teamcityMessage("testIgnored", {
      name,
      message: problem?.message ??
        `${outcomeText(agent.outcome)} (run ${agent.runId ?? "unknown"})`,
    })];
  return [
    teamcityMessage("testStarted", { name }),
    ...verdict,
    teamcityMessage("testFinished", { name, duration }),
  ];
}

/**
 * Stable so TeamCity tells new problems from recurring ones; over 60 characters, the id is hashed.
 */
export function teamcityProblemIdentity(agentId: string, kind: string): string {
  const identity = `${TEAMCITY_SUITE}-${agentId}-${kind}`;
  if (identity.length <= _MAX_IDENTITY) return identity;
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(agentId)) {
    hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  }
  return `${TEAMCITY_SUITE}-${hash.toString(16).padStart(8, "0")}-${kind}`.slice(0, _MAX_IDENTITY);
}
