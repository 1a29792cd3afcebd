/** The words every surface shares, so that no two name one result two ways. */

import { type AgentOutcome, type Outcome, outcomeOfExitCode, type RunReport } from "./outcome.ts";
import { EXIT_MEANINGS, ExitCode } from "../config/exit_codes.ts";
import { optionName, OPTIONS } from "../config/options.ts";

// `counted` is the console's last line's, where it says more than `words`; `problem` is an
// annotation's title, `null` for an outcome that needs no attention.
export const OUTCOME_LABELS: Readonly<
  Record<
    Outcome,
    { verdict: string; words: string; counted?: string; mark: string; problem: string | null }
  >
> = {
  passed: { verdict: "PASSED", words: "passed", mark: "✅", problem: null },
  failed: { verdict: "FAILED", words: "failed", mark: "❌", problem: "quality gate failed" },
  unchecked: {
    verdict: "NOT CHECKED",
    words: "not checked",
    counted: "could not be checked",
    mark: "⚠️",
    problem: "quality gate could not be checked",
  },
  timed_out: {
    verdict: "TIMED OUT",
    words: "timed out",
    mark: "⏱️",
    problem: "timed out before a verdict",
  },
  interrupted: {
    verdict: "INTERRUPTED",
    words: "interrupted",
    mark: "🛑",
    problem: "interrupted before a verdict",
  },
  triggered: {
    verdict: "TRIGGERED",
    words: "not waited for",
    counted: "triggered without waiting",
    mark: "⏩",
    problem: null,
  },
};

export function markedOutcome(outcome: Outcome): string {
  return `${OUTCOME_LABELS[outcome].mark} ${OUTCOME_LABELS[outcome].words}`;
}

export function outcomeText(outcome: Outcome): string {
  return OUTCOME_LABELS[outcome].problem ??
    (outcome === "passed" ? "quality gate passed" : "run started, not waited for");
}

export function outcomeLine(outcome: Outcome): string {
  return `${OUTCOME_LABELS[outcome].mark} ${outcomeText(outcome)}`;
}

export function headline(report: RunReport): string {
  const gate = report.agents.length === 1 ? "quality gate" : "quality gates";
  const zero = _zeroBy(report);
  if (zero === "warnOnly") {
    return `⚠️ service-ci: ${gate} failed (ignored: ${optionName(OPTIONS.warnOnly)})`;
  }
  if (zero === "noWait") return `⏩ service-ci: runs started, not waited for`;
  const outcome = outcomeOfExitCode(report.exitCode);
  if (outcome === undefined) return `⚠️ service-ci: ended with exit code ${report.exitCode}`;
  const { mark, words, counted } = OUTCOME_LABELS[outcome];
  return `${mark} service-ci: ${gate} ${counted ?? words}`;
}

// An exit 0 that is not every gate passing: failed gates ignored, or runs not waited for.
function _zeroBy(report: RunReport): "warnOnly" | "noWait" | null {
  const has = (outcome: Outcome) => report.agents.some((agent) => agent.outcome === outcome);
  if (report.exitCode !== ExitCode.Passed) return null;
  return report.warnOnly && has("failed") ? "warnOnly" : has("triggered") ? "noWait" : null;
}

type _Outcomes = readonly Pick<AgentOutcome, "outcome">[];

export function outcomeCounts(agents: _Outcomes): string {
  const counts = countOutcomes(agents, "words");
  return counts.length === 0 ? "No agents." : `${counts.join(" · ")}.`;
}

/** The console's last line: the code, and what each outcome counted for. */
export function explainExitCode(report: RunReport): string {
  const total = report.agents.length;
  const warn = _zeroBy(report) === "warnOnly"
    ? ` (${optionName(OPTIONS.warnOnly)}: a failed gate does not fail the build)`
    : "";
  const counts = countOutcomes(report.agents, "counted").join(", ");
  return `exit ${report.exitCode}: ${total} ${total === 1 ? "gate" : "gates"}, ${counts}${warn}`;
}

export function countOutcomes(agents: _Outcomes, label: "words" | "counted"): string[] {
  return (Object.keys(OUTCOME_LABELS) as Outcome[]).flatMap((outcome) => {
    const count = agents.filter((agent) => agent.outcome === outcome).length;
    const labels = OUTCOME_LABELS[outcome];
    return count === 0 ? [] : [`${count} ${labels[label] ?? labels.words}`];
  });
}

export function exitMeaning(report: RunReport): string {
  const zero = _zeroBy(report);
  if (zero === null) return EXIT_MEANINGS[report.exitCode] ?? "not a code service-ci documents";
  const why = zero === "noWait"
    ? "the runs were started and not waited for"
    : "failed gates do not fail the job";
  return `${why} (${optionName(OPTIONS[zero])})`;
}

/** Why a gate did not pass: the program's error, or the service's reason. */
export function outcomeReason(agent: AgentOutcome): string | null {
  return agent.error ?? gateReason(agent);
}

/** A passed gate needs no explanation where a person reads; `--json` carries every verdict's. */
export function gateReason(agent: AgentOutcome): string | null {
  if (agent.outcome !== "failed" || agent.gate.length === 0) return null;
  return agent.gate.map(({ name, value }) => `${name}: ${value}`).join("; ");
}
