/** The result of one agent's gate and of the invocation: what every report is fed. */

import type { CiMetadata } from "../ci/detect.ts";
import { exitCodeOf, interruptSignal } from "./exit_code.ts";
import { withHint } from "../service/hint.ts";
import type { GateResult } from "../service/poll.ts";
import type { GateField, Verdict } from "../service/verdict.ts";
import { maskSecrets, sanitize } from "../text/sanitize.ts";

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
      return `the timeout of ${formatMinutes(context.timeoutMs)} min ran out ${what}${last}`;
    }
    case "interrupted":
      return `interrupted by ${interruptSignal(end.reason)}`;
    default:
      return null;
  }
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
