/** The result of one agent's gate and of the invocation: what every report is fed. */

import type { CiMetadata } from "../ci/detect.ts";
import { combineExitCodes, ExitCode } from "./exit_code.ts";
import { withHint } from "../service/hint.ts";
import { Interrupted, type InterruptSignal } from "../platform/signals.ts";
import type { GateResult } from "../service/poll.ts";
import type { GateField } from "../service/verdict.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";

/** `triggered`: `--no-wait` started the run and did not wait for it. */
export type Outcome =
  | "passed"
  | "failed"
  | "unchecked"
  | "timed_out"
  | "interrupted"
  | "triggered";

/** Every string that came from the service is already sanitized. */
export interface AgentOutcome {
  readonly agentId: string;
  readonly runId: string | null;
  readonly status: string | null;
  /** `results.gate.passed` when it was a boolean on a finished run, else `null`. */
  readonly passed: boolean | null;
  readonly outcome: Outcome;
  readonly exitCode: number;
  readonly durationMs: number;
  readonly url: string | null;
  readonly error: string | null;
  /** Empty without a verdict. */
  readonly gate: readonly GateField[];
}

/** Enough for a rule, a score, a threshold and a summary; a table row stays readable. */
export const GATE_LIMITS: Readonly<{ fields: number; name: number; value: number }> = {
  fields: 6,
  name: 40,
  value: 200,
};

export interface RunReport {
  readonly version: string;
  readonly exitCode: number;
  readonly startedAt: string;
  readonly durationMs: number;
  readonly warnOnly: boolean;
  readonly ciMetadata: CiMetadata;
  readonly agents: readonly AgentOutcome[];
}

export interface OutcomeContext {
  readonly durationMs: number;
  readonly timeoutMs: number;
  readonly runIdGiven: boolean;
  readonly secrets: readonly string[];
}

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

/** Contract §5's precedence; `--warn-only` turns a failed gate (and only that) into 0. */
export function decideExitCode(
  outcomes: readonly AgentOutcome[],
  options: { readonly warnOnly: boolean },
): number {
  const combined = combineExitCodes(outcomes.map((outcome) => outcome.exitCode));
  return options.warnOnly && combined === ExitCode.Failed ? ExitCode.Passed : combined;
}

/** A verdict that did not reach a report asked for is a gate that could not be checked. */
export function withUndeliveredReport(exitCode: number): number {
  return exitCode === ExitCode.Passed || exitCode === ExitCode.Failed
    ? ExitCode.Unchecked
    : exitCode;
}

export function formatMinutes(ms: number): string {
  return String(Number((ms / 60_000).toFixed(3)));
}

// A name empty once cleaned, or repeated, is left out: each is a distinct key in `--json`.
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
