/** Ready-made run reports for the report renderers' tests. */

import fc from "npm:fast-check@3.23.2";
import type { CiMetadata } from "../../src/ci/detect.ts";
import type { AgentOutcome, Outcome, RunReport } from "../../src/report/outcome.ts";

/**
 * Agent UUIDs, one per outcome, in the order `mixedReport` lists them.
 *
 * @example
 * ```ts
 * mixedReport.agents[1]?.agentId === AGENT_IDS.failed; // true
 * ```
 */
export const AGENT_IDS: Readonly<Record<Outcome, string>> = {
  passed: "0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10",
  failed: "1c1d5b6f-9a5f-4b9f-8b64-4a2d3cae8f21",
  unchecked: "2d2e6c70-ab60-4ca0-9c75-5b3e4dbf9032",
  timed_out: "3e3f7d81-bc71-4db1-8d86-6c4f5ec0a143",
  interrupted: "4f408e92-cd82-4ec2-9e97-7d506fd1b254",
  triggered: "5a519fa3-de93-4fd3-afa8-8e6170e2c365",
};

/**
 * Strings that have broken reports elsewhere: markup closers, CDATA ends, quotes, NUL, an
 * escape sequence, emoji, table pipes, links, HTML, workflow-command and heredoc syntax.
 * The sanitizer would have removed some of them; the renderers must cope without it.
 *
 * @example
 * ```ts
 * const report = makeReport(HOSTILE_STRINGS.map((status) => makeAgent({ status })));
 * ```
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "</testcase><x>",
  "]]>",
  `"&'<`,
  "nul\u0000byte",
  "\u001b[31mred\u001b[0m",
  "emoji 🚀 and 𝒳 and é",
  "pipe | in | cell",
  "`code` and ``` fence",
  "[click](javascript:alert(1)) ![img](https://evil.example/x.png)",
  "<img src=x onerror=alert(1)><script>alert(1)</script>",
  "line one\nline two\r\nline three\rfour",
  "100% :: a, b, c",
  "::error title=x::injected",
  "name<<EOF",
  "lone \ud800 surrogate and \ufffe and \u0085 and \u007f",
  "$\\color{red}{math}$ and \\| backslash",
  "https://evil.example www.evil.example me@evil.example",
];

/**
 * Any JavaScript string, lone surrogates and controls included, up to `maxLength` units:
 * what a renderer could be handed if the sanitizer ever let something through.
 *
 * @example
 * ```ts
 * import fc from "npm:fast-check@3.23.2";
 * fc.sample(anyString(5), 3); // e.g. ["", "\ud800a", "🚀\u0000"]
 * ```
 */
export function anyString(maxLength = 40): fc.Arbitrary<string> {
  const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit));
  const codePoint = fc.string({ unit: "binary", minLength: 1, maxLength: 1 });
  return fc.string({ unit: fc.oneof(codePoint, codeUnit), maxLength });
}

/**
 * Builds one agent's outcome: a passed gate unless overridden.
 *
 * @example
 * ```ts
 * const failed = makeAgent({ outcome: "failed", passed: false, exitCode: 1 });
 * ```
 */
export function makeAgent(overrides: Partial<AgentOutcome> = {}): AgentOutcome {
  return {
    agentId: AGENT_IDS.passed,
    runId: "run_1",
    status: "completed",
    passed: true,
    outcome: "passed",
    exitCode: 0,
    durationMs: 1234,
    url: "https://service.example/runs/run_1",
    error: null,
    gate: [],
    ...overrides,
  };
}

/**
 * The CI metadata of a GitHub Actions pull-request build.
 *
 * @example
 * ```ts
 * const report = makeReport([], { ciMetadata: { ...githubMetadata, actor: null } });
 * ```
 */
export const githubMetadata: CiMetadata = {
  commit_sha: "4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c",
  branch: "feature/login",
  pull_request_number: 42,
  repository: "acme/widgets",
  actor: "octocat",
  provider: "github_actions",
  build_url: "https://github.com/acme/widgets/actions/runs/1",
};

/**
 * Builds a report around the given agents.
 *
 * @example
 * ```ts
 * const report = makeReport([makeAgent()], { exitCode: 0 });
 * ```
 */
export function makeReport(
  agents: readonly AgentOutcome[],
  overrides: Partial<RunReport> = {},
): RunReport {
  return {
    version: "1.0.0",
    exitCode: 0,
    startedAt: "2025-01-02T03:04:05.678Z",
    durationMs: 5678,
    warnOnly: false,
    ciMetadata: githubMetadata,
    agents,
    ...overrides,
  };
}

