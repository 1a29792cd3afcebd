/**
 * The result of one agent's gate, and of a whole invocation: what every report is fed, and the
 * pure steps that build it (gate result → outcome → hint → the invocation's exit code).
 */

import type { CiMetadata } from "../ci/detect.ts";
import { combineExitCodes, ExitCode } from "./exit_code.ts";
import { withHint } from "../service/hint.ts";
import { Interrupted, type InterruptSignal } from "../platform/signals.ts";
import type { GateResult } from "../service/poll.ts";
import type { GateField } from "../service/verdict.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";

/**
 * How one agent's gate ended.
 *
 * - `passed` / `failed`: the service gave a verdict.
 * - `unchecked`: the gate could not be checked (auth, not found, refused, run ended
 *   without a verdict, too many faults, unusable answer).
 * - `timed_out`: the timeout ran out before a verdict.
 * - `interrupted`: SIGINT, SIGTERM or SIGHUP arrived before a verdict.
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
 * the service (`runId`, `status`, `url`, `error`, `gate`) is already sanitized.
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
 *   gate: [{ name: "rule", value: "toxicity < 0.01" }],
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
  /**
   * What the service said beside its verdict (a rule, a score, a summary), in its order and
   * bounded by {@linkcode GATE_LIMITS}; empty without a verdict.
   */
  readonly gate: readonly GateField[];
}

/**
 * How much of what the service says beside its verdict any report shows: the first `fields`
 * scalars, names cut to `name` characters and string values to `value`. Enough for a rule, a
 * score, a threshold and a summary; a table row or a log line stays readable.
 */
export const GATE_LIMITS: Readonly<{ fields: number; name: number; value: number }> = {
  fields: 6,
  name: 40,
  value: 200,
};

/**
 * Everything one invocation did: the input to the JSON, JUnit, GitHub and console reports.
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

/** What {@linkcode toAgentOutcome} needs besides the gate's result. */
export interface OutcomeContext {
  /** Time from the start of the invocation to this agent's end. */
  readonly durationMs: number;
  /** The whole wait, for the timeout's message. */
  readonly timeoutMs: number;
  /** The run was named with `--run-id`. */
  readonly runIdGiven: boolean;
  /** Values that must never appear in the outcome's strings. */
  readonly secrets: readonly string[];
}

/**
 * Turns one gate's result into its outcome: sanitized strings, the agent's own exit code, and
 * one line saying why it could not be checked, with what to fix.
 *
 * @example
 * ```ts
 * const outcome = toAgentOutcome("0b0c4a5e-8f4e-4a8e-9a53-3f1c2b9d7e10", {
 *   end: { kind: "passed" },
 *   runId: "run_1",
 *   status: "completed",
 *   url: null,
 *   passed: true,
 *   gate: [],
 * }, { durationMs: 1200, timeoutMs: 60_000, runIdGiven: false, secrets: [] });
 * outcome.exitCode; // 0
 * ```
 */
export function toAgentOutcome(
  agentId: string,
  result: GateResult,
  context: OutcomeContext,
): AgentOutcome {
  const clean = (text: string | null) =>
    text === null ? null : sanitize(text, { secrets: context.secrets });
  const base = {
    agentId,
    runId: clean(result.runId),
    status: clean(result.status),
    passed: result.passed,
    durationMs: Math.round(context.durationMs),
    url: clean(result.url),
    gate: _gateFields(result.gate, context.secrets),
  };
  const end = result.end;
  switch (end.kind) {
    case "passed":
      return { ...base, outcome: "passed", exitCode: ExitCode.Passed, error: null };
    case "failed":
      return { ...base, outcome: "failed", exitCode: ExitCode.Failed, error: null };
    case "triggered":
      return { ...base, outcome: "triggered", exitCode: ExitCode.Passed, error: null };
    case "unchecked": {
      const hintContext = {
        duringTrigger: result.runId === null,
        runIdGiven: context.runIdGiven,
      };
      return {
        ...base,
        outcome: "unchecked",
        exitCode: ExitCode.Unchecked,
        error: clean(withHint(end.reason, end.error, hintContext)),
      };
    }
    case "deadline": {
      const last = (result.status === null ? "" : `; last status ${clean(result.status)}`) +
        (end.lastFault === null ? "" : `; last fault: ${clean(end.lastFault)}`);
      const what = result.runId === null ? "before the run was triggered" : "before a verdict";
      return {
        ...base,
        outcome: "timed_out",
        exitCode: ExitCode.TimedOut,
        error: `the timeout of ${formatMinutes(context.timeoutMs)} min ran out ${what}${last}`,
      };
    }
    case "aborted": {
      const signal = end.reason instanceof Interrupted ? end.reason.signal : "SIGINT";
      return {
        ...base,
        outcome: "interrupted",
        exitCode: _SIGNAL_CODES[signal],
        error: `interrupted by ${signal}`,
      };
    }
  }
}

/**
 * The invocation's exit code from its agents' outcomes: the precedence of contract §5, with
 * `--warn-only` turning a failed gate (and only that) into 0.
 */
export function decideExitCode(
  outcomes: readonly AgentOutcome[],
  options: { readonly warnOnly: boolean },
): number {
  const combined = combineExitCodes(outcomes.map((outcome) => outcome.exitCode));
  return options.warnOnly && combined === ExitCode.Failed ? ExitCode.Passed : combined;
}

/**
 * The exit code once a report that was asked for could not be delivered: a verdict (0 or 1)
 * that did not reach its report is a gate that could not be checked; 2, 3, 4 and the
 * interrupts keep their meaning.
 *
 * @example
 * ```ts
 * withUndeliveredReport(0); // 3
 * withUndeliveredReport(4); // 4
 * ```
 */
export function withUndeliveredReport(exitCode: number): number {
  return exitCode === ExitCode.Passed || exitCode === ExitCode.Failed
    ? ExitCode.Unchecked
    : exitCode;
}

/**
 * A duration in minutes as the messages show it: up to three decimals, no trailing zeros.
 *
 * @example
 * ```ts
 * formatMinutes(90_000); // "1.5"
 * ```
 */
export function formatMinutes(ms: number): string {
  return String(Number((ms / 60_000).toFixed(3)));
}

// Names and values sanitized, masked and cut; a field whose name is empty once cleaned, or
// repeats an earlier one, is left out, so each name is a distinct non-empty key in `--json`.
function _gateFields(fields: readonly GateField[], secrets: readonly string[]): GateField[] {
  const kept = new Map<string, GateField>();
  for (const field of fields) {
    if (kept.size === GATE_LIMITS.fields) break;
    const name = sanitize(field.name, { maxLength: GATE_LIMITS.name, secrets });
    if (name === "" || kept.has(name)) continue;
    kept.set(name, { name, value: _gateValue(field.value, secrets) });
  }
  return [...kept.values()];
}

// A number or boolean stays one unless its text holds a secret (a numeric key): then it is text.
function _gateValue(value: string | number | boolean, secrets: readonly string[]) {
  const text = String(value);
  if (typeof value !== "string" && maskSecrets(text, secrets) === text) return value;
  return sanitize(text, { maxLength: GATE_LIMITS.value, secrets });
}

// SIGHUP ends a run as SIGTERM does, and with its code: `v1` adds no exit code.
const _SIGNAL_CODES: Readonly<Record<InterruptSignal, number>> = {
  SIGHUP: ExitCode.Sigterm,
  SIGINT: ExitCode.Sigint,
  SIGTERM: ExitCode.Sigterm,
};
