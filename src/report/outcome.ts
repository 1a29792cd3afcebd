/**
 * What every report is fed (one agent's result and the invocation's) and contract §5's exit codes,
 * decided here alone: from each verdict, `--warn-only` and whether each report was delivered.
 */

import type { CiMetadata } from "../ci/detect.ts";
import { Interrupted, type InterruptSignal } from "../platform/signals.ts";
import { withHint } from "../service/hint.ts";
import type { GateResult } from "../service/poll.ts";
import type { GateField, Verdict } from "../service/verdict.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";
import { formatBound } from "../text/duration.ts";
import { ExitCode } from "../config/exit_codes.ts";

/** `triggered`: `--no-wait` started the run and did not wait for it. */
export type Outcome = Verdict["kind"];

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
export const GATE_LIMITS = { fields: 6, name: 40, value: 200 } as const;

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
  return {
    agentId,
    runId: clean(result.runId),
    status: clean(result.status),
    passed: result.passed,
    durationMs: Math.round(context.durationMs),
    url: clean(result.url),
    gate: _gateFields(result.gate, context.secrets),
    outcome: result.end.kind,
    exitCode: exitCodeOf(result.end),
    error: _error(result, context, clean),
  };
}

function _error(
  { end, runId, status }: GateResult,
  context: OutcomeContext,
  clean: (text: string | null) => string | null,
): string | null {
  switch (end.kind) {
    case "unchecked": {
      const hintContext = { duringTrigger: runId === null, runIdGiven: context.runIdGiven };
      return clean(withHint(end.reason, end.error, hintContext));
    }
    case "timed_out": {
      const last = (status === null ? "" : `; last status ${clean(status)}`) +
        (end.lastFault === null ? "" : `; last fault: ${clean(end.lastFault)}`);
      const what = runId === null ? "before the run was triggered" : "before a verdict";
      return `the timeout of ${formatBound(context.timeoutMs)} ran out ${what}${last}`;
    }
    case "interrupted":
      return `interrupted by ${_interruptSignal(end.reason)}`;
    default:
      return null;
  }
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

// The process's code: the first of these any agent has (an interrupt, 2, 3, 4, 1, 0; contract §5).
const { Sigterm, Sigint, Usage, Unchecked, TimedOut, Failed, Passed } = ExitCode;
const PRECEDENCE: readonly number[] = [Sigterm, Sigint, Usage, Unchecked, TimedOut, Failed, Passed];

export function combineExitCodes(codes: readonly number[]): number {
  if (codes.length === 0) throw new RangeError("combineExitCodes() needs at least one code");
  const unknown = codes.filter((code) => !PRECEDENCE.includes(code));
  if (unknown.length > 0) {
    throw new RangeError(`combineExitCodes() got unknown codes: ${unknown.join(", ")}`);
  }
  return PRECEDENCE.find((code) => codes.includes(code))!;
}

/** Contract §5's precedence; `--warn-only` turns a failed gate (and only that) into 0. */
export function decideExitCode(
  agents: readonly { readonly exitCode: number }[],
  options: { readonly warnOnly: boolean; readonly reportUndelivered: boolean },
): number {
  const combined = combineExitCodes(agents.map((agent) => agent.exitCode));
  const code = options.warnOnly && combined === Failed ? Passed : combined;
  // A verdict that did not reach a report asked for is a gate that could not be checked.
  return options.reportUndelivered && (code === Passed || code === Failed) ? Unchecked : code;
}

export function exitCodeOf(verdict: Verdict): number {
  if (verdict.kind !== "interrupted") return _OUTCOME_CODES[verdict.kind];
  return _interruptSignal(verdict.reason) === "SIGINT" ? Sigint : Sigterm;
}

/** The outcome an exit code tells of (a headline's), the first in the table: 0 is `passed`. */
export function outcomeOfExitCode(code: number): Outcome | undefined {
  if (code === Sigint || code === Sigterm) return "interrupted";
  const outcomes = Object.keys(_OUTCOME_CODES) as (keyof typeof _OUTCOME_CODES)[];
  return outcomes.find((outcome) => _OUTCOME_CODES[outcome] === code);
}

/** An abort that is not the user's interrupt (no signal named) reads as SIGINT. */
function _interruptSignal(reason: unknown): InterruptSignal {
  return reason instanceof Interrupted ? reason.signal : "SIGINT";
}

const _OUTCOME_CODES: Readonly<Record<Exclude<Verdict["kind"], "interrupted">, number>> = {
  passed: Passed,
  failed: Failed,
  triggered: Passed,
  unchecked: Unchecked,
  timed_out: TimedOut,
};