/**
 * One agent whose gate passed.
 *
 * @example
 * ```ts
 * passingReport.agents[0]?.outcome; // "passed"
 * ```
 */
export const passingReport: RunReport = makeReport([makeAgent()]);

/**
 * Two agents whose gates both passed.
 *
 * @example
 * ```ts
 * twoPassingReport.agents.every((agent) => agent.outcome === "passed"); // true
 * ```
 */
export const twoPassingReport: RunReport = makeReport([
  makeAgent(),
  makeAgent({
    agentId: AGENT_IDS.failed,
    runId: "run_2",
    url: "https://service.example/runs/run_2",
    durationMs: 61_500,
  }),
]);

/**
 * One agent of every outcome, in the order of {@linkcode AGENT_IDS}; exit code 3.
 *
 * @example
 * ```ts
 * mixedReport.agents.map((agent) => agent.outcome); // passed, failed, unchecked, …
 * ```
 */
export const mixedReport: RunReport = makeReport([
  makeAgent(),
  makeAgent({
    agentId: AGENT_IDS.failed,
    runId: "run_2",
    status: "failed",
    passed: false,
    outcome: "failed",
    exitCode: 1,
    durationMs: 2000,
    url: "https://service.example/runs/run_2",
  }),
  makeAgent({
    agentId: AGENT_IDS.unchecked,
    runId: null,
    status: null,
    passed: null,
    outcome: "unchecked",
    exitCode: 3,
    durationMs: 300,
    url: null,
    error: "403 Forbidden: the key lacks CI access",
  }),
  makeAgent({
    agentId: AGENT_IDS.timed_out,
    runId: "run_4",
    status: "running",
    passed: null,
    outcome: "timed_out",
    exitCode: 4,
    durationMs: 1_800_000,
    url: "https://service.example/runs/run_4",
    error: "no verdict within 30 minutes",
  }),
  makeAgent({
    agentId: AGENT_IDS.interrupted,
    runId: "run_5",
    status: "evaluating",
    passed: null,
    outcome: "interrupted",
    exitCode: 130,
    durationMs: 4000,
    url: "https://service.example/runs/run_5",
  }),
  makeAgent({
    agentId: AGENT_IDS.triggered,
    runId: "run_6",
    status: "queued",
    passed: null,
    outcome: "triggered",
    exitCode: 0,
    durationMs: 150,
    url: "https://service.example/runs/run_6",
  }),
], { exitCode: 3, durationMs: 1_800_100 });

/**
 * One agent of every outcome again, each with hostile strings in every field the service
 * controls, hostile CI metadata, and URLs that must not become links.
 *
 * @example
 * ```ts
 * hostileReport.agents.map((agent) => agent.runId); // markup, controls, emoji, …
 * ```
 */
export const hostileReport: RunReport = makeReport(
  (Object.keys(AGENT_IDS) as Outcome[]).map((outcome, index) => {
    const hostile = (offset: number) =>
      HOSTILE_STRINGS[(index * 4 + offset) % HOSTILE_STRINGS.length] ?? "";
    return makeAgent({
      agentId: AGENT_IDS[outcome],
      runId: hostile(0),
      status: hostile(1),
      passed: outcome === "passed" ? true : outcome === "failed" ? false : null,
      outcome,
      exitCode:
        { passed: 0, failed: 1, unchecked: 3, timed_out: 4, interrupted: 143, triggered: 0 }[
          outcome
        ],
      url: [
        "https://evil.example/a|b)<c>`d[x]$y&copy;\\z?q=\"'%41#frag ment",
        "javascript:alert(1)",
        "data:text/html,<script>alert(1)</script>",
        null,
        "http://[::1]:8080/runs/a(b)",
        `https://service.example/runs/${HOSTILE_STRINGS.join("")}`,
      ][index] ?? null,
      error: outcome === "passed" ? null : hostile(2) + hostile(3),
    });
  }),
  {
    exitCode: 143,
    ciMetadata: {
      commit_sha: "</x>&\u0000",
      branch: "feature/<script>|`x`",
      pull_request_number: 7,
      repository: 'acme/"widgets"',
      actor: "::warning::me",
      provider: "github_actions",
      build_url: "javascript:alert(1)",
    },
  },
);
