/**
 * The TeamCity native writer: a log block around progress, each agent as a test in the Tests tab,
 * a build problem per gate that could not be checked, and build parameters for the outputs, all
 * through `##teamcity[…]` service messages.
 */

import type { AgentOutcome, Outcome, RunReport } from "../../result/outcome.ts";
import { OUTCOME_LABELS, outcomeText } from "../../text/words.ts";
import { gateProblems, outputValues } from "../summary.ts";
import type { NativeIo, NativeWriter } from "./native_io.ts";
import { optionName, OPTIONS } from "../../config/options.ts";

/** The test suite, and the log block, that hold the run. */
export const TEAMCITY_SUITE = "service-ci";

/**
 * The TeamCity writer.
 *
 * - Progress: `blockOpened name='service-ci' description='<title>'` … `blockClosed`.
 * - Tests tab: suite `service-ci`, one test per agent named by its id. A passed gate passes; a
 *   failed gate fails (`testFailed`, with the run id and link in the details); a gate that could
 *   not be checked, timed out or was interrupted is shown ignored, because it has no verdict, and
 *   fails the build through a `buildProblem` with a stable identity
 *   (`service-ci-<agent>-unchecked`, `…-timed-out`, `…-interrupted`); a run not waited for is
 *   ignored. Each test has its duration.
 * - Parameters: `service-ci.passed`, `service-ci.exit-code`, `service-ci.run-id`,
 *   `service-ci.url`, with the GitHub action's values (several agents give a JSON array).
 *
 * @example
 * ```ts
 * const writer = createTeamcityWriter();
 * writer.progressStart("service-ci: 1 agent");
 * // ["##teamcity[blockOpened name='service-ci' description='service-ci: 1 agent']"]
 * ```
 */
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
    finish: (report, io) => Promise.resolve(_finish(report, io)),
  };
}

/**
 * One multiple-attribute service message, `##teamcity[name key='value' …]`, each value escaped
 * with {@linkcode escapeTeamcityValue}.
 *
 * @example
 * ```ts
 * teamcityMessage("testStarted", { name: "it's [x]" });
 * // "##teamcity[testStarted name='it|'s |[x|]']"
 * ```
 */
export function teamcityMessage(
  name: string,
  attributes: Readonly<Record<string, string>>,
): string {
  const pairs = Object.entries(attributes).map(([key, value]) =>
    `${key}='${escapeTeamcityValue(value)}'`
  );
  return `##teamcity[${[name, ...pairs].join(" ")}]`;
}

/**
 * Escapes a service-message value as TeamCity's own writer does (`MapSerializerUtil.STD_ESCAPER`
 * in JetBrains' teamcity-service-messages, and the npm `teamcity-service-messages`): `|` → `||`,
 * `'` → `|'`, `\n` → `|n`, `\r` → `|r`, `[` → `|[`, `]` → `|]`, U+0085 → `|x`, U+2028 → `|l`,
 * U+2029 → `|p`. No line break is left, and no `[` that could start another message.
 *
 * @example
 * ```ts
 * escapeTeamcityValue("a|b\n'c'"); // "a||b|n|'c|'"
 * ```
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

// The outcomes without a verdict that fail the build, and the identity suffix of each.
const _PROBLEMS: Readonly<Partial<Record<Outcome, string>>> = {
  unchecked: "unchecked",
  timed_out: "timed-out",
  interrupted: "interrupted",
};

const _OUTPUTS = ["passed", "exit-code", "run-id", "url"] as const;

function _finish(report: RunReport, io: NativeIo): void {
  const problems = new Map(gateProblems(report).map((problem) => [problem.agent, problem]));
  const lines = [
    teamcityMessage("testSuiteStarted", { name: TEAMCITY_SUITE }),
    ...report.agents.flatMap((agent) => _test(agent, problems.get(agent))),
    teamcityMessage("testSuiteFinished", { name: TEAMCITY_SUITE }),
    ...report.agents.flatMap((agent) => {
      const kind = _PROBLEMS[agent.outcome];
      const problem = problems.get(agent);
      if (kind === undefined || problem === undefined) return [];
      return [teamcityMessage("buildProblem", {
        description: problem.message.slice(0, _MAX_DESCRIPTION),
        identity: teamcityProblemIdentity(agent.agentId, kind),
      })];
    }),
    ..._OUTPUTS.map((name) =>
      teamcityMessage("setParameter", {
        name: `${TEAMCITY_SUITE}.${name}`,
        value: outputValues(report)[name],
      })
    ),
  ];
  for (const line of lines) {
    try {
      io.command(line);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      io.warn(`TeamCity: could not print a service message (${reason.replace(/\s+/g, " ")})`);
      return;
    }
  }
}

function _test(
  agent: AgentOutcome,
  problem: { readonly title: string; readonly message: string } | undefined,
): string[] {
  const name = agent.agentId;
  const duration = String(Math.max(0, Math.round(agent.durationMs)));
  const verdict = agent.outcome === "passed"
    ? []
    : agent.outcome === "failed"
    ? [teamcityMessage("testFailed", {
      name,
      message: problem?.title ?? OUTCOME_LABELS.failed.problem!,
      details: problem?.message ?? "",
    })]
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
 * The identity of the build problem for one agent's gate, stable from build to build so
 * TeamCity can tell a new problem from a recurring one: `service-ci-<agent>-<kind>`, or, when that
 * is over TeamCity's 60 characters, the agent id replaced by a 32-bit FNV-1a hash of it.
 *
 * @example
 * ```ts
 * teamcityProblemIdentity("0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", "unchecked");
 * // "service-ci-0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10-unchecked"
 * ```
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
