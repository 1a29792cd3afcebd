/**
 * The exit codes of contract §5, decided here alone: one agent's from its verdict, and the
 * process's from every agent's, `--warn-only` and whether a report asked for was delivered.
 */

import { Interrupted, type InterruptSignal } from "../platform/signals.ts";
import type { Verdict } from "../service/verdict.ts";

export const ExitCode = {
  Passed: 0,
  Failed: 1,
  /** No request was sent. */
  Usage: 2,
  Unchecked: 3,
  TimedOut: 4,
  Sigint: 130,
  /** SIGHUP too: not the shell's 129, since `v1` adds no exit code (docs/compatibility.md). */
  Sigterm: 143,
} as const;

// With several agents the first code of this list that any agent has is the process's code:
// an interrupt, then 2, 3, 4, 1, 0 (contract §5).
const PRECEDENCE: readonly number[] = [
  ExitCode.Sigterm,
  ExitCode.Sigint,
  ExitCode.Usage,
  ExitCode.Unchecked,
  ExitCode.TimedOut,
  ExitCode.Failed,
  ExitCode.Passed,
];

export function combineExitCodes(codes: readonly number[]): number {
  if (codes.length === 0) throw new RangeError("combineExitCodes() needs at least one code");
  const unknown = codes.filter((code) => !(Object.values(ExitCode) as number[]).includes(code));
  if (unknown.length > 0) {
    throw new RangeError(`combineExitCodes() got unknown codes: ${unknown.join(", ")}`);
  }
  // Every code is known, so one of the list applies.
  return PRECEDENCE.find((code) => codes.includes(code))!;
}

/** Contract §5's precedence; `--warn-only` turns a failed gate (and only that) into 0. */
export function decideExitCode(
  agents: readonly { readonly exitCode: number }[],
  options: { readonly warnOnly: boolean; readonly reportUndelivered: boolean },
): number {
  const combined = combineExitCodes(agents.map((agent) => agent.exitCode));
  const code = options.warnOnly && combined === ExitCode.Failed ? ExitCode.Passed : combined;
  // A verdict that did not reach a report asked for is a gate that could not be checked.
  return options.reportUndelivered && (code === ExitCode.Passed || code === ExitCode.Failed)
    ? ExitCode.Unchecked
    : code;
}

export function exitCodeOf(verdict: Verdict<unknown>): number {
  return verdict.kind === "interrupted"
    ? _SIGNAL_CODES[interruptSignal(verdict.reason)]
    : _OUTCOME_CODES[verdict.kind];
}

/** An abort that is not the user's interrupt (no signal named) reads as SIGINT. */
export function interruptSignal(reason: unknown): InterruptSignal {
  return reason instanceof Interrupted ? reason.signal : "SIGINT";
}

const _OUTCOME_CODES: Readonly<Record<Exclude<Verdict["kind"], "interrupted">, number>> = {
  passed: ExitCode.Passed,
  failed: ExitCode.Failed,
  triggered: ExitCode.Passed,
  unchecked: ExitCode.Unchecked,
  timed_out: ExitCode.TimedOut,
};

const _SIGNAL_CODES: Readonly<Record<InterruptSignal, number>> = {
  SIGHUP: ExitCode.Sigterm,
  SIGINT: ExitCode.Sigint,
  SIGTERM: ExitCode.Sigterm,
};
